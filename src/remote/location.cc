#include "remote/location.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "format/file_names.h"

namespace unirecord {

bool IsRemoteLocation(const std::string& location) {
  return location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0 || location.rfind("s3://", 0) == 0;
}

namespace remote {
namespace {

std::string Env(const std::map<std::string, std::string>* env, const std::string& name) {
  if (env != nullptr) {
    auto it = env->find(name);
    return it == env->end() ? "" : it->second;
  }
  const char* value = std::getenv(name.c_str());
  return value == nullptr ? "" : value;
}

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// Section `section` of an INI file (~/.aws/credentials, ~/.aws/config): key -> value.
std::map<std::string, std::string> IniSection(const std::string& path, const std::string& section) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      inside = Trim(line.substr(1, line.size() - 2)) == section;
      continue;
    }
    const size_t eq = line.find('=');
    if (inside && eq != std::string::npos) values[Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
  }
  return values;
}

std::string Home(const std::map<std::string, std::string>* env) { return Env(env, "HOME"); }

}  // namespace

AwsCredentials LoadAwsCredentials(const std::map<std::string, std::string>* env) {
  AwsCredentials c;
  std::string profile = Env(env, "AWS_PROFILE");
  if (profile.empty()) profile = "default";
  c.access_key = Env(env, "AWS_ACCESS_KEY_ID");
  c.secret_key = Env(env, "AWS_SECRET_ACCESS_KEY");
  c.session_token = Env(env, "AWS_SESSION_TOKEN");
  if (c.access_key.empty() || c.secret_key.empty()) {
    std::string file = Env(env, "AWS_SHARED_CREDENTIALS_FILE");
    if (file.empty() && !Home(env).empty()) file = Home(env) + "/.aws/credentials";
    std::map<std::string, std::string> section = IniSection(file, profile);
    c.access_key = section["aws_access_key_id"];
    c.secret_key = section["aws_secret_access_key"];
    c.session_token = section["aws_session_token"];
  }
  c.region = Env(env, "AWS_REGION");
  if (c.region.empty()) c.region = Env(env, "AWS_DEFAULT_REGION");
  if (c.region.empty()) {
    std::string file = Env(env, "AWS_CONFIG_FILE");
    if (file.empty() && !Home(env).empty()) file = Home(env) + "/.aws/config";
    c.region = IniSection(file, profile == "default" ? "default" : "profile " + profile)["region"];
  }
  if (c.region.empty()) c.region = "us-east-1";
  return c;
}

Result<Location> ParseLocation(const std::string& location, const RemoteOptions& options,
                               const std::map<std::string, std::string>* env) {
  Location loc;
  loc.original = location;
  const size_t scheme_end = location.find("://");
  if (!IsRemoteLocation(location) || scheme_end == std::string::npos) {
    return Status::InvalidArgument(location + ": not an http://, https:// or s3:// location");
  }
  const std::string scheme = location.substr(0, scheme_end);
  const std::string rest = location.substr(scheme_end + 3);
  if (rest.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument(location + ": a dataset location has no query or fragment part");
  }
  const size_t host_end = rest.find('/');
  const std::string authority = rest.substr(0, host_end);
  if (authority.empty()) return Status::InvalidArgument(location + ": no host (or bucket) in the location");
  std::string path = host_end == std::string::npos ? "/" : rest.substr(host_end);
  // The last component names a dataset (NAME or NAME.uset) unless the
  // location ends in '/'.
  const size_t slash = path.rfind('/');
  std::string folder = path.substr(0, slash + 1);
  loc.dataset_name = path.substr(slash + 1);
  if (std::optional<std::string> name = format::ManifestDatasetName(loc.dataset_name)) loc.dataset_name = *name;

  if (scheme != "s3") {
    loc.folder_url = scheme + "://" + authority + folder;
    return loc;
  }
  loc.s3 = true;
  loc.bucket = authority;
  loc.key_prefix = folder.substr(1);  // without the leading '/'
  loc.credentials = LoadAwsCredentials(env);
  std::string endpoint = options.s3_endpoint;
  if (endpoint.empty()) endpoint = Env(env, "AWS_ENDPOINT_URL_S3");
  if (endpoint.empty()) endpoint = Env(env, "AWS_ENDPOINT_URL");
  const bool custom = !endpoint.empty();
  if (!custom) endpoint = "https://s3." + loc.credentials.region + ".amazonaws.com";
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  const size_t endpoint_scheme = endpoint.find("://");
  if (endpoint_scheme == std::string::npos || endpoint.find('/', endpoint_scheme + 3) != std::string::npos) {
    return Status::InvalidArgument("S3 endpoint '" + endpoint + "': expected scheme://host[:port]");
  }
  loc.endpoint = endpoint;
  if (options.s3_addressing == "path") {
    loc.path_style = true;
  } else if (options.s3_addressing == "virtual") {
    loc.path_style = false;
  } else if (options.s3_addressing == "auto") {
    // Bucket names with dots break TLS wildcard certificates when virtual-hosted.
    loc.path_style = custom || loc.bucket.find('.') != std::string::npos;
  } else {
    return Status::InvalidArgument("s3_addressing '" + options.s3_addressing + "': expected auto, path or virtual");
  }
  if (loc.path_style) {
    loc.folder_url = endpoint + "/" + loc.bucket + folder;
  } else {
    const std::string endpoint_scheme_part = endpoint.substr(0, endpoint_scheme + 3);
    loc.folder_url = endpoint_scheme_part + loc.bucket + "." + endpoint.substr(endpoint_scheme + 3) + folder;
  }
  return loc;
}

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/unirecord";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && home[0] != '\0' ? home : "/tmp") + "/.cache/unirecord";
}

}  // namespace remote
}  // namespace unirecord
