// Server (unirecord/serve.h): the viewer's answers (viewer.h) over HTTP with
// cpp-httplib, behind the checks that keep it local and read-only: GET
// only, the Host a loopback bind answers to, the token of any other bind,
// bounded requests, and headers that forbid the page from running anything
// but its own script (docs/viewer.md, "How it stays safe").
#include "unirecord/serve.h"

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "serve/viewer.h"

namespace unirecord {
namespace {

constexpr const char* kTokenCookie = "urec_token";
constexpr int kKeepAliveThreads = 8;  // more than a browser's 6 connections to one host

// The page's scripts and styles come from the server alone; no inline
// script, no plugin, no frame, no form, no other origin.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool TokenCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

Result<std::string> MakeToken() {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  try {
    std::random_device random;
    std::string token;
    for (int i = 0; i < 32; ++i) token += kAlphabet[random() % 64];
    return token;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("no random source for the token: ") + e.what());
  }
}

// Compares without stopping at the first difference.
bool SameToken(const std::string& given, const std::string& token) {
  if (given.size() != token.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < token.size(); ++i) differ |= static_cast<unsigned char>(given[i] ^ token[i]);
  return differ == 0;
}

std::string CookieValue(const std::string& cookies, const std::string& name) {
  size_t at = 0;
  while (at < cookies.size()) {
    size_t end = cookies.find(';', at);
    if (end == std::string::npos) end = cookies.size();
    std::string pair = cookies.substr(at, end - at);
    pair.erase(0, pair.find_first_not_of(' '));
    if (pair.rfind(name + "=", 0) == 0) return pair.substr(name.size() + 1);
    at = end + 1;
  }
  return "";
}

// An answer's bytes, as they are. cpp-httplib compresses a set_content()
// body of a text or JSON type for a browser that accepts it, with brotli at
// its slowest quality (11): on a local server that was half of the CPU time
// of a grid page in Chromium, for nothing. A body of known length given by a
// content provider is written as it is.
void WriteAsIs(std::string body, const std::string& content_type, httplib::Response& res) {
  if (body.empty()) {
    res.set_content("", content_type);
    return;
  }
  auto shared = std::make_shared<const std::string>(std::move(body));
  res.set_content_provider(shared->size(), content_type,
                           [shared](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(shared->data() + offset, length);
                           });
}

Status CheckOptions(const ServeOptions& o) {
  if (o.threads < 1 || o.threads > 64) return Status::InvalidArgument("threads must be 1..64");
  if (o.port < 0 || o.port > 65535) return Status::InvalidArgument("port must be 0..65535");
  if (o.thumbnail_size < serve::kMinImageSize || o.thumbnail_size > serve::kMaxImageSize) {
    return Status::InvalidArgument("thumbnail size must be 32..512");
  }
  if (o.cache_bytes < (uint64_t{1} << 20)) return Status::InvalidArgument("the cache needs at least 1 MiB");
  if (!o.token.empty()) {
    if (o.token.size() < 16 || o.token.size() > 128) return Status::InvalidArgument("the token must be 16..128 characters");
    for (char c : o.token) {
      if (!TokenCharacter(c)) return Status::InvalidArgument("the token may hold only A-Z a-z 0-9 _ -");
    }
  }
  if (o.bind.empty()) return Status::InvalidArgument("the bind address is empty");
  return Status::OK();
}

}  // namespace

struct Server::Impl {
  httplib::Server http;
  std::unique_ptr<serve::Viewer> viewer;
  std::thread listener;
  std::string host, url, token;
  int port = 0;
  bool loopback = true;
  std::mutex mutex;
  std::condition_variable stopped_changed;
  bool stopped = false;
  std::mutex stopping;  // one Stop at a time

  // Why the request may not be answered (its HTTP status and message), or 0.
  int Refuse(const httplib::Request& req, std::string* why) const {
    if (loopback) {
      // A page of another site reaches a loopback server through DNS
      // rebinding only under its own host name: refuse every other Host.
      const std::string host_header = req.get_header_value("Host");
      const std::string suffix = ":" + std::to_string(port);
      bool known = false;
      for (const char* name : {"127.0.0.1", "localhost", "[::1]"}) known |= host_header == name + suffix;
      if (!known && host_header != host + suffix) {
        *why = "this server answers requests for " + host + suffix + " only";
        return 403;
      }
    }
    if (token.empty()) return 0;
    const std::string given =
        req.has_param("token") ? req.get_param_value("token") : CookieValue(req.get_header_value("Cookie"), kTokenCookie);
    if (SameToken(given, token)) return 0;
    *why = "this server needs its token: open the address it printed (with ?token=...)";
    return 401;
  }

  void Answer(const httplib::Request& req, httplib::Response& res) {
    std::string why;
    if (const int refused = Refuse(req, &why)) {
      res.status = refused;
      WriteAsIs(serve::DumpJson(serve::Json{{"error", why}}), "application/json", res);
      return;
    }
    serve::Params params;
    for (const auto& [name, value] : req.params) params.emplace(name, value);  // the first of a repeated name
    serve::Reply reply = viewer->Answer(req.path, params);
    res.status = reply.status;
    res.set_header("Cache-Control", reply.immutable && reply.content_type == "image/png" ? "private, max-age=3600"
                                                                                         : "no-store");
    if (!token.empty() && req.path == "/" && req.has_param("token")) {
      res.set_header("Set-Cookie", std::string(kTokenCookie) + "=" + token + "; Path=/; HttpOnly; SameSite=Strict");
    }
    WriteAsIs(std::move(reply.body), reply.content_type, res);
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Start(std::shared_ptr<const Dataset> dataset, const std::string& path,
                                              const ServeOptions& options) {
  UREC_RETURN_IF_ERROR(CheckOptions(options));
  if (dataset == nullptr) return Status::InvalidArgument("no dataset to serve");
  auto impl = std::make_unique<Impl>();
  impl->host = options.bind;
  impl->loopback = IsLoopback(options.bind);
  impl->token = options.token;
  if (impl->token.empty() && !impl->loopback) {
    UREC_ASSIGN_OR_RETURN(impl->token, MakeToken());
  }
  impl->viewer = std::make_unique<serve::Viewer>(std::move(dataset), path, options);

  httplib::Server& http = impl->http;
  const int threads = options.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  // cpp-httplib holds a thread for each open connection: keep connections
  // open only when the threads outnumber the browser's connections.
  http.set_keep_alive_max_count(threads >= kKeepAliveThreads ? 100 : 1);
  http.set_keep_alive_timeout(2);
  // An answer is written as headers then body: without this, Nagle's
  // algorithm holds the body until the browser's delayed ACK of the headers
  // (40 ms an answer on a kept-open connection).
  http.set_tcp_nodelay(true);
  http.set_read_timeout(10);
  http.set_write_timeout(30);
  http.set_payload_max_length(4096);
  http.set_default_headers({{"Content-Security-Policy", kContentSecurityPolicy},
                            {"X-Content-Type-Options", "nosniff"},
                            {"Referrer-Policy", "no-referrer"},
                            {"X-Frame-Options", "DENY"},
                            {"Cross-Origin-Resource-Policy", "same-origin"}});
  Impl* raw = impl.get();
  http.Get(".*", [raw](const httplib::Request& req, httplib::Response& res) { raw->Answer(req, res); });
  auto read_only = [](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    WriteAsIs(serve::DumpJson(serve::Json{{"error", "the viewer is read-only: GET and HEAD only"}}),
              "application/json", res);
  };
  http.Post(".*", read_only);
  http.Put(".*", read_only);
  http.Patch(".*", read_only);
  http.Delete(".*", read_only);
  http.Options(".*", read_only);

  if (options.port == 0) {
    impl->port = http.bind_to_any_port(options.bind);
  } else {
    impl->port = http.bind_to_port(options.bind, options.port) ? options.port : -1;
  }
  if (impl->port <= 0) {
    return Status::IOError("cannot listen on " + options.bind + ":" + std::to_string(options.port) +
                           " (in use, or not an address of this machine)");
  }
  const std::string host = options.bind.find(':') != std::string::npos ? "[" + options.bind + "]" : options.bind;
  impl->url = "http://" + host + ":" + std::to_string(impl->port) + "/" +
              (impl->token.empty() ? "" : "?token=" + impl->token);
  impl->listener = std::thread([raw] {
    raw->http.listen_after_bind();
    std::lock_guard<std::mutex> lock(raw->mutex);
    raw->stopped = true;
    raw->stopped_changed.notify_all();
  });
  // Until it listens, httplib's stop() would not stop it.
  while (!http.is_running()) {
    {
      std::lock_guard<std::mutex> lock(impl->mutex);
      if (impl->stopped) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

const std::string& Server::url() const { return impl_->url; }
const std::string& Server::host() const { return impl_->host; }
int Server::port() const { return impl_->port; }
const std::string& Server::token() const { return impl_->token; }

void Server::Stop() {
  std::lock_guard<std::mutex> lock(impl_->stopping);
  impl_->http.stop();
  if (impl_->listener.joinable() && impl_->listener.get_id() != std::this_thread::get_id()) impl_->listener.join();
  impl_->viewer->Stop();
}

void Server::Wait() {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  impl_->stopped_changed.wait(lock, [&] { return impl_->stopped; });
}

}  // namespace unirecord
