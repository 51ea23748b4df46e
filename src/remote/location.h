// Remote locations: an http(s):// or s3:// dataset location turned into the
// URLs of its files, and the S3 credentials and addressing that sign them.
#ifndef UNIRECORD_REMOTE_LOCATION_H_
#define UNIRECORD_REMOTE_LOCATION_H_

#include <map>
#include <optional>
#include <string>

#include "unirecord/remote.h"
#include "unirecord/status.h"

namespace unirecord::remote {

struct AwsCredentials {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // "" when none
  std::string region;
};

// Where the files of a remote dataset are.
struct Location {
  std::string original;  // as given, for messages
  bool s3 = false;
  // http(s): the folder's URL ending in '/'. s3: the request URL of the
  // folder (after addressing), ending in '/'.
  std::string folder_url;
  // The last path component when it names a dataset (NAME or NAME.uset);
  // "" for a folder ("s3://b/dir/", "http://h/dir/").
  std::string dataset_name;
  // s3 only: how requests are signed (no access key: unsigned).
  AwsCredentials credentials;
  std::string bucket, key_prefix;  // s3 only, for listing
  std::string endpoint;            // s3 only: scheme://host[:port]
  bool path_style = false;         // s3 only

  // URL of file `name` of the folder.
  std::string FileUrl(const std::string& name) const { return folder_url + name; }
};

// Parses `location` (IsRemoteLocation). `env` overrides getenv for tests
// (nullptr: the process environment).
Result<Location> ParseLocation(const std::string& location, const RemoteOptions& options,
                               const std::map<std::string, std::string>* env = nullptr);

// The credentials the environment and ~/.aws files give (AwsCredentials'
// fields empty when there are none).
AwsCredentials LoadAwsCredentials(const std::map<std::string, std::string>* env = nullptr);

// The default cache directory: $XDG_CACHE_HOME/unirecord or ~/.cache/unirecord.
std::string DefaultCacheDir();

}  // namespace unirecord::remote

#endif  // UNIRECORD_REMOTE_LOCATION_H_
