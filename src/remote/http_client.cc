#include "remote/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

namespace unirecord::remote {
namespace {

void GlobalInit() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

bool RetryableStatus(long status) { return status >= 500 || status == 429 || status == 408; }

bool RetryableCurl(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

std::string StatusText(long status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 410: return "Gone";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

std::string DescribeStatus(long status) {
  const std::string text = StatusText(status);
  return "HTTP " + std::to_string(status) + (text.empty() ? "" : " (" + text + ")");
}

constexpr char kEmptyPayloadSha256Header[] =
    "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// What an S3 error document says: " (CODE: MESSAGE)", or "" for any other
// body. <Error><Code>InvalidAccessKeyId</Code><Message>...</Message>...
std::string S3ErrorDetail(const std::string& body) {
  const auto element = [&](const std::string& name) {
    const size_t open = body.find("<" + name + ">");
    if (open == std::string::npos) return std::string();
    const size_t begin = open + name.size() + 2;
    const size_t end = body.find("</" + name + ">", begin);
    if (end == std::string::npos || end - begin > 512) return std::string();
    return body.substr(begin, end - begin);
  };
  if (body.find("<Error>") == std::string::npos) return "";
  const std::string code = element("Code"), message = element("Message");
  if (code.empty()) return "";
  return " (" + code + (message.empty() ? "" : ": " + message) + ")";
}

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

TransferWatch::TransferWatch(const RemoteOptions& options)
    : timeout_s_(options.timeout_s),
      min_rate_(static_cast<uint64_t>(std::max(0, options.min_rate_bytes_per_s))),
      window_s_(options.min_rate_window_s) {
  samples_.emplace_back(0.0, 0);
}

TransferWatch::Verdict TransferWatch::Observe(double now, uint64_t received) {
  if (received != last_received_) {
    last_received_ = received;
    last_progress_ = now;
  }
  if (now - last_progress_ >= timeout_s_) return Verdict::kIdle;
  if (min_rate_ == 0) return Verdict::kGoOn;
  if (now - samples_.back().first >= 0.25) samples_.emplace_back(now, received);  // a few a second suffice
  while (samples_.size() >= 2 && samples_[1].first <= now - window_s_) samples_.pop_front();
  if (now < window_s_) return Verdict::kGoOn;  // not a whole window yet
  // Bytes since the first sample: at least the window's (the sample may be a little older).
  in_window_ = received - samples_.front().second;
  return static_cast<double>(in_window_) < static_cast<double>(min_rate_) * window_s_ ? Verdict::kSlow
                                                                                      : Verdict::kGoOn;
}

std::string TransferWatch::Describe(Verdict verdict) const {
  if (verdict == Verdict::kIdle) return "no byte received for " + Seconds(timeout_s_) + " (timeout_s)";
  return std::to_string(in_window_) + " bytes received in " + Seconds(window_s_) + ", fewer than " +
         std::to_string(static_cast<uint64_t>(min_rate_ * window_s_)) + " (min_rate_bytes_per_s " +
         std::to_string(min_rate_) + " over min_rate_window_s)";
}

// One attempt's state, seen by the write, header and progress callbacks.
struct HttpClient::Attempt {
  CURL* handle = nullptr;
  BodySink* sink = nullptr;
  bool ranged = false;
  std::optional<uint64_t> expected;
  bool started = false;
  long status = 0;
  uint64_t received = 0;
  Status error;  // why the callback stopped the transfer
  std::atomic<uint64_t>* bytes = nullptr;
  std::optional<uint64_t> object_size;  // a 206's Content-Range: bytes B-E/SIZE
  // Progress: every byte received (headers, bodies, error pages), watched.
  uint64_t progress = 0;
  Clock::time_point began = Clock::now();
  TransferWatch* watch = nullptr;
  std::optional<Clock::time_point> deadline;  // the request's
  TransferWatch::Verdict verdict = TransferWatch::Verdict::kGoOn;
  bool past_deadline = false;

  static size_t OnBody(char* data, size_t size, size_t count, void* self) {
    static_cast<Attempt*>(self)->progress += size * count;
    return static_cast<Attempt*>(self)->Body(data, size * count);
  }

  // False when the attempt must end: past the deadline, or TransferWatch's verdict.
  bool GoOn() {
    if (deadline && Clock::now() >= *deadline) {
      past_deadline = true;
      return false;
    }
    verdict = watch->Observe(SecondsSince(began), progress);
    return verdict == TransferWatch::Verdict::kGoOn;
  }

  // The transfer, on `multi`, checked every kCheckMs and after every chunk;
  // CURLE_ABORTED_BY_CALLBACK when GoOn ended it. (curl_easy_perform would
  // let a progress callback check only once a second while nothing arrives.)
  CURLcode Perform(CURLM* multi) {
    static constexpr int kCheckMs = 100;
    if (curl_multi_add_handle(multi, handle) != CURLM_OK) return CURLE_FAILED_INIT;
    CURLcode code = CURLE_FAILED_INIT;
    for (;;) {
      int running = 0;
      if (curl_multi_perform(multi, &running) != CURLM_OK) break;
      if (running == 0) {
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
          if (msg->msg == CURLMSG_DONE) code = msg->data.result;
        }
        break;
      }
      if (!GoOn()) {
        code = CURLE_ABORTED_BY_CALLBACK;
        break;
      }
      if (curl_multi_poll(multi, nullptr, 0, kCheckMs, nullptr) != CURLM_OK) break;
    }
    curl_multi_remove_handle(multi, handle);  // mid-transfer: closes its connection
    return code;
  }

  static size_t OnHeader(char* data, size_t size, size_t count, void* self) {
    static_cast<Attempt*>(self)->progress += size * count;
    const std::string line(data, size * count);
    static const std::string kName = "content-range:";
    if (line.size() > kName.size()) {
      std::string name = line.substr(0, kName.size());
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      const size_t slash = line.find('/');
      if (name == kName && slash != std::string::npos && std::isdigit(static_cast<unsigned char>(line[slash + 1]))) {
        static_cast<Attempt*>(self)->object_size = std::strtoull(line.c_str() + slash + 1, nullptr, 10);
      }
    }
    return size * count;
  }

  // An error page: its first kMaxErrorPage bytes kept (S3ErrorDetail), the rest discarded.
  static constexpr size_t kMaxErrorPage = 4096;
  std::string error_page;
  size_t ErrorPage(const char* data, size_t n) {
    error_page.append(data, std::min(n, kMaxErrorPage - std::min(kMaxErrorPage, error_page.size())));
    return n;
  }

  size_t Body(const char* data, size_t n) {
    if (!started) {
      started = true;
      curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
      if (status / 100 != 2) return ErrorPage(data, n);
      if (ranged && status != 206) {
        error = Status::NotSupported("server answered a ranged GET with " + DescribeStatus(status) +
                                     " (the whole object): it must support Range requests");
        return CURL_WRITEFUNC_ERROR;
      }
      curl_off_t length = -1;
      curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      if (ranged && expected && object_size && *object_size != *expected) {
        length = static_cast<curl_off_t>(*object_size);  // the object's size, not the part's
      } else if (ranged) {
        length = -1;
      }
      if (expected && length >= 0 && static_cast<uint64_t>(length) != *expected) {
        error = Status::Corruption("object is " + std::to_string(length) + " bytes, expected " +
                                   std::to_string(*expected) + " (changed or another object)");
        return CURL_WRITEFUNC_ERROR;
      }
      error = sink->Start();
      if (!error.ok()) return CURL_WRITEFUNC_ERROR;
    }
    if (status / 100 != 2) return ErrorPage(data, n);
    received += n;
    bytes->fetch_add(n);
    if (expected && !ranged && received > *expected) {
      error = Status::Corruption("object is longer than the expected " + std::to_string(*expected) + " bytes");
      return CURL_WRITEFUNC_ERROR;
    }
    error = sink->Write(data, n);
    return error.ok() ? n : CURL_WRITEFUNC_ERROR;
  }
};

SigV4Signer::SigV4Signer(const AwsCredentials& credentials, const std::string& service,
                         const std::vector<std::string>& headers)
    : scope_("aws:amz:" + credentials.region + ":" + service),
      key_pair_(credentials.access_key + ":" + credentials.secret_key) {
  for (const std::string& header : headers) headers_ = curl_slist_append(headers_, header.c_str());
}

SigV4Signer::~SigV4Signer() { curl_slist_free_all(headers_); }

std::vector<std::string> SigV4Signer::S3Headers(const AwsCredentials& credentials) {
  std::vector<std::string> headers = {kEmptyPayloadSha256Header};
  if (!credentials.session_token.empty()) headers.push_back("x-amz-security-token: " + credentials.session_token);
  return headers;
}

void SigV4Signer::Sign(void* curl) const {
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, scope_.c_str());
  curl_easy_setopt(curl, CURLOPT_USERPWD, key_pair_.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers_);
}

HttpClient::HttpClient(const Location& location, const RemoteOptions& options)
    : location_(location), options_(options) {
  GlobalInit();
  if (location_.s3 && !location_.credentials.access_key.empty()) {
    signer_ = std::make_unique<SigV4Signer>(location_.credentials, "s3", SigV4Signer::S3Headers(location_.credentials));
  }
}

HttpClient::~HttpClient() {
  for (const auto& [easy, multi] : idle_handles_) {
    curl_easy_cleanup(static_cast<CURL*>(easy));
    curl_multi_cleanup(static_cast<CURLM*>(multi));  // its connections
  }
}

bool HttpClient::AcquireSlot(std::optional<Clock::time_point> deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto free = [&] { return in_flight_ < std::max(1, options_.max_requests); };
  if (deadline) {
    if (!slot_cv_.wait_until(lock, *deadline, free)) return false;
  } else {
    slot_cv_.wait(lock, free);
  }
  ++in_flight_;
  return true;
}

void HttpClient::ReleaseSlot() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  slot_cv_.notify_one();
}

std::pair<void*, void*> HttpClient::TakeHandles() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_handles_.empty()) {
      const std::pair<void*, void*> idle = idle_handles_.back();
      idle_handles_.pop_back();
      return idle;
    }
  }
  CURL* handle = curl_easy_init();
  CURLM* multi = curl_multi_init();
  if (handle == nullptr || multi == nullptr) {
    if (handle != nullptr) curl_easy_cleanup(handle);
    if (multi != nullptr) curl_multi_cleanup(multi);
    return {nullptr, nullptr};
  }
  return {handle, multi};
}

void HttpClient::ReturnHandles(std::pair<void*, void*> handles) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_handles_.push_back(handles);
}

Status HttpClient::Get(const std::string& url, std::optional<ByteRange> range, std::optional<uint64_t> expected_size,
                       BodySink& sink) {
  const int attempts = std::max(1, options_.attempts);
  std::string last_problem;
  thread_local std::mt19937 jitter(std::random_device{}());
  const Clock::time_point began = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (options_.request_deadline_s > 0) deadline = began + std::chrono::seconds(options_.request_deadline_s);
  int attempts_made = 0;
  // The deadline passed, or passes before another attempt could start: the
  // request ends here, whatever the attempts left.
  const auto past_deadline = [&] {
    return Status::Unavailable(url + ": out of time: request_deadline_s " +
                               std::to_string(options_.request_deadline_s) + " (" + std::to_string(attempts_made) +
                               " attempt" + (attempts_made == 1 ? "" : "s") + " in " +
                               Seconds(std::round(SecondsSince(began) * 10) / 10) +
                               (last_problem.empty() ? "" : "; the last: " + last_problem) + ")");
  };
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) {
      const double base = options_.retry_backoff_ms * std::pow(2.0, attempt - 2);
      const double wait_ms = std::min(10000.0, base * std::uniform_real_distribution<double>(0.5, 1.5)(jitter));
      const auto wake = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double, std::milli>(wait_ms));
      if (deadline && wake >= *deadline) return past_deadline();  // no time left for another attempt
      retries_.fetch_add(1);
      std::this_thread::sleep_until(wake);
    }
    if (!AcquireSlot(deadline)) return past_deadline();
    ++attempts_made;
    const std::pair<void*, void*> handles = TakeHandles();
    if (handles.first == nullptr) {
      ReleaseSlot();
      return Status::Internal(url + ": curl_easy_init or curl_multi_init failed");
    }
    CURL* handle = static_cast<CURL*>(handles.first);
    CURLM* multi = static_cast<CURLM*>(handles.second);
    curl_easy_reset(handle);
    Attempt a;
    a.handle = handle;
    a.sink = &sink;
    a.ranged = range.has_value();
    a.expected = expected_size;
    a.bytes = &bytes_;
    TransferWatch watch(options_);
    a.watch = &watch;
    a.deadline = deadline;
    char curl_error[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(handle, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options_.timeout_s));
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, curl_error);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &Attempt::OnBody);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &Attempt::OnHeader);
    curl_easy_setopt(handle, CURLOPT_HEADERDATA, &a);
    std::string range_text;
    if (range) {
      range_text = std::to_string(range->begin) + "-" + std::to_string(range->end - 1);
      curl_easy_setopt(handle, CURLOPT_RANGE, range_text.c_str());
    }
    if (signer_ != nullptr) signer_->Sign(handle);
    requests_.fetch_add(1);
    // Stalled or trickling attempts (retried) and the deadline: Attempt::GoOn.
    const CURLcode code = a.Perform(multi);
    long status = a.status;
    if (code == CURLE_OK || status == 0) curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    ReturnHandles(handles);
    ReleaseSlot();

    if (!a.error.ok()) return a.error.WithContext(url);  // the body is wrong: not retried here
    if (a.past_deadline) return past_deadline();
    if (code == CURLE_ABORTED_BY_CALLBACK && a.verdict != TransferWatch::Verdict::kGoOn) {
      last_problem = watch.Describe(a.verdict);
      if (status != 0 && status / 100 != 2) last_problem = DescribeStatus(status) + ", then " + last_problem;
      continue;
    }
    if (code != CURLE_OK) {
      last_problem = std::string(curl_error[0] != '\0' ? curl_error : curl_easy_strerror(code));
      if (status != 0 && status / 100 != 2) last_problem = DescribeStatus(status) + ", then " + last_problem;
      if (RetryableCurl(code)) continue;
      return Status::Unavailable(url + ": " + last_problem);
    }
    if (status == 404 || status == 410) {
      return Status::NotFound(url + ": " + DescribeStatus(status) + S3ErrorDetail(a.error_page));
    }
    if (status / 100 != 2) {
      last_problem = DescribeStatus(status) + S3ErrorDetail(a.error_page);
      if (RetryableStatus(status)) continue;
      return Status::Unavailable(url + ": " + last_problem);
    }
    if (!a.started) {  // an empty body
      Status started = sink.Start();
      if (!started.ok()) return started.WithContext(url);
    }
    const uint64_t wanted = range ? range->end - range->begin : expected_size.value_or(a.received);
    if (a.received != wanted) {
      last_problem = "body cut short at " + std::to_string(a.received) + " of " + std::to_string(wanted) + " bytes";
      continue;
    }
    return Status::OK();
  }
  return Status::Unavailable(url + ": " + last_problem + " (after " + std::to_string(attempts) + " attempt" +
                             (attempts == 1 ? "" : "s") + ")");
}

namespace {
class StringSink : public BodySink {
 public:
  explicit StringSink(uint64_t max) : max_(max) {}
  Status Start() override {
    body.clear();
    return Status::OK();
  }
  Status Write(const char* data, size_t size) override {
    if (body.size() + size > max_) return Status::Corruption("larger than " + std::to_string(max_) + " bytes");
    body.append(data, size);
    return Status::OK();
  }
  std::string body;

 private:
  uint64_t max_;
};
}  // namespace

Result<std::string> HttpClient::GetString(const std::string& url, std::optional<ByteRange> range, uint64_t max_bytes,
                                          std::optional<uint64_t> object_size) {
  StringSink sink(max_bytes);
  UREC_RETURN_IF_ERROR(Get(url, range, object_size, sink));
  return std::move(sink.body);
}

}  // namespace unirecord::remote
