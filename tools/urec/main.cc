// urec: the unirecord command-line tool. Subcommands register themselves
// (see command.h); this file parses, dispatches and is the one place a
// Status becomes a message on stderr and an exit code.
#include <cerrno>
#include <cstdio>
#include <cctype>
#include <cstdlib>
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
  if (status.ok()) return kExitOk;
  // An unusable value or an unknown field name on the command line is bad usage.
  const bool usage = status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kKeyNotFound;
  if (status.code() == StatusCode::kUnavailable) return kExitRemote;
  return usage ? kExitUsage : kExitFailure;
}

Result<uint64_t> ParseByteSize(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") scale = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") scale = 1024.0 * 1024 * 1024 * 1024;
  if (end == text.c_str() || !(value > 0) || scale == 0 || value * scale < 1 || value * scale > 1e18) {
    return Status::InvalidArgument("--shard-size: '" + text +
                                   "' is not a size from 1 byte to 1e18 bytes (e.g. 1000000, 512M, 1G)");
  }
  return static_cast<uint64_t>(value * scale);
}

CLI::Validator IntegerIn(long long min, unsigned long long max) {
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const bool negative = !text.empty() && text[0] == '-';
        const std::string digits = text.substr(negative ? 1 : 0);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
          return "'" + text + "' is not a whole number (" + range + ")";
        }
        errno = 0;
        const unsigned long long magnitude = std::strtoull(digits.c_str(), nullptr, 10);
        const bool in_range =
            errno != ERANGE &&
            (negative ? magnitude == 0 || (min < 0 && magnitude - 1 <= static_cast<unsigned long long>(-(min + 1)))
                      : magnitude <= max && (min <= 0 || magnitude >= static_cast<unsigned long long>(min)));
        return in_range ? std::string() : "'" + text + "' is out of range " + range;
      },
      "INT in " + range);
}

CLI::Validator RealIn(double min, double max) {
  char range[64];
  std::snprintf(range, sizeof(range), "%g..%g", min, max);
  return CLI::Validator(
      [min, max, range = std::string(range)](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(value == value)) {
          return "'" + text + "' is not a number (" + range + ")";
        }
        return value >= min && value <= max ? std::string() : "'" + text + "' is out of range " + range;
      },
      "NUMBER in " + std::string(range));
}

CLI::Option* AddDefaultOption(CLI::App* cmd, std::vector<std::string>* pairs, const std::string& description) {
  return cmd->add_option("--default", *pairs, "FIELD=VALUE (VALUE in JSON: score=0, tag='\"none\"'; repeat for each "
                                              "field): " + description);
}

Result<std::string> DefaultsObject(const std::vector<std::string>& pairs) {
  std::string object;
  for (const std::string& pair : pairs) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--default " + MessageText(pair) + ": expected FIELD=VALUE");
    }
    // The name as a JSON string (the value is JSON already).
    std::string name;
    for (const char c : pair.substr(0, eq)) {
      if (c == '"' || c == '\\') {
        name += '\\';
        name += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
        name += escaped;
      } else {
        name += c;
      }
    }
    object += (object.empty() ? "{\"" : ", \"") + name + "\": " + pair.substr(eq + 1);
  }
  return object.empty() ? object : object + "}";
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      message = std::string("unknown subcommand '") + argv[1] + "' (one of:";
      for (const Registered& r : Registry()) message += std::string(" ") + r.name;
      message += ")";
    }
    std::fprintf(stderr, "urec: error: %s (urec --help, or urec SUBCOMMAND --help, lists the options)\n",
                 message.c_str());
    return kExitUsage;
  }
  for (auto& [sub, run] : commands) {
    if (!sub->parsed()) continue;
    unirecord::Status status = run();
    if (!status.ok()) {
      std::fprintf(stderr, "urec %s: error: %s\n", sub->get_name().c_str(),
                   status.message().c_str());
    }
    return ExitCodeFor(status);
  }
  return kExitUsage;
}
