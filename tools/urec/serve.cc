// urec serve: the dataset in the browser, read-only (unirecord/serve.h,
// docs/viewer.md).
//
//   urec serve records                 # prints http://127.0.0.1:8000/
//   urec serve s3://bucket/train --port 0 --tag paper-v1
//   urec serve records --bind 0.0.0.0  # other machines too: with a token
//
// Prints the page's address on the first line of standard output and serves
// until interrupted (SIGINT, SIGTERM).
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "command.h"
#include "dataset_json.h"
#include "unirecord/serve.h"

namespace unirecord::cli {
namespace {

struct ServeArgs {
  std::string path;
  VersionChoice version;
  RemoteOptions remote;
  ServeOptions serve;
  uint64_t cache_mb = 128;
  uint64_t page_cache_mb = 64;
  std::string box_format = "xywh";
};

Status RunServe(ServeArgs args) {
  args.serve.cache_bytes = args.cache_mb << 20;
  UREC_ASSIGN_OR_RETURN(args.serve.box_format, ParseBoxFormat(args.box_format));
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset,
                        OpenForReading(args.path, args.remote, args.version, args.page_cache_mb << 20));
  // The server's threads inherit this mask: the signals come to sigwait below.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Start(dataset, args.path, args.serve));
  std::printf("%s\n", server->url().c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "urec serve: %s (%llu records) at %s; Ctrl-C stops\n", args.path.c_str(),
               static_cast<unsigned long long>(dataset->size()), server->url().c_str());
  int signal = 0;
  sigwait(&stop, &signal);
  server->Stop();
  return Status::OK();
}

CommandRunner SetupServe(CLI::App* cmd) {
  auto args = std::make_shared<ServeArgs>();
  args->serve.port = 8000;
  cmd->add_option("DATASET", args->path, "Dataset folder, one .urec shard, a glob, or an http(s):// or s3:// location")
      ->required();
  AddRemoteOptions(cmd, &args->remote);
  AddVersionOptions(cmd, &args->version);
  cmd->add_option("--port", args->serve.port, "Port (0: any free one; the address printed says which)")
      ->capture_default_str()
      ->check(IntegerIn(0, 65535));
  cmd->add_option("--bind", args->serve.bind,
                  "Address to listen on; anything but 127.0.0.1 or ::1 needs a token (made when not given)")
      ->capture_default_str();
  cmd->add_option("--token", args->serve.token, "The token every request must carry (16..128 of A-Z a-z 0-9 _ -)");
  cmd->add_option("--threads", args->serve.threads, "Threads answering requests")
      ->capture_default_str()
      ->check(IntegerIn(1, 64));
  cmd->add_option("--cache-mb", args->cache_mb, "MiB of thumbnails, query answers and distributions kept")
      ->capture_default_str()
      ->check(IntegerIn(1, 1 << 20));
  cmd->add_option("--page-cache-mb", args->page_cache_mb,
                  "MiB of the dataset's inflated scalar pages kept (DatasetOptions::page_cache_bytes)")
      ->capture_default_str()
      ->check(IntegerIn(0, 1 << 20));
  cmd->add_option("--thumbnail-size", args->serve.thumbnail_size, "Longest side of a grid thumbnail, in pixels")
      ->capture_default_str()
      ->check(IntegerIn(32, 512));
  cmd->add_option("--box-format", args->box_format, "How a float32 (-1, 4) boxes field is given: xywh or xyxy")
      ->capture_default_str();
  return [args] { return RunServe(*args); };
}

}  // namespace

UREC_REGISTER_COMMAND("serve", "A read-only viewer of the dataset in the browser (overview, distributions, grid)",
                      SetupServe);

}  // namespace unirecord::cli
