// Subcommand registry of the `urec` tool.
//
// A subcommand lives in its own tools/urec/<name>.cc and registers itself:
//
//   static CommandRunner SetupCat(CLI::App* cmd) {
//     auto opts = std::make_shared<CatOptions>();
//     cmd->add_option("PATH", opts->path)->required();
//     return [opts] { return RunCat(*opts); };   // returns Status
//   }
//   UREC_REGISTER_COMMAND("cat", "Print one record", SetupCat);
#ifndef UNIRECORD_TOOLS_UREC_COMMAND_H_
#define UNIRECORD_TOOLS_UREC_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::cli {

// Runs the parsed command; a non-OK Status is printed by main() as the one
// error message, and becomes the exit code (ExitCodeFor).
using CommandRunner = std::function<Status()>;
// Declares the command's options on `cmd`; returns what runs it.
using CommandSetup = CommandRunner (*)(CLI::App* cmd);

bool RegisterCommand(const char* name, const char* description, CommandSetup setup);

// Exit codes (the table in docs/cli.md): 0 success; 1 failure (missing,
// unreadable, damaged or unsupported input, I/O errors); 2 bad usage (the
// command line does not parse, or a value is refused: InvalidArgument).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
// A remote dataset's server failed (HTTP status or network error) after the last retry.
inline constexpr int kExitRemote = 3;
int ExitCodeFor(const Status& status);

// Checks an integer option's text before CLI11 converts it: decimal digits
// (a leading '-' only when min < 0) within [min, max]. CLI11 alone reads "-1"
// into an unsigned option as 2^64-1 and clamps values that overflow.
CLI::Validator IntegerIn(long long min, unsigned long long max);
// The same for a floating-point option: a decimal number within [min, max]
// (no nan, no overflow). Every numeric option of every subcommand has one of
// the two (tests/cli/test_hostile.py sends each one out-of-range values).
CLI::Validator RealIn(double min, double max);

// --shard-size's text: "1000000", "64K", "512M", "1G", "2GiB", "1.5GB"
// (powers of 1024), from 1 byte to 1e18 bytes.
Result<uint64_t> ParseByteSize(const std::string& text);

// --default FIELD=VALUE (repeated, VALUE in JSON), the values of fields that
// records lack: add-field's (segments without lines), convert --append's and
// merge's (fields the dataset has and the new records lack). DefaultsObject
// makes the pairs one JSON object ("" for none; JsonFieldDefaults in
// unirecord/convert.h reads it); InvalidArgument for a pair without '='.
CLI::Option* AddDefaultOption(CLI::App* cmd, std::vector<std::string>* pairs, const std::string& description);
Result<std::string> DefaultsObject(const std::vector<std::string>& pairs);

}  // namespace unirecord::cli

#define UREC_REGISTER_COMMAND(name, description, setup)                 \
  static const bool UREC_CONCAT_(urec_command_registered_, __LINE__) = \
      ::unirecord::cli::RegisterCommand(name, description, setup)

#endif  // UNIRECORD_TOOLS_UREC_COMMAND_H_
