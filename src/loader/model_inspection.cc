// `epctx inspect` and `epctx verify`: open a context model or blob the way a load does, then
// describe it, or run the checks a load leaves out.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "epctx/inspect.h"
#include "exec/executor.h"
#include "exec/value_decl.h"
#include "format/blob_reader.h"
#include "format/target.h"
#include "loader/context_resolver.h"
#include "loader/session_impl.h"
#include "program_generated.h"
#include "util/aligned_buffer.h"
#include "util/cpu_features.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace epctx {
namespace {

// The file named by the user and, for a context model, the blob it points at.
struct OpenedModel {
  MappedFile file;
  std::optional<EpContextInfo> context;
  MappedFile blob_file;     // a blob on disk
  AlignedBuffer blob_copy;  // an embedded blob, copied for alignment
  std::span<const std::byte> blob_bytes;
  std::string blob_name;
  std::optional<loader::ResolvedContextModel> resolved;
};

bool LooksLikeBlob(std::span<const std::byte> bytes) {
  return bytes.size() >= sizeof format::kBlobMagic &&
         std::memcmp(bytes.data(), format::kBlobMagic, sizeof format::kBlobMagic) == 0;
}

Result<std::unique_ptr<OpenedModel>> OpenModel(const std::string& path,
                                               const loader::ReferencePolicy& policy) {
  auto opened = std::make_unique<OpenedModel>();
  EPCTX_ASSIGN_OR_RETURN(opened->file, MappedFile::Open(path));
  if (LooksLikeBlob(opened->file.bytes())) {
    opened->blob_bytes = opened->file.bytes();
    opened->blob_name = path;
    return opened;
  }
  EPCTX_ASSIGN_OR_RETURN(
      std::optional<loader::ResolvedContextModel> ctx,
      loader::ResolveContextModel(opened->file.bytes(), path, DirName(path), policy));
  if (!ctx) {
    return EPCTX_ERROR(kInvalidArgument,
                       "'{}' is an original ONNX model (it has no EPContext node); compile it "
                       "with `epctx compile` first",
                       path);
  }
  EpContextInfo info;
  info.context_model_path = path;
  info.node_name = ctx->node.node_name;
  info.partition_name = ctx->node.partition_name;
  info.embedded = ctx->node.embed;
  info.original_model_path = ctx->original.path;
  info.original_size = ctx->node.original_size;
  info.original_mtime_ns = ctx->node.original_mtime_ns;
  info.original_hash = ctx->node.original_hash;
  if (ctx->node.embed) {
    const std::string& embedded = ctx->node.embedded_blob;
    opened->blob_copy = AlignedBuffer(embedded.size(), AlignedBuffer::Fill::kUninitialized);
    if (!opened->blob_copy.valid()) {
      return EPCTX_ERROR(kInternal, "out of memory for the blob embedded in '{}'", path);
    }
    std::memcpy(opened->blob_copy.data(), embedded.data(), embedded.size());
    opened->blob_bytes = opened->blob_copy.bytes();
    opened->blob_name = path + " (embedded blob)";
  } else {
    info.blob_path = ctx->blob.path;
    Status readable = ctx->blob.readable;
    auto blob = readable.ok() ? MappedFile::Open(info.blob_path) : Result<MappedFile>(readable);
    if (!blob.ok()) {
      return Status(blob.status().code(),
                    fmt::format("context model '{}' points at blob '{}': {}", path,
                                ctx->blob.recorded, blob.status().message()));
    }
    opened->blob_file = std::move(*blob);
    opened->blob_bytes = opened->blob_file.bytes();
    opened->blob_name = info.blob_path;
  }
  opened->context = std::move(info);
  opened->resolved = std::move(ctx);
  return opened;
}

Result<format::BlobView> OpenBlob(const OpenedModel& m, bool verify_weights) {
  format::OpenOptions options;
  options.available_cpu_features = DetectedCpuFeatures();
  options.check_target = false;
  options.verify_weight_checksums = verify_weights;
  return format::BlobView::Open(m.blob_bytes, m.blob_name, options);
}

std::string_view ViewOf(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

ProgramInfo DescribeProgram(const fb::Program& p) {
  ProgramInfo info;
  info.name = std::string(ViewOf(p.name()));
  info.node_count = p.nodes() ? p.nodes()->size() : 0;
  info.value_count = p.values() ? p.values()->size() : 0;
  info.input_count = p.inputs() ? p.inputs()->size() : 0;
  info.output_count = p.outputs() ? p.outputs()->size() : 0;
  info.arena_bytes = static_cast<uint64_t>(p.arena_bytes());
  for (uint32_t i = 0; i < info.value_count; ++i) {
    if (p.values()->Get(i)->weight() >= 0) info.weight_values++;
  }
  for (uint32_t n = 0; n < info.node_count; ++n) {
    const fb::Node* node = p.nodes()->Get(n);
    std::string op(node->op_type()->string_view());
    if (!ViewOf(node->domain()).empty()) op = std::string(ViewOf(node->domain())) + "." + op;
    info.op_counts[op]++;
  }
  return info;
}

BlobInfo DescribeBlob(const format::BlobView& view, const std::string& name) {
  const format::BlobHeader& h = view.header();
  BlobInfo info;
  info.name = name;
  info.file_size = h.file_size;
  info.format_version = h.format_version;
  info.engine_version =
      std::string(h.engine_version, strnlen(h.engine_version, sizeof h.engine_version));
  info.hardware_architecture = format::HardwareArchitecture(h.target);
  info.packing_build_id =
      std::string(h.target.packing_build_id,
                  strnlen(h.target.packing_build_id, sizeof h.target.packing_build_id));
  info.pack_layout_version = h.target.pack_layout_version;
  Status target = format::CheckTarget(h.target, DetectedCpuFeatures());
  if (!target.ok()) info.target_mismatch = target.message();
  for (uint32_t i = 0; i < h.section_count; ++i) {
    const format::SectionEntry& s = h.sections[i];
    static constexpr const char* kNames[] = {"", "WEIGHTS", "PROGRAMS", "MANIFEST"};
    info.sections.push_back({kNames[s.kind], s.offset, s.size});
  }
  const fb::Manifest& manifest = view.manifest();
  if (manifest.weights() != nullptr) {
    for (const fb::Weight* w : *manifest.weights()) {
      info.weight_count++;
      info.weight_bytes += w->size();
      info.weights_per_layout[w->layout()]++;
    }
  }
  for (const fb::Model* m : *manifest.models()) {
    BlobModelInfo model;
    model.name = m->name()->str();
    model.source_size = m->source_size();
    model.source_hash = m->source_hash();
    for (uint32_t i = 0; i < m->programs()->size(); ++i) {
      model.programs.push_back(DescribeProgram(*view.GetProgram(*m, i)));
    }
    info.models.push_back(std::move(model));
  }
  return info;
}

// Binds every program of every model, as sessions would: proves each node has a kernel in this
// build and accepts its attributes and static types.
VerifyCheck BindAllModels(const format::BlobView& view) {
  VerifyCheck check{"kernels", true, ""};
  size_t programs_bound = 0, nodes_bound = 0;
  for (const fb::Model* m : *view.manifest().models()) {
    for (uint32_t i = 0; i < m->programs()->size(); ++i) {
      const fb::Program* program = view.GetProgram(*m, i);
      nodes_bound += program->nodes() ? program->nodes()->size() : 0;
    }
    auto bound = exec::BoundProgram::BindModel(view, *m, 1);
    if (!bound.ok()) {
      check.passed = false;
      check.detail =
          fmt::format("model '{}': {}", m->name()->string_view(), bound.status().message());
      return check;
    }
    programs_bound += m->programs()->size();
  }
  check.detail = fmt::format("{} programs, {} nodes bound to this build's kernels", programs_bound,
                             nodes_bound);
  return check;
}

VerifyCheck CheckOriginal(const loader::ResolvedContextModel& ctx, const VerifyOptions& options) {
  VerifyCheck check{"original model", true, ""};
  const std::string& path = ctx.original.path;
  Status unchanged = loader::CheckOriginalUnchanged(ctx, options.hash_original);
  if (ctx.original.recorded.empty()) {
    check.detail = "not recorded: no fallback is possible";
  } else if (unchanged.code() == StatusCode::kNotFound) {
    check.detail =
        fmt::format("'{}' not found: the blob must serve, no fallback is possible", path);
  } else if (unchanged.code() == StatusCode::kStale && !options.hash_original) {
    // The check's name already says "original model".
    std::string_view what = unchanged.message();
    if (what.starts_with("original model ")) what.remove_prefix(std::strlen("original model "));
    check.passed = false;
    check.detail = fmt::format("{}: loads will fall back to it", what);
  } else if (!unchanged.ok()) {
    check.passed = false;
    check.detail = unchanged.message();
  } else {
    const size_t data_files = ctx.node.original_external_data.size();
    check.detail =
        fmt::format("'{}'{} matches the recorded size and mtime{}", path,
                    data_files == 0 ? ""
                                    : fmt::format(" with its {} external data file{}", data_files,
                                                  data_files == 1 ? "" : "s"),
                    options.hash_original ? " and content hash" : "");
    // Like a missing original: the blob must serve (the compile warned about it).
    if (!ctx.original.readable.ok()) {
      check.detail += "; loads cannot fall back to it: " + ctx.original.readable.message();
    }
  }
  return check;
}

// The context model's graph inputs and outputs against the blob's model.
VerifyCheck CheckInterface(const loader::ResolvedContextModel& ctx, const format::BlobView& view) {
  VerifyCheck check{"context model interface", true, ""};
  auto model = view.FindModel(ctx.node.partition_name);
  if (!model.ok()) {
    check.passed = false;
    check.detail = model.status().message();
    return check;
  }
  const fb::Program& main = *view.GetProgram(**model, 0);
  Status s =
      loader::CheckDeclaredInterface(ctx, exec::DescribeInputs(main), exec::DescribeOutputs(main));
  check.passed = s.ok();
  check.detail = s.ok() ? fmt::format("{} inputs and {} outputs match the blob's model",
                                      ctx.node.inputs.size(), ctx.node.outputs.size())
                        : s.message();
  return check;
}

// Whether the blob holds a model of the context model's partition.
VerifyCheck CheckPartition(const EpContextInfo& context, const format::BlobView& view) {
  auto model = view.FindModel(context.partition_name);
  return {"EPContext partition", model.ok(),
          model.ok() ? fmt::format("the blob holds model '{}'", context.partition_name)
                     : model.status().message()};
}

// Whether the blob is the one the context model was compiled with.
VerifyCheck CheckIdentity(const loader::ResolvedContextModel& ctx, const format::BlobView& view) {
  Status pair = loader::CheckBlobIdentity(ctx, view.header().header_checksum);
  return {"blob identity", pair.ok(),
          pair.ok() ? fmt::format("the blob is the one the context model was compiled with "
                                  "(checksum {:016x})",
                                  view.header().header_checksum)
                    : pair.message()};
}

// Why a load of the context model `m` cannot use its blob `view` (another model's blob, or a
// blob compiled again since the context model was written), or empty: the failing details of
// the checks verify makes of that tie.
std::string ContextBlobMismatch(const OpenedModel& m, const format::BlobView& view) {
  std::vector<VerifyCheck> checks = {CheckPartition(*m.context, view)};
  if (m.resolved) checks.push_back(CheckIdentity(*m.resolved, view));
  std::string why;
  for (const VerifyCheck& c : checks) {
    if (!c.passed) why += (why.empty() ? "" : "; ") + c.detail;
  }
  return why;
}

}  // namespace

Result<InspectReport> InspectModel(const std::string& path, const InspectOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<OpenedModel> m,
                         OpenModel(path, loader::ReferencePolicy{options.allow_external_paths}));
  EPCTX_ASSIGN_OR_RETURN(format::BlobView view, OpenBlob(*m, false));
  InspectReport report;
  report.context = m->context;
  report.blob = DescribeBlob(view, m->blob_name);
  if (report.context) report.context->blob_mismatch = ContextBlobMismatch(*m, view);
  return report;
}

Result<std::vector<VerifyCheck>> VerifyModel(const std::string& path,
                                             const VerifyOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<OpenedModel> m,
                         OpenModel(path, loader::ReferencePolicy{options.allow_external_paths}));
  std::vector<VerifyCheck> checks;
  auto view = OpenBlob(*m, false);
  if (!view.ok()) {
    checks.push_back({"blob structure", false, view.status().message()});
    return checks;
  }
  size_t programs = 0;
  for (const fb::Model* model : *view->manifest().models()) programs += model->programs()->size();
  checks.push_back({"blob structure", true,
                    fmt::format("header, sections, manifest and {} programs of {} models", programs,
                                view->manifest().models()->size())});
  if (m->context) checks.push_back(CheckPartition(*m->context, *view));
  Status target = format::CheckTarget(view->header().target, DetectedCpuFeatures());
  checks.push_back(
      {"target", target.ok(),
       target.ok() ? format::HardwareArchitecture(view->header().target) : target.message()});
  auto weights = OpenBlob(*m, true);
  BlobInfo info = DescribeBlob(*view, m->blob_name);
  checks.push_back({"weight checksums", weights.ok(),
                    weights.ok()
                        ? fmt::format("{} weights, {} bytes", info.weight_count, info.weight_bytes)
                        : weights.status().message()});
  if (target.ok()) {
    checks.push_back(BindAllModels(*view));
  } else {
    checks.push_back({"kernels", false, "not bound: the blob is not for this build and CPU"});
  }
  if (m->resolved) {
    checks.push_back(CheckIdentity(*m->resolved, *view));
    checks.push_back(CheckInterface(*m->resolved, *view));
    checks.push_back(CheckOriginal(*m->resolved, options));
  }
  return checks;
}

}  // namespace epctx
