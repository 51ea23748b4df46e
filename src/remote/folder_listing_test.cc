// Remote folder listings: S3 ListObjectsV2 pages (truncated ones and their
// continuation tokens, malformed ones), the pages followed to the end, a
// server paging in a loop, the bound on pages; HTML index pages; the
// canonical query every listing request is signed with.
#include "remote/folder_listing.h"

#include <gtest/gtest.h>

#include <map>

namespace unirecord::remote {
namespace {

using Names = std::vector<std::string>;

bool Mentions(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

// A ListObjectsV2 answer as S3 writes it (delimiter "/", prefix `prefix`).
std::string Page(const std::string& prefix, const Names& keys, const std::string& next_token = "",
                 const std::string& token = "") {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name>"
                    "<Prefix>" + prefix + "</Prefix>";
  if (!token.empty()) xml += "<ContinuationToken>" + token + "</ContinuationToken>";
  xml += "<KeyCount>" + std::to_string(keys.size()) + "</KeyCount><MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter>";
  xml += std::string("<IsTruncated>") + (next_token.empty() ? "false" : "true") + "</IsTruncated>";
  if (!next_token.empty()) xml += "<NextContinuationToken>" + next_token + "</NextContinuationToken>";
  for (const std::string& key : keys) {
    xml += "<Contents><Key>" + key + "</Key><LastModified>2026-01-02T03:04:05.000Z</LastModified>"
           "<ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>0</Size>"
           "<StorageClass>STANDARD</StorageClass></Contents>";
  }
  xml += "<CommonPrefixes><Prefix>" + prefix + "sub/</Prefix></CommonPrefixes></ListBucketResult>";
  return xml;
}

Location S3Folder() {
  Location location;
  location.original = "s3://bucket/ds/";
  location.s3 = true;
  location.folder_url = "http://s3.test/bucket/ds/";
  location.bucket = "bucket";
  location.key_prefix = "ds/";
  location.endpoint = "http://s3.test";
  location.path_style = true;
  return location;
}

// A server answering each listing URL from `pages`, recording the URLs asked.
struct FakeServer {
  std::map<std::string, std::string> pages;
  Names asked;
  FetchListing fetch() {
    return [this](const std::string& url, uint64_t max_bytes) -> Result<std::string> {
      EXPECT_EQ(max_bytes, kMaxListingPageBytes);
      asked.push_back(url);
      auto it = pages.find(url);
      if (it == pages.end()) return Status::NotFound(url + ": HTTP 404");
      return it->second;
    };
  }
};

const std::string kFirstPage = "http://s3.test/bucket/?delimiter=%2F&list-type=2&prefix=ds%2F";

std::string PageUrl(const std::string& token) {
  return "http://s3.test/bucket/?" + CanonicalQuery({{"continuation-token", token}, {"delimiter", "/"},
                                                     {"list-type", "2"}, {"prefix", "ds/"}});
}

TEST(CanonicalQueryTest, SortsByNameAndEncodesAllButUnreserved) {
  EXPECT_EQ(CanonicalQuery({{"prefix", "J"}, {"max-keys", "2"}}), "max-keys=2&prefix=J");
  EXPECT_EQ(CanonicalQuery({{"prefix", "ds/"}, {"list-type", "2"}, {"delimiter", "/"}}),
            "delimiter=%2F&list-type=2&prefix=ds%2F");
  // S3's tokens are base64: '+', '/' and '=' are encoded.
  EXPECT_EQ(CanonicalQuery({{"continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="}}),
            "continuation-token=1ueGcxLPRx1Tr%2FXYExHnhbYLgveDs2J%2Fwm36Hy4vbOwM%3D");
  EXPECT_EQ(CanonicalQuery({{"a", "x y+z"}, {"-._~", "\xe1\x88\xb4"}}), "-._~=%E1%88%B4&a=x%20y%2Bz");
  EXPECT_EQ(CanonicalQuery({{"b", "2"}, {"b", "1"}, {"B", "3"}}), "B=3&b=1&b=2");  // byte order, then values
}

TEST(ParseS3ListingPageTest, TruncatedPageGivesItsNamesAndTheNextToken) {
  const std::string token = "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=";
  Result<ListingPage> page = ParseS3ListingPage(
      Page("ds/", {"ds/", "ds/a-00000-of-00002.g000001.urec", "ds/a&amp;b.uset", "ds/deeper/x.uset"}, token), "ds/",
      kFirstPage);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  // The folder's own key and a key below a subfolder are not files of it.
  EXPECT_EQ(page->names, (Names{"a-00000-of-00002.g000001.urec", "a&b.uset"}));
  ASSERT_TRUE(page->next_token.has_value());
  EXPECT_EQ(*page->next_token, token);
}

TEST(ParseS3ListingPageTest, LastPageHasNoToken) {
  Result<ListingPage> page = ParseS3ListingPage(Page("ds/", {"ds/a.uset"}, "", "previous"), "ds/", kFirstPage);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->names, Names{"a.uset"});
  EXPECT_FALSE(page->next_token.has_value());
  Result<ListingPage> empty = ParseS3ListingPage(Page("ds/", {}), "ds/", kFirstPage);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->names.empty());
}

TEST(ParseS3ListingPageTest, TruncatedWithoutTokenIsCorruption) {
  std::string xml = Page("ds/", {"ds/a.uset"});
  xml.replace(xml.find("<IsTruncated>false"), 18, "<IsTruncated>true");
  Result<ListingPage> page = ParseS3ListingPage(xml, "ds/", kFirstPage);
  ASSERT_EQ(page.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Mentions(page.status(), kFirstPage + ": a truncated listing (IsTruncated true) without a "
                                                   "NextContinuationToken"));
}

TEST(ParseS3ListingPageTest, TruncatedWithAnEmptyTokenIsCorruption) {
  std::string xml = Page("ds/", {"ds/a.uset"}, "x");
  xml.replace(xml.find("<NextContinuationToken>x<"), 25, "<NextContinuationToken><");
  EXPECT_EQ(ParseS3ListingPage(xml, "ds/", kFirstPage).status().code(), StatusCode::kCorruption);
}

TEST(ParseS3ListingPageTest, IsTruncatedNeitherTrueNorFalseIsCorruption) {
  std::string xml = Page("ds/", {"ds/a.uset"}, "x");
  xml.replace(xml.find("<IsTruncated>true"), 17, "<IsTruncated>TRUE");
  Result<ListingPage> page = ParseS3ListingPage(xml, "ds/", kFirstPage);
  ASSERT_EQ(page.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Mentions(page.status(), "neither true nor false"));
}

TEST(ParseS3ListingPageTest, NotAListingIsCorruption) {
  Result<ListingPage> page = ParseS3ListingPage("<html><a href=\"a.uset\">a.uset</a></html>", "ds/", kFirstPage);
  ASSERT_EQ(page.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Mentions(page.status(), "not an S3 ListObjectsV2 answer"));
}

TEST(ParseS3ListingPageTest, KeyLeftOpenIsCorruption) {
  std::string xml = Page("ds/", {"ds/a.uset"});
  xml.erase(xml.find("</Key>"));  // cut short inside the key
  Result<ListingPage> page = ParseS3ListingPage(xml, "ds/", kFirstPage);
  ASSERT_EQ(page.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Mentions(page.status(), "leaves a <Key> open"));
}

TEST(ParseS3ListingPageTest, MalformedCharacterReferenceIsCorruption) {
  for (const std::string& key : {"ds/a&b.uset", "ds/a&#0;.uset", "ds/a&#xD800;.uset", "ds/a&nbsp;.uset"}) {
    Result<ListingPage> page = ParseS3ListingPage(Page("ds/", {key}), "ds/", kFirstPage);
    ASSERT_EQ(page.status().code(), StatusCode::kCorruption) << key;
    EXPECT_TRUE(Mentions(page.status(), "malformed character reference")) << key;
  }
  Result<ListingPage> numeric = ParseS3ListingPage(Page("ds/", {"ds/&#x61;&#98;.uset"}), "ds/", kFirstPage);
  ASSERT_TRUE(numeric.ok());
  EXPECT_EQ(numeric->names, Names{"ab.uset"});
}

TEST(ParseS3ListingPageTest, KeyOutsideThePrefixIsCorruption) {
  Result<ListingPage> page = ParseS3ListingPage(Page("ds/", {"other/a.uset"}), "ds/", kFirstPage);
  ASSERT_EQ(page.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Mentions(page.status(), "a key outside the prefix 'ds/'"));
}

TEST(ListFolderTest, FollowsContinuationTokensToTheLastPage) {
  FakeServer server;
  // Tokens as S3 writes them: base64, encoded in the next request's query.
  server.pages[kFirstPage] = Page("ds/", {"ds/a-00000-of-00001.g000001.urec"}, "tok/1+=");
  server.pages[PageUrl("tok/1+=")] = Page("ds/", {"ds/a-00000-of-00001.g000001.uidx"}, "tok/2+=", "tok/1+=");
  server.pages[PageUrl("tok/2+=")] = Page("ds/", {"ds/a.uset", "ds/b.uset"}, "", "tok/2+=");
  Result<Names> names = ListFolder(S3Folder(), server.fetch(), "s3://bucket/ds/");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (Names{"a-00000-of-00001.g000001.urec", "a-00000-of-00001.g000001.uidx", "a.uset", "b.uset"}));
  EXPECT_EQ(server.asked, (Names{kFirstPage, PageUrl("tok/1+="), PageUrl("tok/2+=")}));
  EXPECT_EQ(PageUrl("tok/1+="),
            "http://s3.test/bucket/?continuation-token=tok%2F1%2B%3D&delimiter=%2F&list-type=2&prefix=ds%2F");
}

TEST(ListFolderTest, TokenThatComesBackIsCorruption) {
  FakeServer server;
  server.pages[kFirstPage] = Page("ds/", {"ds/a.uset"}, "A");
  server.pages[PageUrl("A")] = Page("ds/", {"ds/b.uset"}, "B");
  server.pages[PageUrl("B")] = Page("ds/", {"ds/c.uset"}, "A");  // back to page 2: for ever
  Result<Names> names = ListFolder(S3Folder(), server.fetch(), "s3://bucket/ds/");
  ASSERT_EQ(names.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Mentions(names.status(), PageUrl("B") + ": the listing's next page is one already read"));
  EXPECT_EQ(server.asked.size(), 3u);
}

TEST(ListFolderTest, PageThatNamesItselfIsCorruption) {
  FakeServer server;
  server.pages[kFirstPage] = Page("ds/", {"ds/a.uset"}, "A");
  server.pages[PageUrl("A")] = Page("ds/", {"ds/b.uset"}, "A", "A");
  EXPECT_EQ(ListFolder(S3Folder(), server.fetch(), "s3://bucket/ds/").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(server.asked.size(), 2u);
}

TEST(ListFolderTest, StopsAtTheBoundOnPages) {
  FakeServer server;
  server.pages[kFirstPage] = Page("ds/", {"ds/k0"}, "t1");
  for (int p = 1; p <= kMaxListingPages + 5; ++p) {
    server.pages[PageUrl("t" + std::to_string(p))] =
        Page("ds/", {"ds/k" + std::to_string(p)}, "t" + std::to_string(p + 1));
  }
  Result<Names> names = ListFolder(S3Folder(), server.fetch(), "s3://bucket/ds/");
  ASSERT_EQ(names.status().code(), StatusCode::kNotSupported);
  EXPECT_TRUE(Mentions(names.status(), "s3://bucket/ds/: its listing goes on past 1000 pages (1000 files so far); "
                                       "give the dataset's location as FOLDER/NAME"));
  EXPECT_EQ(server.asked.size(), static_cast<size_t>(kMaxListingPages));
}

TEST(ListFolderTest, ErrorOfAPageIsReturned) {
  FakeServer server;
  server.pages[kFirstPage] = Page("ds/", {"ds/a.uset"}, "gone");
  Result<Names> names = ListFolder(S3Folder(), server.fetch(), "s3://bucket/ds/");
  ASSERT_EQ(names.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Mentions(names.status(), PageUrl("gone")));
}

TEST(ListFolderTest, HtmlFolderIsOnePage) {
  Location location;
  location.folder_url = "http://h/data/ds/";
  FakeServer server;
  server.pages["http://h/data/ds/"] = "<a href=\"../\">../</a><a href=\"train.uset\">train.uset</a>";
  Result<Names> names = ListFolder(location, server.fetch(), "http://h/data/ds/");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, Names{"train.uset"});
  EXPECT_EQ(server.asked, Names{"http://h/data/ds/"});
}

TEST(ParseHtmlListingTest, NginxAutoindex) {
  const std::string html =
      "<html>\r\n<head><title>Index of /data/ds/</title></head>\r\n<body>\r\n<h1>Index of /data/ds/</h1><hr><pre>"
      "<a href=\"../\">../</a>\r\n"
      "<a href=\"sub/\">sub/</a>                                            02-Jan-2026 03:04       -\r\n"
      "<a href=\"train-00000-of-00002.g000001.urec\">train-00000-of-00002.g000001.urec</a> 02-Jan-2026 1234\r\n"
      "<a href=\"my%20set.uset\">my set.uset</a>                                02-Jan-2026 03:04     512\r\n"
      "<a href=\"a%26b.uset\">a&amp;b.uset</a>                                  02-Jan-2026 03:04     512\r\n"
      "<a href=\"very-long-name-cut-in-the-text.uset\">very-long-name-cut-in-the-te..&gt;</a> 02-Jan-2026 1\r\n"
      "</pre><hr></body>\r\n</html>\r\n";
  EXPECT_EQ(ParseHtmlListing(html, "http://h/data/ds/"),
            (Names{"a&b.uset", "my set.uset", "train-00000-of-00002.g000001.urec",
                   "very-long-name-cut-in-the-text.uset"}));
}

TEST(ParseHtmlListingTest, ApacheAndAbsoluteLinks) {
  const std::string html =
      "<tr><th><a href=\"?C=N;O=D\">Name</a></th><th><a href='?C=M;O=A'>Last modified</a></th></tr>"
      "<tr><td><a href=\"/data/\">Parent Directory</a></td></tr>"
      "<tr><td><A HREF = 'train.uset'>train.uset</A></td></tr>"
      "<tr><td><a href=/data/ds/val.uset>val.uset</a></td></tr>"
      "<tr><td><a href=\"http://h/data/ds/test.uset#top\">test.uset</a></td></tr>"
      "<tr><td><a href=\"//h/data/ds/x.uset\">x.uset</a></td></tr>"
      "<tr><td><a href=\"./y.uset\">y.uset</a></td></tr>"
      "<tr><td><a href=\"http://elsewhere/data/ds/no.uset\">no</a></td></tr>"
      "<tr><td><a href=\"/data/other/no.uset\">no</a></td></tr>"
      "<tr><td><a href=\"sub/no.uset\">no</a></td></tr>";
  EXPECT_EQ(ParseHtmlListing(html, "http://h/data/ds/"),
            (Names{"test.uset", "train.uset", "val.uset", "x.uset", "y.uset"}));
}

}  // namespace
}  // namespace unirecord::remote
