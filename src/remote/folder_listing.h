// The listing of a remote folder: the names of the files directly in it,
// from an HTML index page (nginx's autoindex, Apache's) or from S3
// ListObjectsV2, every page of it (docs/remote.md "What is fetched, and
// when"). What the names hold is judged by format::FindFolderDatasets, as
// for a local directory.
#ifndef UNIRECORD_REMOTE_FOLDER_LISTING_H_
#define UNIRECORD_REMOTE_FOLDER_LISTING_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "remote/location.h"
#include "unirecord/status.h"

namespace unirecord::remote {

// Pages of an S3 listing read at most (S3 answers up to 1,000 keys a page:
// a million keys), and bytes of one page (or of an HTML index page).
inline constexpr int kMaxListingPages = 1000;
inline constexpr uint64_t kMaxListingPageBytes = 16 << 20;

// A query string in SigV4's canonical form: each name and value
// percent-encoded (RFC 3986: all but A-Z a-z 0-9 - _ . ~, '/' included),
// sorted by name, then value. libcurl 7.88 signs the query as it is given,
// so every signed request's query is built here.
std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params);

// One page of an S3 ListObjectsV2 answer: the names of its keys directly
// under `key_prefix` (the prefix taken off; the folder's own key and
// deeper keys left out) and, when it is truncated, the token of the next
// page. Corruption naming `url` for an answer that is not a listing, an
// element left open, a key outside the prefix, or a truncated page
// without a NextContinuationToken.
struct ListingPage {
  std::vector<std::string> names;
  std::optional<std::string> next_token;
};
Result<ListingPage> ParseS3ListingPage(const std::string& xml, const std::string& key_prefix, const std::string& url);

// The names of the files an HTML index page of `folder_url` links to
// (hrefs, relative or absolute, entities and %XX decoded); links to
// folders, to other places and to the page itself (sort orders) left out.
std::vector<std::string> ParseHtmlListing(const std::string& html, const std::string& folder_url);

// GET `url`, refused over `max_bytes` (HttpClient::GetString).
using FetchListing = std::function<Result<std::string>(const std::string& url, uint64_t max_bytes)>;

// Every file name of the folder at `location`: its HTML index page, or its
// S3 listing followed from page to page by continuation-token. Corruption
// when a token comes back that was given before (a server paging in a
// loop), NotSupported past kMaxListingPages pages; both name `shown_as`
// (the location as given) and the way around a listing, FOLDER/NAME.
Result<std::vector<std::string>> ListFolder(const Location& location, const FetchListing& fetch,
                                            const std::string& shown_as);

}  // namespace unirecord::remote

#endif  // UNIRECORD_REMOTE_FOLDER_LISTING_H_
