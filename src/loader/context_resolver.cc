#include "loader/context_resolver.h"

#include "util/file.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

Reference Resolve(const std::string& recorded, const std::string& what,
                  const ResolvedContextModel& ctx, const ReferencePolicy& policy) {
  Reference r;
  r.recorded = recorded;
  if (recorded.empty()) return r;
  if (ctx.dir.empty()) {
    r.readable = EPCTX_ERROR(kInvalidArgument,
                             "context model given from memory: set ep.context_file_path so that "
                             "the {} '{}' can be found",
                             what, recorded);
    return r;
  }
  r.path = JoinPath(ctx.dir, recorded);
  if (Status named = CheckPath(recorded, fmt::format("the {}", what)); !named.ok()) {
    r.readable = named;
  } else if (!policy.allow_external_paths && !StaysInsideFolder(recorded)) {
    r.readable = EPCTX_ERROR(kInvalidArgument,
                             "the {} '{}' lies outside the context model's folder '{}' "
                             "(epctx.allow_external_paths=1 allows it)",
                             what, recorded, ctx.dir);
  }
  return r;
}

std::string Describe(const compile::IoDeclaration& d) {
  std::string shape = d.has_shape ? ShapeToString(d.dims) : "of any shape";
  return fmt::format("'{}' {} {}", d.name, DataTypeName(static_cast<DataType>(d.elem_type)), shape);
}

std::string Describe(const ValueInfo& v) {
  return fmt::format("'{}' {} {}", v.name, DataTypeName(v.dtype), ShapeToString(v.shape));
}

bool Matches(const compile::IoDeclaration& d, const ValueInfo& v) {
  if (d.name != v.name) return false;
  if (d.elem_type != 0 && static_cast<DataType>(d.elem_type) != v.dtype) return false;
  if (!d.has_shape) return true;
  if (d.dims.size() != v.shape.size()) return false;
  for (size_t i = 0; i < d.dims.size(); ++i) {
    if (d.dims[i] >= 0 && v.shape[i] >= 0 && d.dims[i] != v.shape[i]) return false;
  }
  return true;
}

Status CheckList(const ResolvedContextModel& ctx, const char* what,
                 const std::vector<compile::IoDeclaration>& declared,
                 const std::vector<ValueInfo>& actual) {
  if (declared.size() != actual.size()) {
    return EPCTX_ERROR(kCorrupt,
                       "'{}' declares {} graph {}s, but the blob's model '{}' has {}: the "
                       "context model and the blob do not belong together",
                       ctx.name, declared.size(), what, ctx.node.partition_name, actual.size());
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    if (!Matches(declared[i], actual[i])) {
      return EPCTX_ERROR(kCorrupt,
                         "'{}' declares {} {} as {}, but the blob's model '{}' has {}: the context "
                         "model and the blob do not belong together",
                         ctx.name, what, i, Describe(declared[i]), ctx.node.partition_name,
                         Describe(actual[i]));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckDeclaredInterface(const ResolvedContextModel& ctx, const std::vector<ValueInfo>& inputs,
                              const std::vector<ValueInfo>& outputs) {
  EPCTX_RETURN_IF_ERROR(CheckList(ctx, "input", ctx.node.inputs, inputs));
  return CheckList(ctx, "output", ctx.node.outputs, outputs);
}

Result<std::optional<ResolvedContextModel>> ResolveContextModel(std::span<const std::byte> bytes,
                                                                const std::string& name,
                                                                const std::string& dir,
                                                                const ReferencePolicy& policy) {
  EPCTX_ASSIGN_OR_RETURN(std::optional<compile::ContextModelInfo> node,
                         compile::ParseContextModel(bytes, name));
  if (!node.has_value()) return std::optional<ResolvedContextModel>();
  ResolvedContextModel ctx;
  ctx.node = std::move(*node);
  ctx.name = name;
  ctx.dir = dir;
  if (!ctx.node.embed) {
    ctx.blob = Resolve(ctx.node.blob_reference, "blob", ctx, policy);
    if (ctx.blob.recorded.empty()) {
      ctx.blob.readable =
          EPCTX_ERROR(kInvalidArgument, "'{}': ep_cache_context names no blob", name);
    }
  }
  // From memory with no folder to resolve against, neither the blob nor the original model
  // can be found: the caller's mistake, not a reason to fall back.
  if (dir.empty() && !ctx.node.embed) {
    return Status(ctx.blob.readable.code(),
                  fmt::format("'{}': {}", name, ctx.blob.readable.message()));
  }
  ctx.original = Resolve(ctx.node.original_path, "original model", ctx, policy);
  return std::optional<ResolvedContextModel>(std::move(ctx));
}

Status CheckBlobIdentity(const ResolvedContextModel& ctx, uint64_t blob_identity) {
  std::string blob = ctx.node.embed ? "embedded blob" : fmt::format("blob '{}'", ctx.blob.path);
  if (!ctx.node.blob_identity) {
    return EPCTX_ERROR(kStale,
                       "'{}' records no blob checksum, so its {} cannot be confirmed to be the one "
                       "it was compiled with",
                       ctx.name, blob);
  }
  if (*ctx.node.blob_identity != blob_identity) {
    return EPCTX_ERROR(kStale,
                       "the {} is not the one '{}' was compiled with (blob checksum {:016x}, "
                       "recorded {:016x}): an interrupted compile or mixed-up files",
                       blob, ctx.name, blob_identity, *ctx.node.blob_identity);
  }
  return Status::Ok();
}

Status CheckOriginalUnchanged(const ResolvedContextModel& ctx, bool hash) {
  const std::string& path = ctx.original.path;
  if (path.empty()) return EPCTX_ERROR(kNotFound, "no original model is recorded");
  // A stat reads nothing, so it is made even where reading is not allowed.
  auto id = StatFile(path);
  if (!id.ok()) return EPCTX_ERROR(kNotFound, "original model '{}' not found", path);
  const compile::ContextModelInfo& n = ctx.node;
  if (n.original_size && *n.original_size != id->size) {
    return EPCTX_ERROR(kStale, "original model '{}' changed since it was compiled (size {} -> {})",
                       path, *n.original_size, id->size);
  }
  if (n.original_mtime_ns && *n.original_mtime_ns != id->mtime_ns) {
    return EPCTX_ERROR(kStale,
                       "original model '{}' changed since it was compiled (modified after "
                       "compilation)",
                       path);
  }
  if (n.original_external_data_malformed) {
    return EPCTX_ERROR(kStale, "'{}' records the original model's external data files unreadably",
                       ctx.name);
  }
  // A stat of each data file, as of the model file (the compile refused locations outside the
  // model's folder: a recorded one is stat'ed, never read).
  const std::string model_dir = DirName(path);
  for (const compile::ExternalDataRecord& r : n.original_external_data) {
    const std::string data = JoinPath(model_dir, r.location);
    auto data_id = StatFile(data);
    if (!data_id.ok()) {
      return EPCTX_ERROR(kNotFound, "external data '{}' of the original model '{}' not found", data,
                         path);
    }
    if (data_id->size != r.size || data_id->mtime_ns != r.mtime_ns) {
      return EPCTX_ERROR(kStale,
                         "external data '{}' of the original model '{}' changed since it was "
                         "compiled ({})",
                         data, path,
                         data_id->size != r.size
                             ? fmt::format("size {} -> {}", r.size, data_id->size)
                             : std::string("modified after compilation"));
    }
  }
  if (!hash) return Status::Ok();
  EPCTX_RETURN_IF_ERROR(ctx.original.readable);
  EPCTX_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  if (!n.original_hash || Hash64(file.bytes()) != *n.original_hash) {
    return EPCTX_ERROR(kStale,
                       "original model '{}' has the recorded size and mtime but not the recorded "
                       "content hash",
                       path);
  }
  for (const compile::ExternalDataRecord& r : n.original_external_data) {
    const std::string data = JoinPath(model_dir, r.location);
    if (!StaysInsideFolder(r.location)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "external data '{}' of the original model lies outside its folder: not "
                         "read",
                         r.location);
    }
    EPCTX_ASSIGN_OR_RETURN(MappedFile data_file, MappedFile::Open(data));
    if (Hash64(data_file.bytes()) != r.hash) {
      return EPCTX_ERROR(kStale,
                         "external data '{}' of the original model has the recorded size and "
                         "mtime but not the recorded content hash",
                         data);
    }
  }
  return Status::Ok();
}

}  // namespace epctx::loader
