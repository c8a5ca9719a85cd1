#include "exec/kernels/onednn/chunked_weight_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/onednn/blocked_gemv.h"
#include "exec/kernels/onednn/dnnl.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/primitive_cache.h"
#include "exec/kernels/onednn/primitive_memo.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

constexpr int64_t kBlockColumns = 64;  // the blocked layout's column blocks, the chunks' unit
constexpr int64_t kBlockRows = 16;     // the blocked layout pads K to a multiple

// Float32 bytes of a chunk at most (unless one block is larger): what a core's L2 holds.
constexpr int64_t kChunkBytes = 1 << 20;

// Column blocks per chunk: of the chunk sizes that fit kChunkBytes and divide the weight's
// blocks (every chunk one problem, one primitive, but for a partial last block), the largest of
// those that give the threads' busiest one the fewest blocks (3 chunks on 2 threads leave one
// idle half the time; 4 smaller ones do not).
int64_t ChunkBlocks(int64_t blocks, int64_t block_bytes, int threads) {
  const int64_t fit = std::max<int64_t>(kChunkBytes / block_bytes, 1);
  const int64_t workers = std::max(threads, 1);
  int64_t best = 1;
  int64_t best_load = (blocks + workers - 1) / workers;
  for (int64_t d = 2; d <= std::min(fit, blocks); ++d) {
    if (blocks % d != 0) continue;
    const int64_t load = (blocks / d + workers - 1) / workers * d;
    if (load <= best_load) {
      best = d;
      best_load = load;
    }
  }
  return best;
}

// The calling thread's buffer for a float32 chunk and its product (the thread scratchpad belongs
// to the primitive's run), kept for the thread's next product: ~1 MiB and m x 1 MiB / (4 k).
float* ThreadChunkBuffer(size_t floats) {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<float, Free> buffer;
  thread_local size_t capacity = 0;
  if (floats > capacity) {
    const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    buffer.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    capacity = buffer ? floats : 0;
  }
  return buffer.get();
}

// oneDNN's tag for a chunk's layout, and its name.
std::pair<dnnl::memory::format_tag, const char*> ChunkWeightTag(ChunkLayout layout) {
  using tag = dnnl::memory::format_tag;
  switch (layout) {
    case ChunkLayout::kBlocked:
      return {tag::BA16a64b, "BA16a64b"};
    case ChunkLayout::kColumns:
      return {tag::ba, "ba"};
    case ChunkLayout::kRows:
      break;
  }
  return {tag::ab, "ab"};
}

// Floats from one row (kRows) or column (kColumns) of a chunk of `columns` columns to the next;
// 0 for kBlocked. Rows a multiple of 1 KiB apart are 16 floats longer, as the blob's plain
// float32 weights are (AliasFreeRowStride): BERT-base in float16 at 1 thread on a Zen 3 (128 rows,
// 256-column chunks, per-layer medians of 10 runs, 3 alternating processes), its [768, 768]
// products took 2.40-2.50 -> 2.09-2.44 ms and its [768, 3072] ones 9.8-10.2 -> 8.7-9.7 ms.
int64_t ChunkStride(ChunkLayout layout, int64_t k, int64_t columns) {
  switch (layout) {
    case ChunkLayout::kBlocked:
      return 0;
    case ChunkLayout::kColumns:
      return k;
    case ChunkLayout::kRows:
      break;
  }
  return AliasFreeRowStride(columns);
}

// The matmul of a [m, k] by a float32 chunk [k, columns] (ChunkStride apart) into a dense
// [m, columns]: for a destination with longer rows oneDNN 2.7 has only its reference matmul. It
// runs on the one thread that calls it.
Result<std::shared_ptr<const CachedPrimitive>> ChunkPrimitive(int64_t m, int64_t k, int64_t columns,
                                                              ChunkLayout layout) {
  // Plain names, not a structured binding: clang 14 does not let the lambda below capture one.
  const std::pair<dnnl::memory::format_tag, const char*> chosen = ChunkWeightTag(layout);
  const dnnl::memory::format_tag weight_tag = chosen.first;
  const char* weight_name = chosen.second;
  const int64_t stride = ChunkStride(layout, k, columns);
  const std::string key =
      fmt::format("chunk matmul t1 m{} k{} c{} {} s{}", m, k, columns, weight_name, stride);
  return GetOrCreatePrimitive(key, [&]() -> Result<CachedPrimitive> {
    ThreadBudget budget(1);
    try {
      using dnnl::memory;
      const memory::desc src({m, k}, memory::data_type::f32, memory::format_tag::ab);
      const memory::desc wei =
          layout == ChunkLayout::kRows
              ? memory::desc({k, columns}, memory::data_type::f32, memory::dims{stride, 1})
              : memory::desc({k, columns}, memory::data_type::f32, weight_tag);
      const memory::desc dst({m, columns}, memory::data_type::f32, memory::format_tag::ab);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), attr, CpuEngine());
      CachedPrimitive out;
      out.primitive = dnnl::matmul(pd);
      out.scratchpad_bytes = pd.scratchpad_desc().get_size();
      out.implementation = std::string("onednn:") + pd.impl_info_str();
      out.weights = pd.weights_desc();
      if (out.weights != wei) {
        return EPCTX_ERROR(kUnsupported, "oneDNN's matmul here does not read {} weights",
                           weight_name);
      }
      return out;
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "creating a matmul for a chunk of weights");
    }
  });
}

// y [m, columns] (rows `ld` apart) = a [m, k] times columns [first, first + columns) of the
// weight, at most `chunk_floats` floats once filled (`layout`), on the calling thread.
Status MultiplyChunk(const CachedPrimitive& prim, const FillChunk& fill, ChunkLayout layout,
                     int64_t first, int64_t chunk_floats, int64_t m, int64_t k, int64_t columns,
                     const float* a, float* y, int64_t ld) {
  float* wide = ThreadChunkBuffer(static_cast<size_t>(chunk_floats + m * columns));
  if (wide == nullptr) {
    return EPCTX_ERROR(kInternal, "out of memory for a {}-float chunk of weights",
                       chunk_floats + m * columns);
  }
  float* out = wide + chunk_floats;  // the chunk's product, [m, columns]
  fill(first, columns, ChunkStride(layout, k, columns), wide);
  std::unordered_map<int, dnnl::memory> args;
  try {
    using dnnl::memory;
    args.emplace(DNNL_ARG_SRC,
                 Wrap(memory::desc({m, k}, memory::data_type::f32, memory::format_tag::ab), a));
    args.emplace(DNNL_ARG_WEIGHTS, Wrap(prim.weights, wide));
    args.emplace(
        DNNL_ARG_DST,
        Wrap(memory::desc({m, columns}, memory::data_type::f32, memory::format_tag::ab), out));
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "preparing a matmul of a chunk of weights");
  }
  EPCTX_RETURN_IF_ERROR(ExecutePrimitive(prim, args, 1, "a matmul of a chunk of weights"));
  for (int64_t r = 0; r < m; ++r) {
    std::memcpy(y + r * ld, out + r * columns, static_cast<size_t>(columns) * sizeof(float));
  }
  return Status::Ok();
}

}  // namespace

Status ChunkedWeightGemm(int64_t m, int64_t k, int64_t n, ChunkLayout layout, const FillChunk& fill,
                         const float* a, float* y, int threads) {
  const int64_t padded_k =
      layout == ChunkLayout::kBlocked ? (k + kBlockRows - 1) / kBlockRows * kBlockRows : k;
  const int64_t block_elements = padded_k * kBlockColumns;
  const int64_t blocks = (n + kBlockColumns - 1) / kBlockColumns;
  const int64_t chunk_blocks =
      ChunkBlocks(blocks, block_elements * static_cast<int64_t>(sizeof(float)), threads);
  const int64_t chunk_columns = chunk_blocks * kBlockColumns;
  const int64_t chunks = (blocks + chunk_blocks - 1) / chunk_blocks;
  // A full chunk's floats (the last one's are as many or fewer).
  const int64_t chunk_floats = layout == ChunkLayout::kRows
                                   ? k * ChunkStride(layout, k, chunk_columns)
                                   : chunk_blocks * block_elements;
  // Every chunk is one thread's: the threads run in one parallel region, each filling its own
  // chunks into its own buffer and multiplying them on one thread. A region per chunk, with the
  // threads woken for each, cost 0.2 ms a chunk on a 2-vCPU VM (a SmolLM prompt has ~900).
  const int64_t last_columns = n - (chunks - 1) * chunk_columns;
  EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> full,
                         ChunkPrimitive(m, k, chunk_columns, layout));
  std::shared_ptr<const CachedPrimitive> last = full;
  if (last_columns != chunk_columns) {
    EPCTX_ASSIGN_OR_RETURN(last, ChunkPrimitive(m, k, last_columns, layout));
  }
  std::mutex mutex;
  Status status;
  ParallelFor(threads, chunks, [&](int64_t chunk, int) {
    const bool is_last = chunk == chunks - 1;
    const int64_t columns = is_last ? last_columns : chunk_columns;
    Status s = MultiplyChunk(is_last ? *last : *full, fill, layout, chunk * chunk_columns,
                             chunk_floats, m, k, columns, a, y + chunk * chunk_columns, n);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mutex);
      if (status.ok()) status = std::move(s);
    }
  });
  return status;
}

Status HalfWeightGemm(const uint16_t* w, int64_t m, int64_t k, int64_t n, const float* a, float* y,
                      int threads) {
  const int64_t block_elements = (k + kBlockRows - 1) / kBlockRows * kBlockRows * kBlockColumns;
  if (PackingIsa() == format::KernelIsa::kAvx512Core) {
    return ChunkedWeightGemm(
        m, k, n, ChunkLayout::kBlocked,
        [&](int64_t first, int64_t count, int64_t /*stride*/, float* out) {
          const int64_t blocks = (count + kBlockColumns - 1) / kBlockColumns;
          WidenFloat16(w + first / kBlockColumns * block_elements, blocks * block_elements, out);
        },
        a, y, threads);
  }
  // oneDNN's AVX2 matmuls read plain weights only (a blocked one would take its reference code):
  // each block's rows are widened into the chunk's rows.
  return ChunkedWeightGemm(
      m, k, n, ChunkLayout::kRows,
      [&](int64_t first, int64_t count, int64_t stride, float* out) {
        for (int64_t c = 0; c < count; c += kBlockColumns) {
          const uint16_t* block = w + (first + c) / kBlockColumns * block_elements;
          const int64_t width = std::min(kBlockColumns, count - c);
          for (int64_t r = 0; r < k; ++r) {
            WidenFloat16(block + r * kBlockColumns, width, out + r * stride + c);
          }
        }
      },
      a, y, threads);
}

}  // namespace epctx::exec::kernels::onednn
