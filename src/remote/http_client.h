// GETs over libcurl (HTTP/1.1, TLS, S3 SigV4 signing by CURLOPT_AWS_SIGV4):
// bounded concurrency, retries with backoff, an end to attempts that stall
// or trickle and to requests past their deadline, and errors naming the URL
// and the HTTP status or network error.
#ifndef UNIRECORD_REMOTE_HTTP_CLIENT_H_
#define UNIRECORD_REMOTE_HTTP_CLIENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "remote/location.h"
#include "unirecord/remote.h"
#include "unirecord/status.h"

struct curl_slist;

namespace unirecord::remote {

// Signs requests by AWS Signature Version 4 through libcurl
// (CURLOPT_AWS_SIGV4): the scope REGION/SERVICE (the credentials' region),
// their key pair, and `headers` ("Name: value") added to every request and
// signed with it. libcurl 7.88 signs host, x-amz-date and the headers
// given, not those it adds itself (Range), and the query as it is given:
// signed queries are built by CanonicalQuery (folder_listing.h). The date
// is the clock's unless `headers` hold an X-Amz-Date (how sigv4_test.cc
// checks it against AWS's published examples).
class SigV4Signer {
 public:
  SigV4Signer(const AwsCredentials& credentials, const std::string& service, const std::vector<std::string>& headers);
  ~SigV4Signer();
  SigV4Signer(const SigV4Signer&) = delete;
  SigV4Signer& operator=(const SigV4Signer&) = delete;

  // The headers of HttpClient's S3 requests: x-amz-content-sha256, which S3
  // requires of every SigV4 request (400 without it, from AWS and s3rver
  // alike; libcurl 7.88 does not add it), the SHA-256 of an empty body
  // (every request is a GET); x-amz-security-token with a session token.
  static std::vector<std::string> S3Headers(const AwsCredentials& credentials);

  // Sets up `curl` (a CURL*) to sign its request; this signer must outlive
  // the request.
  void Sign(void* curl) const;

 private:
  std::string scope_;     // "aws:amz:REGION:SERVICE"
  std::string key_pair_;  // "ACCESS:SECRET"
  curl_slist* headers_ = nullptr;
};

// Bytes [begin, end) of an object.
struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Receives one attempt's body: Start before the first byte of each attempt
// (a retry starts over), then Write per chunk. A non-OK status from either
// stops the request without retrying it (the body is wrong, not torn).
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual Status Start() = 0;
  virtual Status Write(const char* data, size_t size) = 0;
};

// Decides when one attempt has made too little progress (RemoteOptions'
// timeout_s, min_rate_bytes_per_s, min_rate_window_s). libcurl's own low
// speed check (CURLOPT_LOW_SPEED_*) judges a speed averaged over its last
// 5 s or so, so a transfer that stalls after some bytes was seen stalled
// only ~6 s late (measured: timeout_s 30 ended an attempt after 36 s); this
// counts the bytes themselves, and HttpClient asks it every 100 ms.
class TransferWatch {
 public:
  enum class Verdict { kGoOn, kIdle, kSlow };
  explicit TransferWatch(const RemoteOptions& options);
  // `now`: seconds since the attempt began; `received`: bytes received so far
  // (headers included), never decreasing. Called every 100 ms or so.
  Verdict Observe(double now, uint64_t received);
  // Why a verdict ended the attempt, for the error message.
  std::string Describe(Verdict verdict) const;

 private:
  double timeout_s_;
  uint64_t min_rate_;
  double window_s_;
  double last_progress_ = 0;
  uint64_t last_received_ = 0;
  uint64_t in_window_ = 0;  // at the last rate check
  // (time, received) samples; the first is the latest at or before now - window.
  std::deque<std::pair<double, uint64_t>> samples_;
};

class HttpClient {
 public:
  // `location` decides signing (s3 with credentials) for every request.
  HttpClient(const Location& location, const RemoteOptions& options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // GET `url` (bytes `range` of it when set; a server that ignores Range and
  // answers 200 is an error) into `sink`. `expected_size`: the object's size
  // when known; an object of another size (Content-Length, or a 206's
  // Content-Range) is Corruption (changed, or another object), a body cut
  // short is retried, so is an attempt TransferWatch ends. Errors: NotFound
  // (404, 410), Unavailable (other statuses, network errors, after the last
  // attempt where retrying makes sense; the request deadline passed), or the
  // sink's status.
  Status Get(const std::string& url, std::optional<ByteRange> range, std::optional<uint64_t> expected_size,
             BodySink& sink);
  // The body in memory, refused (Corruption) over `max_bytes`.
  Result<std::string> GetString(const std::string& url, std::optional<ByteRange> range, uint64_t max_bytes,
                                std::optional<uint64_t> object_size = std::nullopt);

  uint64_t requests() const { return requests_.load(); }  // attempts made, retries included
  uint64_t retries() const { return retries_.load(); }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  struct Attempt;
  // False when `deadline` passed first (steady_clock; none: wait for ever).
  bool AcquireSlot(std::optional<std::chrono::steady_clock::time_point> deadline);
  void ReleaseSlot();
  // An idle (CURL*, CURLM*) pair of idle_handles_, else a new one; nulls when
  // curl cannot make one. ReturnHandles puts a pair back for the next request.
  std::pair<void*, void*> TakeHandles();
  void ReturnHandles(std::pair<void*, void*> handles);

  Location location_;
  RemoteOptions options_;
  std::unique_ptr<SigV4Signer> signer_;  // s3 with credentials
  std::mutex mu_;
  std::condition_variable slot_cv_;
  int in_flight_ = 0;
  // (CURL*, its CURLM*) kept for connection reuse: the connections of a
  // transfer run on a multi handle stay in that handle's cache.
  std::vector<std::pair<void*, void*>> idle_handles_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace unirecord::remote

#endif  // UNIRECORD_REMOTE_HTTP_CLIENT_H_
