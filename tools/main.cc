// `epctx`: global options, subcommand dispatch, and the edge where exceptions and errors become
// exit statuses: 0 success, 1 error ("epctx: error: ..." on stderr), 2 usage error.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.h"
#include "epctx/env.h"
#include "epctx_build_info.h"
#include "util/logging.h"
#include "util/temporary_files.h"

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

epctx::LogLevel LogLevelFor(int verbosity) {
  if (verbosity >= 2) return epctx::LogLevel::kDebug;
  if (verbosity == 1) return epctx::LogLevel::kInfo;
  return epctx::LogLevel::kWarning;
}

int Main(int argc, char** argv) {
  CLI::App app("Compile ONNX models into context models with a shared context blob, and run them.",
               "epctx");
  epctx::cli::GlobalOptions global;
  app.add_flag("-v,--verbose", global.verbosity,
               "Log more to stderr (-v: info, including how a session was created; -vv: debug)");
  app.set_version_flag("--version", std::string("epctx ") + EPCTX_ENGINE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options are accepted after the subcommand too

  std::vector<epctx::cli::Command> commands;
  for (epctx::cli::CommandFactory add : epctx::cli::kCommands) {
    commands.push_back(add(app, global));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here too, with exit code 0.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  epctx::SetLogLevel(LogLevelFor(global.verbosity));
  // The library's messages in the command line's own form, like its errors ("epctx: warning:
  // ..."), instead of a log line's timestamp and logger name; a compile's warnings, which the
  // library logs as it returns them, are shown this way once.
  epctx::Logger().set_pattern("epctx: %l: %v");

  for (const epctx::cli::Command& command : commands) {
    if (!command.app->parsed()) continue;
    epctx::Status status = command.run();
    if (!status.ok()) {
      std::fprintf(stderr, "epctx: error: %s\n", status.message().c_str());
      return kExitError;
    }
    return 0;
  }
  return kExitUsage;  // not reached: require_subcommand(1) makes parse() fail without one
}

}  // namespace

int main(int argc, char** argv) {
  // A compile interrupted with Ctrl-C or SIGTERM leaves no temporary file behind.
  epctx::RemoveTemporariesOnTerminationSignals();
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "epctx: error: internal error: %s\n", e.what());
    return kExitError;
  }
}
