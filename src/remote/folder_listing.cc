#include "remote/folder_listing.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

namespace unirecord::remote {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

std::string PercentEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded; a '%' not followed by two hex digits stays as it is.
std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    *out += static_cast<char>(code);
  } else if (code < 0x800) {
    *out += static_cast<char>(0xC0 | (code >> 6));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    *out += static_cast<char>(0xE0 | (code >> 12));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (code >> 18));
    *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// XML (and HTML) character references decoded: the five named ones and
// &#N; / &#xH;. nullopt for any other '&' (not a well-formed document).
std::optional<std::string> XmlUnescape(const std::string& s) {
  static const std::pair<const char*, char> kNamed[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const size_t end = s.find(';', i);
    if (end == std::string::npos || end - i > 12) return std::nullopt;
    const std::string entity = s.substr(i + 1, end - i - 1);
    bool known = false;
    for (const auto& [name, c] : kNamed) {
      if (entity == name) {
        out += c;
        known = true;
      }
    }
    if (!known) {
      const bool hex = entity.size() > 2 && entity[0] == '#' && (entity[1] == 'x' || entity[1] == 'X');
      const std::string digits = entity.substr(hex ? 2 : 1);
      if (entity.size() < 2 || entity[0] != '#' || digits.empty() ||
          digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos) {
        return std::nullopt;
      }
      const unsigned long code = std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10);
      if (code == 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
      AppendUtf8(static_cast<uint32_t>(code), &out);
    }
    i = end;
  }
  return out;
}

// The text of the first <name>...</name> of `xml` at or after *at (nullopt:
// none), *at moved past it. Corruption naming `url` when it is left open.
Result<std::optional<std::string>> NextElement(const std::string& xml, const std::string& name, const std::string& url,
                                               size_t* at) {
  const std::string open = "<" + name + ">";
  const size_t begin = xml.find(open, *at);
  if (begin == std::string::npos) return std::optional<std::string>();
  const size_t end = xml.find("</" + name + ">", begin);
  if (end == std::string::npos) return Status::Corruption(url + ": the listing leaves a <" + name + "> open");
  *at = end;
  std::optional<std::string> text = XmlUnescape(xml.substr(begin + open.size(), end - begin - open.size()));
  if (!text) return Status::Corruption(url + ": the listing's <" + name + "> holds a malformed character reference");
  return text;
}

// scheme://authority of a URL ("" when it has none).
std::string Origin(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  return url.substr(0, url.find('/', scheme + 3));
}

}  // namespace

std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params) {
  for (auto& [name, value] : params) {
    name = PercentEncode(name);
    value = PercentEncode(value);
  }
  std::sort(params.begin(), params.end());
  std::string query;
  for (const auto& [name, value] : params) query += (query.empty() ? "" : "&") + name + "=" + value;
  return query;
}

Result<ListingPage> ParseS3ListingPage(const std::string& xml, const std::string& key_prefix, const std::string& url) {
  if (xml.find("<ListBucketResult") == std::string::npos) {
    return Status::Corruption(url + ": not an S3 ListObjectsV2 answer (no <ListBucketResult>)");
  }
  ListingPage page;
  size_t at = 0;
  for (;;) {
    UREC_ASSIGN_OR_RETURN(std::optional<std::string> key, NextElement(xml, "Key", url, &at));
    if (!key) break;
    if (!StartsWith(*key, key_prefix)) {
      return Status::Corruption(url + ": the listing names a key outside the prefix '" + key_prefix + "'");
    }
    const std::string name = key->substr(key_prefix.size());
    if (!name.empty() && name.find('/') == std::string::npos) page.names.push_back(name);
  }
  at = 0;
  UREC_ASSIGN_OR_RETURN(std::optional<std::string> truncated, NextElement(xml, "IsTruncated", url, &at));
  if (truncated && *truncated != "true" && *truncated != "false") {
    return Status::Corruption(url + ": the listing's <IsTruncated> is neither true nor false");
  }
  if (truncated.value_or("false") == "false") return page;
  at = 0;
  UREC_ASSIGN_OR_RETURN(page.next_token, NextElement(xml, "NextContinuationToken", url, &at));
  if (!page.next_token || page.next_token->empty()) {
    return Status::Corruption(url + ": a truncated listing (IsTruncated true) without a NextContinuationToken");
  }
  return page;
}

std::vector<std::string> ParseHtmlListing(const std::string& html, const std::string& folder_url) {
  const std::string origin = Origin(folder_url);
  const std::string folder_path = PercentDecode(folder_url.substr(origin.size()));
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::set<std::string> names;
  for (size_t at = lower.find("href"); at != std::string::npos; at = lower.find("href", at + 1)) {
    size_t v = at + 4;
    while (v < html.size() && std::isspace(static_cast<unsigned char>(html[v]))) ++v;
    if (v == html.size() || html[v] != '=') continue;
    ++v;
    while (v < html.size() && std::isspace(static_cast<unsigned char>(html[v]))) ++v;
    if (v == html.size()) break;
    const char quote = html[v] == '"' || html[v] == '\'' ? html[v] : '\0';
    const size_t begin = quote != '\0' ? v + 1 : v;
    const size_t end = quote != '\0' ? html.find(quote, begin) : html.find_first_of(" \t\r\n>", begin);
    std::optional<std::string> href = XmlUnescape(html.substr(begin, end == std::string::npos ? end : end - begin));
    if (!href) continue;
    if (const size_t cut = href->find_first_of("?#"); cut != std::string::npos) href->erase(cut);
    if (StartsWith(*href, "//")) *href = folder_url.substr(0, folder_url.find("://") + 1) + *href;
    if (href->find("://") != std::string::npos) {
      if (!StartsWith(*href, origin + "/")) continue;  // another server
      href->erase(0, origin.size());
    }
    std::string path = PercentDecode(*href);
    if (StartsWith(path, "/")) {
      if (!StartsWith(path, folder_path)) continue;  // another folder
      path.erase(0, folder_path.size());
    }
    if (StartsWith(path, "./")) path.erase(0, 2);
    if (!path.empty() && path.find('/') == std::string::npos) names.insert(path);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::vector<std::string>> ListFolder(const Location& location, const FetchListing& fetch,
                                            const std::string& shown_as) {
  if (!location.s3) {
    UREC_ASSIGN_OR_RETURN(std::string html, fetch(location.folder_url, kMaxListingPageBytes));
    return ParseHtmlListing(html, location.folder_url);
  }
  // The bucket's URL: the folder's without its key prefix.
  const std::string bucket_url =
      location.folder_url.substr(0, location.folder_url.size() - location.key_prefix.size());
  std::vector<std::string> names;
  std::set<std::string> tokens;
  std::optional<std::string> token;
  for (int page = 0;; ++page) {
    if (page == kMaxListingPages) {
      return Status::NotSupported(shown_as + ": its listing goes on past " + std::to_string(kMaxListingPages) +
                                  " pages (" + std::to_string(names.size()) +
                                  " files so far); give the dataset's location as FOLDER/NAME, which needs no listing");
    }
    std::vector<std::pair<std::string, std::string>> params = {
        {"delimiter", "/"}, {"list-type", "2"}, {"prefix", location.key_prefix}};
    if (token) params.emplace_back("continuation-token", *token);
    const std::string url = bucket_url + "?" + CanonicalQuery(std::move(params));
    UREC_ASSIGN_OR_RETURN(std::string xml, fetch(url, kMaxListingPageBytes));
    UREC_ASSIGN_OR_RETURN(ListingPage listed, ParseS3ListingPage(xml, location.key_prefix, url));
    names.insert(names.end(), listed.names.begin(), listed.names.end());
    if (!listed.next_token) return names;
    if (!tokens.insert(*listed.next_token).second) {
      return Status::Corruption(url + ": the listing's next page is one already read (its continuation token "
                                "came back): a server paging in a loop");
    }
    token = std::move(listed.next_token);
  }
}

}  // namespace unirecord::remote
