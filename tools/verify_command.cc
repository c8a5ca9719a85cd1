// `epctx verify MODEL_ctx.onnx | BLOB.epctx [--hash-original]`: every check a load makes plus the
// ones it leaves out to stay fast: each weight's checksum, binding every program to this build's
// kernels, and the state of the original model. Exit status 1 when a check fails.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "epctx/inspect.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

struct VerifyArgs {
  std::string path;
  bool hash_original = false;
};

Status RunVerify(const VerifyArgs& args) {
  VerifyOptions options;
  options.hash_original = args.hash_original;
  EPCTX_ASSIGN_OR_RETURN(std::vector<VerifyCheck> checks, VerifyModel(args.path, options));
  size_t failed = 0;
  for (const VerifyCheck& c : checks) {
    std::printf("%-7s %s: %s\n", c.passed ? "ok" : "FAILED", c.what.c_str(), c.detail.c_str());
    if (!c.passed) failed++;
  }
  if (failed > 0) {
    return EPCTX_ERROR(kCorrupt, "'{}': {} of {} checks failed", args.path, failed, checks.size());
  }
  std::printf("verified: %s\n", args.path.c_str());
  return Status::Ok();
}

}  // namespace

Command AddVerifyCommand(CLI::App& parent, const GlobalOptions&) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* app = parent.add_subcommand(
      "verify",
      "Check a context model and its blob completely: structure, target, every weight's "
      "checksum, every program bound to this build's kernels, and the size and mtime of the "
      "original model and its external data files. Exit status 1 when a check fails");
  app->add_option("model", args->path, "A context model (NAME_ctx.onnx) or a blob file")
      ->required();
  app->add_flag("--hash-original", args->hash_original,
                "Also compare the content hashes of the original model and its external data files "
                "with the recorded ones (reads them whole)");
  return Command{app, [args]() { return RunVerify(*args); }};
}

}  // namespace epctx::cli
