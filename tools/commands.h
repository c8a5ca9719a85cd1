// The `epctx` subcommands and what main() needs to know about them.
//
// Adding a subcommand: write tools/<name>_command.cc defining
//   Command Add<Name>Command(CLI::App& parent, const GlobalOptions& global)
// which adds the subcommand to `parent` and returns the action that runs it, then add one line to
// the list at the end of this file.
#pragma once

#include <functional>

#include "epctx/status.h"

namespace CLI {
class App;
}

namespace epctx::cli {

// Options of `epctx` itself (given before or after the subcommand), set while parsing.
struct GlobalOptions {
  int verbosity = 0;  // number of -v flags: 1 = info, 2 or more = debug
};

struct Command {
  CLI::App* app = nullptr;      // the subcommand, owned by the top-level app
  std::function<Status()> run;  // called once the whole command line parsed, if `app` was chosen
};

using CommandFactory = Command (*)(CLI::App& parent, const GlobalOptions& global);

Command AddCompileCommand(CLI::App& parent, const GlobalOptions& global);
Command AddRunCommand(CLI::App& parent, const GlobalOptions& global);
Command AddPerfCommand(CLI::App& parent, const GlobalOptions& global);
Command AddCompareCommand(CLI::App& parent, const GlobalOptions& global);
Command AddConformanceCommand(CLI::App& parent, const GlobalOptions& global);
Command AddInspectCommand(CLI::App& parent, const GlobalOptions& global);
Command AddVerifyCommand(CLI::App& parent, const GlobalOptions& global);

// Every subcommand, in the order `epctx --help` lists them.
// clang-format off
inline constexpr CommandFactory kCommands[] = {
    &AddCompileCommand,
    &AddRunCommand,
    &AddPerfCommand,
    &AddInspectCommand,
    &AddVerifyCommand,
    &AddCompareCommand,
    &AddConformanceCommand,
};
// clang-format on

}  // namespace epctx::cli
