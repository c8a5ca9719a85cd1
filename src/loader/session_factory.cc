#include "loader/session_factory.h"

#include <cstring>

#include "compile/compile_model.h"
#include "compile/context_compiler.h"
#include "compile/context_model.h"
#include "epctx/compiler.h"
#include "exec/kernel_runtime.h"
#include "loader/context_resolver.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

BlobLoadOptions BlobOptionsFrom(const EngineOptions& o) {
  return BlobLoadOptions{o.load_mode, o.verify_weights, false};
}

BlobLoadOptions CompiledHereOptions(const EngineOptions& o) {
  BlobLoadOptions b = BlobOptionsFrom(o);
  b.compiled_here = true;
  return b;
}

// Runs `step`; when profiling, records it as a Session event named `name`.
template <typename Step>
auto Profiled(Profiler* profiler, std::string_view name, Profiler::Args args, Step&& step) {
  Profiler::Clock::time_point start = Profiler::Clock::now();
  auto result = step();
  if (profiler != nullptr) profiler->RecordSession(name, start, std::move(args));
  return result;
}

Result<std::unique_ptr<SessionImpl>> BindSession(std::shared_ptr<const LoadedBlob> blob,
                                                 const std::string& partition,
                                                 const EngineOptions& options, Profiler* profiler) {
  EPCTX_ASSIGN_OR_RETURN(
      std::unique_ptr<SessionImpl> impl,
      Profiled(profiler, "program_binding", {{"partition_name", partition}}, [&] {
        return SessionImpl::Bind(std::move(blob), partition, options.intra_op_num_threads,
                                 options.prepare_kernels);
      }));
  impl->set_max_loop_iterations(options.max_loop_iterations);
  impl->set_max_value_bytes(options.max_value_bytes);
  return impl;
}

Result<std::shared_ptr<const LoadedBlob>> LoadCompiled(AlignedBuffer bytes, const std::string& name,
                                                       const EngineOptions& options,
                                                       Profiler* profiler) {
  return Profiled(profiler, "blob_load", {{"blob", name}}, [&] {
    return LoadBlobFromBuffer(std::move(bytes), name, CompiledHereOptions(options));
  });
}

// The session from the context model's blob. The original model is only compared (stat), not
// read: hashing it would make load O(model bytes).
Result<std::unique_ptr<SessionImpl>> FromContext(const ResolvedContextModel& ctx,
                                                 const ModelSource& source,
                                                 const EngineOptions& options, Profiler* profiler) {
  Status unchanged = CheckOriginalUnchanged(ctx);
  if (unchanged.code() == StatusCode::kStale) return unchanged;
  if (!unchanged.ok()) {
    // Shipping only the context model and blob is normal; nothing to compare against.
    Logger().debug("'{}': not checking staleness: {}", source.name, unchanged.message());
  }
  std::shared_ptr<const LoadedBlob> blob;
  Profiler::Args args = {{"load_mode", LoadModeName(options.load_mode)}};
  if (ctx.node.embed) {
    args.emplace_back("blob", "(embedded in the context model)");
    EPCTX_ASSIGN_OR_RETURN(
        blob, Profiled(profiler, "blob_load", std::move(args),
                       [&]() -> Result<std::shared_ptr<const LoadedBlob>> {
                         const std::string& bytes = ctx.node.embedded_blob;
                         AlignedBuffer buffer(bytes.size(), AlignedBuffer::Fill::kUninitialized);
                         if (!buffer.valid()) {
                           return EPCTX_ERROR(kInternal, "out of memory for the embedded blob");
                         }
                         std::memcpy(buffer.data(), bytes.data(), bytes.size());
                         return LoadBlobFromBuffer(std::move(buffer),
                                                   source.name + " (embedded blob)",
                                                   BlobOptionsFrom(options));
                       }));
  } else {
    EPCTX_RETURN_IF_ERROR(ctx.blob.readable);
    const Profiler::Clock::time_point start = Profiler::Clock::now();
    Result<std::shared_ptr<const LoadedBlob>> acquired =
        BlobRegistry::Global().Acquire(ctx.blob.path, BlobOptionsFrom(options));
    if (profiler != nullptr) {
      // The mode the blob was loaded in (auto resolved), and the option when it was auto.
      if (acquired.ok() && options.load_mode == LoadMode::kAuto) {
        args = {{"load_mode", LoadModeName((*acquired)->load_mode())},
                {"load_mode_option", "auto"}};
      }
      args.emplace_back("blob", ctx.blob.path);
      profiler->RecordSession("blob_load", start, std::move(args));
    }
    EPCTX_ASSIGN_OR_RETURN(blob, std::move(acquired));
  }
  const LoadMode loaded_mode = blob->load_mode();
  EPCTX_RETURN_IF_ERROR(CheckBlobIdentity(ctx, blob->view().header().header_checksum));
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<SessionImpl> impl,
                         BindSession(std::move(blob), ctx.node.partition_name, options, profiler));
  EPCTX_RETURN_IF_ERROR(CheckDeclaredInterface(ctx, impl->inputs(), impl->outputs()));
  if (!ctx.node.embed) impl->origin().load_mode = LoadModeName(loaded_mode);
  return impl;
}

// The passes of a session's compile of its original model. epctx.precision=bf16 where oneDNN has
// no bf16 kernels (the case of a bf16 blob refused by this CPU, whose session falls back to the
// original) computes in float32, saying so.
compile::PassOptions SessionPassOptions(const EngineOptions& options) {
  compile::PassOptions passes;
  if (!options.compile.compute_bf16) return passes;
  if (exec::CanComputeInBf16()) {
    passes.compute_bf16 = true;
  } else {
    Logger().warn(
        "epctx.precision=bf16: this CPU has no avx512_bf16 (or epctx.target_isa is below "
        "it); the session computes in float32");
  }
  return passes;
}

Result<std::unique_ptr<SessionImpl>> FromOriginalFile(const std::string& path,
                                                      const EngineOptions& options,
                                                      Profiler* profiler) {
  std::string partition = compile::PartitionNameFor(path);
  EPCTX_ASSIGN_OR_RETURN(
      compile::MemoryBlob compiled, Profiled(profiler, "model_compile", {{"model", path}}, [&] {
        return compile::CompileFileToMemory(path, partition, SessionPassOptions(options),
                                            options.compile.import);
      }));
  EPCTX_ASSIGN_OR_RETURN(
      std::shared_ptr<const LoadedBlob> blob,
      LoadCompiled(std::move(compiled.bytes), path + " (compiled in memory)", options, profiler));
  return BindSession(std::move(blob), partition, options, profiler);
}

Result<std::unique_ptr<SessionImpl>> FromOriginalBytes(const ModelSource& source,
                                                       const EngineOptions& options,
                                                       Profiler* profiler) {
  std::string partition = "model";
  EPCTX_ASSIGN_OR_RETURN(
      compile::MemoryBlob compiled,
      Profiled(profiler, "model_compile", {{"model", source.name}}, [&] {
        // ONNX Runtime's key for where a model from bytes finds its
        // external data serves sessions as it serves compiles.
        const std::string& data_dir = options.compile.external_data_folder.empty()
                                          ? source.dir
                                          : options.compile.external_data_folder;
        return compile::CompileBytesToMemory(source.bytes, source.name, data_dir, partition,
                                             SessionPassOptions(options), options.compile.import);
      }));
  EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const LoadedBlob> blob,
                         LoadCompiled(std::move(compiled.bytes),
                                      source.name + " (compiled in memory)", options, profiler));
  return BindSession(std::move(blob), partition, options, profiler);
}

// An original model: compiled in memory, or with ep.context_enable=1 compiled to a context model
// on disk which is then loaded like any other.
Result<std::unique_ptr<SessionImpl>> FromOriginal(const ModelSource& source,
                                                  const EngineOptions& options,
                                                  Profiler* profiler) {
  if (!options.context_enable) {
    std::unique_ptr<SessionImpl> impl;
    if (!source.path.empty()) {
      EPCTX_ASSIGN_OR_RETURN(impl, FromOriginalFile(source.path, options, profiler));
    } else {
      EPCTX_ASSIGN_OR_RETURN(impl, FromOriginalBytes(source, options, profiler));
    }
    impl->origin().original_model_path = source.path;
    return impl;
  }
  if (source.path.empty()) {
    return EPCTX_ERROR(kUnsupported,
                       "ep.context_enable=1 needs the original model as a file, "
                       "not from memory");
  }
  std::string ctx_path = options.compile.context_file_path;
  if (ctx_path.empty()) {
    ctx_path = DefaultContextModelPathFor(source.path);
  }
  // The session's own context model and blob: not part of a shared group (the sharing options
  // are for ModelCompiler's calls).
  compile::CompileOptions compile_options = options.compile;
  compile_options.share_ep_contexts = false;
  compile_options.stop_share_ep_contexts = false;
  compile_options.compute_bf16 = SessionPassOptions(options).compute_bf16;
  EPCTX_RETURN_IF_ERROR(Profiled(
      profiler, "model_compile", {{"model", source.path}, {"context_model", ctx_path}}, [&] {
        return compile::CompileToContextModel(compile_options, {source.path, {}},
                                              {ctx_path, nullptr})
            .status();
      }));
  EPCTX_ASSIGN_OR_RETURN(MappedFile ctx_file, MappedFile::Open(ctx_path));
  ModelSource ctx_source{ctx_file.bytes(), ctx_path, DirName(ctx_path), ctx_path};
  EngineOptions no_write = options;
  no_write.context_enable = false;
  return CreateSession(ctx_source, no_write, profiler);
}

}  // namespace

Result<std::unique_ptr<SessionImpl>> CreateSession(const ModelSource& source,
                                                   const EngineOptions& options,
                                                   Profiler* profiler) {
  // ORT's names for reading the model from a path or from bytes.
  EPCTX_ASSIGN_OR_RETURN(
      std::optional<ResolvedContextModel> ctx,
      Profiled(profiler, source.path.empty() ? "model_loading_array" : "model_loading_uri",
               {{"model", source.name}}, [&] {
                 return ResolveContextModel(source.bytes, source.name, source.dir,
                                            ReferencePolicy{options.allow_external_paths});
               }));
  if (!ctx.has_value()) return FromOriginal(source, options, profiler);

  const std::string& original_path = ctx->original.path;
  auto from_blob = FromContext(*ctx, source, options, profiler);
  // Escaped: a reference read from the context model may hold a NUL or a line break.
  std::string blob_name =
      ctx->node.embed ? "(embedded in the context model)"
                      : fmt::format("'{}'", EscapedPath(ctx->blob.path.empty() ? ctx->blob.recorded
                                                                               : ctx->blob.path));
  if (from_blob.ok()) {
    SessionOrigin& origin = (*from_blob)->origin();
    origin.from_context_blob = true;
    origin.context_model_path = source.path;
    origin.blob_path = ctx->node.embed ? "" : ctx->blob.path;
    origin.original_model_path = original_path;
    return from_blob;
  }
  const Status& why = from_blob.status();
  if (options.fallback == FallbackPolicy::kDeny) {
    return Status(why.code(), fmt::format("'{}': the context blob {} cannot be used, and "
                                          "epctx.fallback=deny: {}",
                                          source.name, blob_name, why.message()));
  }
  if (ctx->original.recorded.empty()) {
    return Status(why.code(), fmt::format("'{}': the context blob {} cannot be used ({}), and no "
                                          "original model is known to fall back to",
                                          source.name, blob_name, why.message()));
  }
  Status fallback_status = ctx->original.readable;
  std::unique_ptr<SessionImpl> fallback;
  if (fallback_status.ok()) {
    Logger().warn("'{}': context blob {} not used: {}; falling back to the original model '{}'",
                  source.name, blob_name, why.message(), original_path);
    auto compiled = FromOriginalFile(original_path, options, profiler);
    if (compiled.ok()) {
      fallback = std::move(*compiled);
    } else {
      fallback_status = compiled.status();
    }
  }
  if (fallback == nullptr) {
    return EPCTX_ERROR(kFailedPrecondition,
                       "'{}' cannot be loaded: context blob {}: {}; original model '{}': {}",
                       source.name, blob_name, why.message(),
                       EscapedPath(original_path.empty() ? ctx->original.recorded : original_path),
                       fallback_status.message());
  }
  SessionOrigin& origin = fallback->origin();
  origin.from_context_blob = false;
  origin.context_model_path = source.path;
  origin.original_model_path = original_path;
  origin.fallback_reason = why.ToString();
  return fallback;
}

}  // namespace epctx::loader
