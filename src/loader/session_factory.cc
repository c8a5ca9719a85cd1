#include "loader/session_factory.h"

#include <cstring>

#include "compile/compile_model.h"
#include "compile/context_model.h"
#include "epctx/compiler.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

BlobLoadOptions BlobOptionsFrom(const compile::EngineOptions& o) {
  return BlobLoadOptions{o.load_mode, o.verify_weights, false};
}

BlobLoadOptions CompiledHereOptions(const compile::EngineOptions& o) {
  BlobLoadOptions b = BlobOptionsFrom(o);
  b.compiled_here = true;
  return b;
}

Result<std::unique_ptr<SessionImpl>> BindSession(std::shared_ptr<const LoadedBlob> blob,
                                                 const std::string& partition,
                                                 const compile::EngineOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(
      std::unique_ptr<SessionImpl> impl,
      SessionImpl::Bind(std::move(blob), partition, options.intra_op_num_threads));
  impl->set_max_loop_iterations(options.max_loop_iterations);
  return impl;
}

// kStale when the original model beside the context model no longer matches the recorded size
// and mtime. The content hash is not computed here: that would make load O(model bytes).
Status CheckNotStale(const compile::ContextModelInfo& ctx, const std::string& original_path) {
  if (original_path.empty()) return Status::Ok();
  auto id = StatFile(original_path);
  if (!id.ok()) {
    // Shipping only the context model and blob is normal; nothing to compare against.
    Logger().debug("original model '{}' not found; not checking staleness", original_path);
    return Status::Ok();
  }
  if (ctx.original_size && *ctx.original_size != id->size) {
    return EPCTX_ERROR(kStale, "original model '{}' changed since it was compiled (size {} -> {})",
                       original_path, *ctx.original_size, id->size);
  }
  if (ctx.original_mtime_ns && *ctx.original_mtime_ns != id->mtime_ns) {
    return EPCTX_ERROR(kStale,
                       "original model '{}' changed since it was compiled (modified "
                       "after compilation)",
                       original_path);
  }
  return Status::Ok();
}

Result<std::unique_ptr<SessionImpl>> FromContext(const compile::ContextModelInfo& ctx,
                                                 const ModelSource& source,
                                                 const std::string& original_path,
                                                 const compile::EngineOptions& options,
                                                 std::string* blob_path) {
  EPCTX_RETURN_IF_ERROR(CheckNotStale(ctx, original_path));
  std::shared_ptr<const LoadedBlob> blob;
  if (ctx.embed) {
    AlignedBuffer buffer(ctx.embedded_blob.size(), AlignedBuffer::Fill::kUninitialized);
    if (!buffer.valid()) return EPCTX_ERROR(kInternal, "out of memory for the embedded blob");
    std::memcpy(buffer.data(), ctx.embedded_blob.data(), ctx.embedded_blob.size());
    EPCTX_ASSIGN_OR_RETURN(blob,
                           LoadBlobFromBuffer(std::move(buffer), source.name + " (embedded blob)",
                                              BlobOptionsFrom(options)));
  } else {
    if (source.dir.empty()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "context model given from memory: set "
                         "ep.context_file_path so that the blob '{}' can be found",
                         ctx.blob_reference);
    }
    *blob_path = JoinPath(source.dir, ctx.blob_reference);
    EPCTX_ASSIGN_OR_RETURN(blob,
                           BlobRegistry::Global().Acquire(*blob_path, BlobOptionsFrom(options)));
  }
  return BindSession(std::move(blob), ctx.partition_name, options);
}

Result<std::unique_ptr<SessionImpl>> FromOriginalFile(const std::string& path,
                                                      const compile::EngineOptions& options) {
  std::string partition = compile::PartitionNameFor(path);
  EPCTX_ASSIGN_OR_RETURN(compile::MemoryBlob compiled,
                         compile::CompileFileToMemory(path, partition));
  EPCTX_ASSIGN_OR_RETURN(
      std::shared_ptr<const LoadedBlob> blob,
      LoadBlobFromBuffer(std::move(compiled.bytes), path + " (compiled in memory)",
                         CompiledHereOptions(options)));
  return BindSession(std::move(blob), partition, options);
}

Result<std::unique_ptr<SessionImpl>> FromOriginalBytes(const ModelSource& source,
                                                       const compile::EngineOptions& options) {
  std::string partition = "model";
  EPCTX_ASSIGN_OR_RETURN(
      compile::MemoryBlob compiled,
      compile::CompileBytesToMemory(source.bytes, source.name, source.dir, partition));
  EPCTX_ASSIGN_OR_RETURN(
      std::shared_ptr<const LoadedBlob> blob,
      LoadBlobFromBuffer(std::move(compiled.bytes), source.name + " (compiled in memory)",
                         CompiledHereOptions(options)));
  return BindSession(std::move(blob), partition, options);
}

// An original model: compiled in memory, or with ep.context_enable=1 compiled to a context model
// on disk which is then loaded like any other.
Result<std::unique_ptr<SessionImpl>> FromOriginal(const ModelSource& source,
                                                  const compile::EngineOptions& options) {
  if (!options.context_enable) {
    std::unique_ptr<SessionImpl> impl;
    if (!source.path.empty()) {
      EPCTX_ASSIGN_OR_RETURN(impl, FromOriginalFile(source.path, options));
    } else {
      EPCTX_ASSIGN_OR_RETURN(impl, FromOriginalBytes(source, options));
    }
    impl->origin().original_model_path = source.path;
    return impl;
  }
  if (source.path.empty()) {
    return EPCTX_ERROR(kUnsupported,
                       "ep.context_enable=1 needs the original model as a file, "
                       "not from memory");
  }
  std::string ctx_path = options.context_file_path;
  if (ctx_path.empty()) {
    ctx_path = JoinPath(source.dir, compile::PartitionNameFor(source.path) + "_ctx.onnx");
  }
  SessionOptions compile_options;
  if (options.embed_mode) compile_options.AddConfigEntry("ep.context_embed_mode", "1");
  if (!options.node_name_prefix.empty()) {
    compile_options.AddConfigEntry("ep.context_node_name_prefix", options.node_name_prefix);
  }
  EPCTX_RETURN_IF_ERROR(
      ModelCompiler(compile_options).CompileToFile(source.path, ctx_path).status());
  EPCTX_ASSIGN_OR_RETURN(MappedFile ctx_file, MappedFile::Open(ctx_path));
  ModelSource ctx_source{ctx_file.bytes(), ctx_path, DirName(ctx_path), ctx_path};
  compile::EngineOptions no_write = options;
  no_write.context_enable = false;
  return CreateSession(ctx_source, no_write);
}

}  // namespace

Result<std::unique_ptr<SessionImpl>> CreateSession(const ModelSource& source,
                                                   const compile::EngineOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(std::optional<compile::ContextModelInfo> ctx,
                         compile::ParseContextModel(source.bytes, source.name));
  if (!ctx.has_value()) return FromOriginal(source, options);

  std::string original_path;
  if (!ctx->original_path.empty() && !source.dir.empty()) {
    original_path = JoinPath(source.dir, ctx->original_path);
  }
  std::string blob_path;
  auto from_blob = FromContext(*ctx, source, original_path, options, &blob_path);
  std::string blob_name = ctx->embed ? "(embedded in the context model)" : "'" + blob_path + "'";
  if (from_blob.ok()) {
    SessionOrigin& origin = (*from_blob)->origin();
    origin.from_context_blob = true;
    origin.context_model_path = source.path;
    origin.blob_path = blob_path;
    origin.original_model_path = original_path;
    return from_blob;
  }
  const Status& why = from_blob.status();
  if (options.fallback == compile::FallbackPolicy::kDeny) {
    return Status(why.code(), fmt::format("'{}': the context blob {} cannot be used, and "
                                          "epctx.fallback=deny: {}",
                                          source.name, blob_name, why.message()));
  }
  if (original_path.empty()) {
    return Status(why.code(), fmt::format("'{}': the context blob {} cannot be used ({}), and no "
                                          "original model is known to fall back to",
                                          source.name, blob_name, why.message()));
  }
  Logger().warn("'{}': context blob {} not used: {}; falling back to the original model '{}'",
                source.name, blob_name, why.message(), original_path);
  auto fallback = FromOriginalFile(original_path, options);
  if (!fallback.ok()) {
    return EPCTX_ERROR(kFailedPrecondition,
                       "'{}' cannot be loaded: context blob {}: {}; original "
                       "model '{}': {}",
                       source.name, blob_name, why.message(), original_path,
                       fallback.status().message());
  }
  SessionOrigin& origin = (*fallback)->origin();
  origin.from_context_blob = false;
  origin.context_model_path = source.path;
  origin.original_model_path = original_path;
  origin.fallback_reason = why.ToString();
  return fallback;
}

}  // namespace epctx::loader
