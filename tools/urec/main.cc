// urec: the unirecord command-line tool. Subcommands register themselves
// (see command.h); this file parses, dispatches and is the one place a
// Status becomes a message on stderr and an exit code.
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"

namespace unirecord::cli {
namespace {

struct Registered {
  const char* name;
  const char* description;
  CommandSetup setup;
};

std::vector<Registered>& Registry() {
  static std::vector<Registered> registry;  // filled before main() runs
  return registry;
}

}  // namespace

bool RegisterCommand(const char* name, const char* description, CommandSetup setup) {
  Registry().push_back({name, description, setup});
  return true;
}

int ExitCodeFor(const Status& status) {
  if (status.ok()) return 0;
  return status.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace unirecord::cli

int main(int argc, char** argv) {
  using namespace unirecord::cli;
  CLI::App app{"urec: build, inspect and read unirecord datasets"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "urec 0.1.0");
  std::vector<std::pair<CLI::App*, CommandRunner>> commands;
  for (const Registered& r : Registry()) {
    CLI::App* sub = app.add_subcommand(r.name, r.description);
    commands.emplace_back(sub, r.setup(sub));
  }
  CLI11_PARSE(app, argc, argv);
  for (auto& [sub, run] : commands) {
    if (!sub->parsed()) continue;
    unirecord::Status status = run();
    if (!status.ok()) {
      std::fprintf(stderr, "urec %s: error: %s\n", sub->get_name().c_str(),
                   status.message().c_str());
    }
    return ExitCodeFor(status);
  }
  return 2;
}
