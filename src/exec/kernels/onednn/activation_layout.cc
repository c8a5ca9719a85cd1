#include "exec/kernels/onednn/activation_layout.h"

#include "epctx/tensor.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

Result<ActivationLayout> ParseActivationLayout(int64_t value) {
  if (value != static_cast<int64_t>(ActivationLayout::kPlain) &&
      value != static_cast<int64_t>(ActivationLayout::kBlocked16) &&
      value != static_cast<int64_t>(ActivationLayout::kBlocked8)) {
    return EPCTX_ERROR(kInvalidArgument, "activation layout {} is not known", value);
  }
  return static_cast<ActivationLayout>(value);
}

int64_t ChannelBlock(ActivationLayout layout) {
  switch (layout) {
    case ActivationLayout::kBlocked16:
      return 16;
    case ActivationLayout::kBlocked8:
      return 8;
    case ActivationLayout::kPlain:
      break;
  }
  return 1;
}

std::vector<int64_t> PhysicalShape(std::span<const int64_t> logical, ActivationLayout layout) {
  std::vector<int64_t> out(logical.begin(), logical.end());
  if (layout == ActivationLayout::kPlain || logical.size() < 2) return out;
  const int64_t block = ChannelBlock(layout);
  out[1] = (logical[1] + block - 1) / block;
  out.push_back(block);
  return out;
}

Result<std::vector<int64_t>> LogicalShape(std::span<const int64_t> physical,
                                          ActivationLayout layout, int64_t channels) {
  std::vector<int64_t> out(physical.begin(), physical.end());
  if (layout == ActivationLayout::kPlain) return out;
  const int64_t block = ChannelBlock(layout);
  if (physical.size() < 3 || physical.back() != block || channels < 1 ||
      physical[1] != (channels + block - 1) / block) {
    return EPCTX_ERROR(kInvalidArgument,
                       "a channel-blocked tensor of {} channels cannot have shape {}", channels,
                       ShapeToString({physical.begin(), physical.end()}));
  }
  out.pop_back();
  out[1] = channels;
  return out;
}

dnnl::memory::format_tag TagFor(ActivationLayout layout, size_t rank) {
  using tag = dnnl::memory::format_tag;
  if (layout == ActivationLayout::kBlocked16) {
    return rank == 3 ? tag::nCw16c : rank == 5 ? tag::nCdhw16c : tag::nChw16c;
  }
  if (layout == ActivationLayout::kBlocked8) {
    return rank == 3 ? tag::nCw8c : rank == 5 ? tag::nCdhw8c : tag::nChw8c;
  }
  return rank == 3 ? tag::ncw : rank == 5 ? tag::ncdhw : tag::nchw;
}

}  // namespace epctx::exec::kernels::onednn
