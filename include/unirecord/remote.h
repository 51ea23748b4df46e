// Datasets in object stores: how Dataset::Open reaches an http://, https://
// or s3:// location and caches what it downloads (docs/remote.md).
//
// Opening a remote dataset downloads its manifest, every index file and the
// frame of every shard (header and footer, by ranged GETs). Record data comes
// through a local cache directory, one whole shard file at a time, each
// verified against the format's checksums (format/SPEC.md section 11) under a
// temporary name before it is renamed into place. Processes on one machine
// may share a cache directory; a shard being read is pinned (a shared flock)
// and never evicted.
#ifndef UNIRECORD_REMOTE_H_
#define UNIRECORD_REMOTE_H_

#include <cstdint>
#include <string>

namespace unirecord {

struct RemoteOptions {
  // Where downloads go. "": $XDG_CACHE_HOME/unirecord, else ~/.cache/unirecord.
  std::string cache_dir;
  // Byte budget of the shard files in cache_dir (all datasets sharing it);
  // 0: no limit. The least recently used shards no process has pinned are
  // removed first; pinned shards are never removed, so the cache may exceed
  // the budget by the shards in use (a few per reader).
  uint64_t cache_limit = 0;
  // Shards downloaded ahead of the ones the reads have open (a block
  // shuffle reads a window of shards at once: these come after all of
  // them), in the order Dataset::PlanReads was given (the Loader gives its
  // epoch's order, then the next epoch's). 0: none. Each is pinned while
  // held: raise it (and cache_limit by as many shards) when the reads wait
  // on downloads (docs/remote.md, "Sizing the cache with block shuffle").
  int prefetch_shards = 3;
  // Requests in flight at once per dataset (prefetch and on-demand).
  int max_requests = 4;
  // Attempts per request before failing with Unavailable, naming the URL and
  // the HTTP status or network error. Retried: 5xx, 429, timeouts, resets,
  // bodies cut short; backoff doubles from retry_backoff_ms (with jitter).
  int attempts = 5;
  int retry_backoff_ms = 200;
  // An attempt that receives no byte for this long (from its start:
  // connecting and waiting for the answer count) ends then (checked every
  // 100 ms) and is retried.
  int timeout_s = 30;
  // An attempt that has run min_rate_window_s seconds and received fewer than
  // min_rate_bytes_per_s x min_rate_window_s bytes in the last
  // min_rate_window_s seconds ends and is retried: a server trickling a few
  // bytes a second cannot hold a reader for hours. 0: no minimum rate.
  int min_rate_bytes_per_s = 1024;
  int min_rate_window_s = 30;
  // Seconds one request may take in all: its attempts, the backoff between
  // them and waits for a free slot (max_requests). Past it the request fails
  // with Unavailable, naming the deadline, without another attempt. A whole
  // shard is one request: allow for the largest at your slowest rate.
  // 0: no deadline.
  int request_deadline_s = 0;

  // S3 (s3://BUCKET/KEY...). Credentials: AWS_ACCESS_KEY_ID,
  // AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, else the AWS_PROFILE (default
  // "default") section of ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE).
  // Region: AWS_REGION, AWS_DEFAULT_REGION, the profile in ~/.aws/config
  // (AWS_CONFIG_FILE), else us-east-1. Requests are signed by libcurl's AWS
  // SigV4; with no credentials they go unsigned (public buckets).
  // Endpoint: "" means AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else
  // https://s3.REGION.amazonaws.com.
  std::string s3_endpoint;
  // "auto" (path-style with a custom endpoint, virtual-hosted on AWS),
  // "path" (ENDPOINT/BUCKET/KEY) or "virtual" (BUCKET.ENDPOINT-HOST/KEY).
  std::string s3_addressing = "auto";
};

// What a remote dataset did since it was opened (Dataset::remote_stats).
struct RemoteStats {
  uint64_t requests = 0;          // HTTP requests made, retries included
  uint64_t retries = 0;           // of those, retries
  uint64_t bytes_downloaded = 0;  // response bodies
  uint64_t shard_downloads = 0;   // whole shards downloaded and verified
  uint64_t cache_hits = 0;        // shards found in the cache directory
  uint64_t verify_failures = 0;   // downloads refused (wrong size or checksums) and fetched again
  // Files (shards and column files) opened from the cache or downloaded:
  uint64_t prefetched = 0;        // by the background prefetch, ahead of the reads
  uint64_t read_fetches = 0;      // by a read that found its file not open yet: each one a wait
};

// True when `location` names a remote dataset (http://, https://, s3://).
bool IsRemoteLocation(const std::string& location);

}  // namespace unirecord

#endif  // UNIRECORD_REMOTE_H_
