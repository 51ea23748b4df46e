// Server: `urec serve` and unirecord.serve, a local read-only viewer of a
// dataset in the browser (docs/viewer.md).
//
//   UREC_ASSIGN_OR_RETURN(auto dataset, Dataset::Open("records"));
//   UREC_ASSIGN_OR_RETURN(auto server, Server::Start(dataset, "records", {}));
//   std::printf("%s\n", server->url().c_str());   // http://127.0.0.1:PORT/
//   server->Wait();                               // until Stop() from another thread
//
// It serves one page, built into the library (HTML, CSS and JavaScript; no
// file is read from disk and nothing is downloaded), and the JSON and PNG
// answers that page asks for: the overview, field distributions, pages of
// record ids for a query, a record's values, thumbnails and training crops.
// Every answer is computed from the Dataset it was given; it writes nothing.
//
// Safe by default: it binds 127.0.0.1 and answers only requests whose Host
// names that address (a web page elsewhere cannot reach it through DNS
// rebinding); any other bind address needs a token, which every request
// must carry (the page's URL holds it; a cookie carries it to the rest).
// Requests are bounded in size and work, answers in size, and the caches in
// bytes (ServeOptions::cache_bytes).
#ifndef UNIRECORD_SERVE_H_
#define UNIRECORD_SERVE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "unirecord/dataset.h"
#include "unirecord/sample_decoder.h"
#include "unirecord/status.h"

namespace unirecord {

struct ServeOptions {
  // Address to listen on: 127.0.0.1 (default) or ::1 for this machine only;
  // anything else (0.0.0.0, a LAN address) needs a token.
  std::string bind = "127.0.0.1";
  // Port; 0: a free one, chosen by the system (Server::port() says which).
  int port = 0;
  // Every request must carry it (?token=... once, then the cookie the
  // server sets). Empty: none on a loopback bind; on another bind, Start
  // makes a random one (Server::token()). 16..128 characters of
  // [A-Za-z0-9_-] when given.
  std::string token;
  // Threads answering requests (1..64). Below 8, connections close after
  // each answer: cpp-httplib holds a thread per open connection, and a
  // browser opens 6 to one server.
  int threads = 8;
  // Bytes of answers kept for reuse (thumbnails, the ids of recent queries,
  // distributions), least recently used first out. The Dataset's own page
  // cache (DatasetOptions::page_cache_bytes) is separate.
  uint64_t cache_bytes = uint64_t{128} << 20;
  // The longest side of a grid thumbnail, in pixels (32..512).
  int thumbnail_size = 160;
  // How the boxes of a float32 (-1, 4) field are given (drawn over images).
  BoxFormat box_format = BoxFormat::kXYWH;
};

class Server {
 public:
  // Starts serving `dataset` in background threads. `path` is how the
  // dataset was opened (shown on the page and in its `urec cat` commands;
  // its kept versions are listed from it when it is a local folder).
  // InvalidArgument for bad options, IOError when the address cannot be
  // bound.
  static Result<std::unique_ptr<Server>> Start(std::shared_ptr<const Dataset> dataset, const std::string& path,
                                               const ServeOptions& options = {});
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The page's address: http://HOST:PORT/ (with ?token=... when there is one).
  const std::string& url() const;
  const std::string& host() const;
  int port() const;
  const std::string& token() const;

  // Stops listening, finishes the requests in flight, returns. Idempotent,
  // callable from any thread.
  void Stop();
  // Blocks until the server has stopped (Stop from another thread).
  void Wait();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace unirecord

#endif  // UNIRECORD_SERVE_H_
