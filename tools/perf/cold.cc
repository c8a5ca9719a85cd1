// Reads the context model's EPContext node through the compiler's parser (the public API exposes
// the blob path only once a session exists, and creating one would warm the very files --cold is
// about to drop).
#include "perf/cold.h"

#include <fmt/format.h>

#include "compile/context_model.h"
#include "util/file.h"
#include "util/page_cache.h"
#include "util/status_macros.h"

namespace epctx::cli {

Result<ModelFiles> ResolveModelFiles(const std::string& model_path) {
  ModelFiles files;
  files.model = model_path;
  EPCTX_ASSIGN_OR_RETURN(MappedFile model, MappedFile::Open(model_path));
  EPCTX_ASSIGN_OR_RETURN(std::optional<compile::ContextModelInfo> ctx,
                         compile::ParseContextModel(model.bytes(), model_path));
  if (!ctx.has_value()) return files;  // an original model: the only file read
  std::string dir = DirName(model_path);
  if (!ctx->embed && !ctx->blob_reference.empty()) files.blob = JoinPath(dir, ctx->blob_reference);
  if (!ctx->original_path.empty()) files.original = JoinPath(dir, ctx->original_path);
  return files;
}

Result<EvictionReport> EvictModelFiles(const ModelFiles& files) {
  EvictionReport report;
  for (const std::string* path : {&files.model, &files.blob, &files.original}) {
    if (path->empty() || !StatFile(*path).ok()) continue;
    EPCTX_RETURN_IF_ERROR(EvictFromPageCache(*path));
    EPCTX_ASSIGN_OR_RETURN(Residency r, PageCacheResidency(*path));
    if (r.resident_pages > 0) {
      report.confirmed = false;
      report.unconfirmed.push_back(
          fmt::format("'{}': {} of {} pages still cached", *path, r.resident_pages, r.total_pages));
    }
  }
  return report;
}

}  // namespace epctx::cli
