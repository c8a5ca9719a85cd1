#include "format/program_dataflow.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/tensor.h"
#include "program_generated.h"
#include "util/status_macros.h"

namespace epctx::format {
namespace {

constexpr int64_t kNeverWritten = -1;
constexpr int64_t kLiveToTheEnd = std::numeric_limits<int64_t>::max();

std::string_view NameOf(const fb::Program& program, int32_t v) {
  return program.values()->Get(static_cast<uint32_t>(v))->name()->string_view();
}

std::string NodeLabel(const fb::Node& node, uint32_t n) {
  std::string_view name = node.name() ? node.name()->string_view() : std::string_view();
  return fmt::format("node {} ({} '{}')", n, node.op_type()->string_view(), name);
}

template <typename T>
std::span<const T> SpanOf(const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return {};
  return {v->data(), v->size()};
}

// Arena ranges of the values live at one moment, kept disjoint: offset -> end.
class LiveRanges {
 public:
  // Adds [offset, end); the value it overlaps when there is one.
  std::optional<int32_t> Add(uint64_t offset, uint64_t end, int32_t value) {
    auto next = ranges_.lower_bound(offset);
    if (next != ranges_.end() && next->first < end) return next->second.value;
    if (next != ranges_.begin()) {
      auto prev = std::prev(next);
      if (prev->second.end > offset) return prev->second.value;
    }
    ranges_.emplace_hint(next, offset, Range{end, value});
    return std::nullopt;
  }
  void Remove(uint64_t offset) { ranges_.erase(offset); }

 private:
  struct Range {
    uint64_t end;
    int32_t value;
  };
  std::map<uint64_t, Range> ranges_;
};

// Per value, the root of the group of values that are one piece of arena memory (itself when
// none): a view node's output 0 joins its input 0's group when both have exactly the same range,
// and a Concat's inputs written in place join its output's (below). A group's range is its
// root's, which holds every member's; it is live from its first write to its last read.
std::vector<int32_t> MemoryGroups(const fb::Program& program) {
  const uint32_t value_count = program.values() ? program.values()->size() : 0;
  std::vector<int32_t> root(value_count);
  for (uint32_t v = 0; v < value_count; ++v) root[v] = static_cast<int32_t>(v);
  auto find = [&](int32_t v) {
    while (root[static_cast<size_t>(v)] != v) v = root[static_cast<size_t>(v)];
    return v;
  };
  const uint32_t node_count = program.nodes() ? program.nodes()->size() : 0;
  for (uint32_t n = 0; n < node_count; ++n) {
    const fb::Node& node = *program.nodes()->Get(n);
    if (!IsViewOp(node.domain() ? node.domain()->string_view() : std::string_view(),
                  node.op_type()->string_view()) ||
        node.inputs() == nullptr || node.outputs() == nullptr || node.inputs()->size() == 0 ||
        node.outputs()->size() == 0) {
      continue;
    }
    const int32_t in = node.inputs()->Get(0), out = node.outputs()->Get(0);
    if (in < 0 || out < 0) continue;
    const fb::Value* a = program.values()->Get(static_cast<uint32_t>(in));
    const fb::Value* b = program.values()->Get(static_cast<uint32_t>(out));
    if (a->arena_offset() < 0 || a->arena_offset() != b->arena_offset() ||
        a->arena_bytes() != b->arena_bytes()) {
      continue;
    }
    const int32_t ra = find(in), rb = find(out);
    if (ra != rb) root[static_cast<size_t>(rb)] = ra;
  }
  // A Concat's inputs written in place (the compiler's choice when each is a whole block of the
  // output): each input's range is exactly where the copy would put it, and together they fill
  // the output's range. They join the output's group, whose range is the output's; anything else
  // inside that range while the group is live is an overlap.
  for (uint32_t n = 0; n < node_count; ++n) {
    const fb::Node& node = *program.nodes()->Get(n);
    if ((node.domain() != nullptr && !node.domain()->string_view().empty()) ||
        node.op_type()->string_view() != "Concat" || node.inputs() == nullptr ||
        node.outputs() == nullptr || node.inputs()->size() == 0 || node.outputs()->size() != 1) {
      continue;
    }
    const int32_t out = node.outputs()->Get(0);
    if (out < 0) continue;
    const fb::Value* y = program.values()->Get(static_cast<uint32_t>(out));
    if (y->arena_offset() < 0) continue;
    // In range of the arena (ValidateProgram), so these sums cannot wrap.
    uint64_t at = static_cast<uint64_t>(y->arena_offset());
    bool in_place = true;
    for (uint32_t i = 0; in_place && i < node.inputs()->size(); ++i) {
      const int32_t in = node.inputs()->Get(i);
      const fb::Value* x = in < 0 ? nullptr : program.values()->Get(static_cast<uint32_t>(in));
      in_place = x != nullptr && in != out && x->arena_offset() >= 0 &&
                 static_cast<uint64_t>(x->arena_offset()) == at;
      if (in_place) at += static_cast<uint64_t>(x->arena_bytes());
    }
    if (!in_place ||
        at != static_cast<uint64_t>(y->arena_offset()) + static_cast<uint64_t>(y->arena_bytes())) {
      continue;
    }
    for (uint32_t i = 0; i < node.inputs()->size(); ++i) {
      const int32_t whole = find(out), part = find(node.inputs()->Get(i));
      if (whole != part) root[static_cast<size_t>(part)] = whole;
    }
  }
  for (uint32_t v = 0; v < value_count; ++v) root[v] = find(static_cast<int32_t>(v));
  return root;
}

// Values with arena bytes that are live at the same time must not share them, except the members
// of one group. `written[v]` is the node writing v, `last_read[v]` the last node reading it
// (kLiveToTheEnd for outputs).
Status CheckArenaOverlaps(const fb::Program& program, const std::vector<int64_t>& written,
                          const std::vector<int64_t>& last_read) {
  const uint32_t node_count = program.nodes() ? program.nodes()->size() : 0;
  const std::vector<int32_t> group = MemoryGroups(program);
  // Per group (indexed by its root): first write and last read over its members.
  std::vector<int64_t> first(written.size(), kNeverWritten), last(written.size(), kNeverWritten);
  for (uint32_t v = 0; v < written.size(); ++v) {
    const fb::Value* value = program.values()->Get(v);
    if (value->arena_offset() < 0 || value->arena_bytes() == 0) continue;
    if (written[v] == kNeverWritten) continue;  // refused by the caller
    const auto g = static_cast<size_t>(group[v]);
    first[g] = first[g] == kNeverWritten ? written[v] : std::min(first[g], written[v]);
    last[g] = std::max({last[g], written[v], last_read[v]});
  }
  // Per node: the arena groups that start being live there, and those that end there.
  std::vector<std::vector<int32_t>> starts(node_count), ends(node_count);
  for (uint32_t g = 0; g < written.size(); ++g) {
    if (first[g] == kNeverWritten) continue;
    starts[static_cast<size_t>(first[g])].push_back(static_cast<int32_t>(g));
    if (last[g] != kLiveToTheEnd)
      ends[static_cast<size_t>(last[g])].push_back(static_cast<int32_t>(g));
  }
  LiveRanges live;
  for (uint32_t n = 0; n < node_count; ++n) {
    for (int32_t v : starts[n]) {
      const fb::Value* value = program.values()->Get(static_cast<uint32_t>(v));
      // In range of the arena (ValidateProgram), so the end cannot wrap.
      const uint64_t offset = static_cast<uint64_t>(value->arena_offset());
      const uint64_t end = offset + static_cast<uint64_t>(value->arena_bytes());
      if (std::optional<int32_t> other = live.Add(offset, end, v)) {
        const fb::Value* o = program.values()->Get(static_cast<uint32_t>(*other));
        return EPCTX_ERROR(kCorrupt,
                           "values '{}' (arena {}+{}) and '{}' (arena {}+{}) are live at the "
                           "same time at {} and share arena bytes",
                           NameOf(program, v), value->arena_offset(), value->arena_bytes(),
                           NameOf(program, *other), o->arena_offset(), o->arena_bytes(),
                           NodeLabel(*program.nodes()->Get(n), n));
      }
    }
    for (int32_t v : ends[n]) {
      live.Remove(
          static_cast<uint64_t>(program.values()->Get(static_cast<uint32_t>(v))->arena_offset()));
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsViewOp(std::string_view domain, std::string_view op_type) {
  if (!domain.empty()) return false;
  for (std::string_view view :
       {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    if (op_type == view) return true;
  }
  return false;
}

Status ValidateDataflow(const fb::Program& program) {
  const uint32_t value_count = program.values() ? program.values()->size() : 0;
  std::vector<int64_t> written(value_count, kNeverWritten);
  std::vector<int64_t> last_read(value_count, kNeverWritten);
  std::vector<uint8_t> is_input(value_count, 0);
  auto is_weight = [&](int32_t v) {
    return program.values()->Get(static_cast<uint32_t>(v))->weight() >= 0;
  };

  for (int32_t v : SpanOf(program.inputs())) {
    if (is_input[static_cast<size_t>(v)]) {
      return EPCTX_ERROR(kCorrupt, "value '{}' is listed twice as a program input",
                         NameOf(program, v));
    }
    if (is_weight(v)) {
      return EPCTX_ERROR(kCorrupt, "program input '{}' is a weight", NameOf(program, v));
    }
    is_input[static_cast<size_t>(v)] = 1;
  }
  auto available = [&](int32_t v) {
    return is_weight(v) || is_input[static_cast<size_t>(v)] ||
           written[static_cast<size_t>(v)] != kNeverWritten;
  };

  const uint32_t node_count = program.nodes() ? program.nodes()->size() : 0;
  for (uint32_t n = 0; n < node_count; ++n) {
    const fb::Node* node = program.nodes()->Get(n);
    for (int32_t v : SpanOf(node->inputs())) {
      if (v < 0) continue;
      if (!available(v)) {
        return EPCTX_ERROR(kCorrupt, "{} reads '{}' before any node writes it", NodeLabel(*node, n),
                           NameOf(program, v));
      }
      last_read[static_cast<size_t>(v)] = n;
    }
    for (int32_t v : SpanOf(node->outputs())) {
      if (v < 0) continue;
      const char* what = is_weight(v)                       ? "a weight"
                         : is_input[static_cast<size_t>(v)] ? "a program input"
                         : written[static_cast<size_t>(v)] == static_cast<int64_t>(n)
                             ? "written twice by this node"
                         : written[static_cast<size_t>(v)] != kNeverWritten
                             ? "written by an earlier node"
                             : nullptr;
      if (what != nullptr) {
        return EPCTX_ERROR(kCorrupt, "{} writes '{}', which is {}", NodeLabel(*node, n),
                           NameOf(program, v), what);
      }
      written[static_cast<size_t>(v)] = n;
    }
  }
  for (int32_t v : SpanOf(program.outputs())) {
    if (!available(v)) {
      return EPCTX_ERROR(kCorrupt, "program output '{}' is never written", NameOf(program, v));
    }
    last_read[static_cast<size_t>(v)] = kLiveToTheEnd;
  }
  for (uint32_t v = 0; v < value_count; ++v) {
    const fb::Value* value = program.values()->Get(v);
    if (value->arena_offset() >= 0 && written[v] == kNeverWritten) {
      return EPCTX_ERROR(kCorrupt, "value '{}' has an arena range but no node writes it",
                         value->name()->string_view());
    }
  }
  return CheckArenaOverlaps(program, written, last_read);
}

}  // namespace epctx::format
