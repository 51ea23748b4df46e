// SigV4Signer (the signing of HttpClient's S3 requests, by libcurl) against
// signatures AWS published, not against our own computation:
//
// - AWS's Signature Version 4 test suite (aws-sig-v4-test-suite, 2015-08-30:
//   access key AKIDEXAMPLE, secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY,
//   20150830T123600Z, us-east-1, service "service", host
//   example.amazonaws.com); the expected Authorization headers as
//   aws/aws-sdk-js-v3 carries them, packages/signature-v4/src/suite.fixture.ts.
// - The IAM ListUsers example of AWS's Signature Version 4 signing process
//   (AWS General Reference, "Create a canonical request" to "Add the
//   signature to the HTTP request": GET
//   https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08, canonical
//   request hash f536975d..., signature 5d672d79...).
// - The "GET Bucket (List Objects)" example of the Amazon S3 API Reference,
//   "Signature Calculations for the Authorization Header: Transferring
//   Payload in a Single Chunk" (AKIAIOSFODNN7EXAMPLE, 20130524T000000Z,
//   examplebucket): an S3 listing signed with the very headers HttpClient
//   sends (SigV4Signer::S3Headers) and its query built by CanonicalQuery,
//   as ListFolder builds it.
// The IAM and S3 signatures were also recomputed from their canonical
// requests with Python's hmac, and agree.
//
// The request goes through libcurl for real, to a server on 127.0.0.1 that
// the test runs: what is checked is the Authorization header it received.
// libcurl takes the date from the X-Amz-Date header given; HttpClient gives
// none, and libcurl stamps the clock's.
#include "remote/http_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "remote/folder_listing.h"

namespace unirecord::remote {
namespace {

constexpr char kSuiteDate[] = "X-Amz-Date: 20150830T123600Z";

AwsCredentials SuiteCredentials(const std::string& region = "us-east-1") {
  AwsCredentials credentials;
  credentials.access_key = "AKIDEXAMPLE";
  credentials.secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  credentials.region = region;
  return credentials;
}

size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

// Sends METHOD `url` signed by `signer`, with `body` when given, to a
// server on 127.0.0.1 (whatever the URL's host: CURLOPT_CONNECT_TO) that
// reads one request and answers 200; the request as it arrived.
std::string SendSigned(const SigV4Signer& signer, const std::string& method, const std::string& url,
                       const char* body = nullptr) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(listen(listener, 1), 0);
  EXPECT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  std::string request;
  std::thread server([&] {
    const int connection = accept(listener, nullptr, nullptr);
    if (connection < 0) return;
    char buffer[4096];
    // The head, then as many body bytes as it announces.
    for (ssize_t n; (n = read(connection, buffer, sizeof(buffer))) > 0;) {
      request.append(buffer, static_cast<size_t>(n));
      const size_t head_end = request.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      const size_t length_at = request.find("\r\nContent-Length: ");
      const size_t body_size = length_at < head_end ? std::stoul(request.substr(length_at + 18)) : 0;
      if (request.size() >= head_end + 4 + body_size) break;
    }
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    EXPECT_EQ(write(connection, answer.data(), answer.size()), static_cast<ssize_t>(answer.size()));
    close(connection);
  });
  CURL* curl = curl_easy_init();
  curl_slist* connect_to = curl_slist_append(nullptr, ("::127.0.0.1:" + std::to_string(ntohs(address.sin_port))).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECT_TO, connect_to);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (method == "POST") curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body != nullptr ? body : "");
  signer.Sign(curl);
  const CURLcode code = curl_easy_perform(curl);
  EXPECT_EQ(code, CURLE_OK) << curl_easy_strerror(code);
  curl_easy_cleanup(curl);
  curl_slist_free_all(connect_to);
  server.join();
  close(listener);
  return request;
}

// The value of the Authorization header of `request`.
std::string Authorization(const std::string& request) {
  const std::string name = "\r\nAuthorization: ";
  const size_t at = request.find(name);
  if (at == std::string::npos) return "(no Authorization header in: " + request + ")";
  return request.substr(at + name.size(), request.find("\r\n", at + name.size()) - at - name.size());
}

std::string SuiteAuthorization(const std::string& signed_headers, const std::string& signature) {
  return "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=" +
         signed_headers + ", Signature=" + signature;
}

class SigV4Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

struct SuiteCase {
  const char* name;
  const char* method;
  std::string target;  // path and query, the query canonical
  std::vector<std::string> headers;
  const char* body;
  const char* signed_headers;
  const char* signature;
};

TEST_F(SigV4Test, AwsTestSuite) {
  const std::string unreserved = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const std::vector<SuiteCase> cases = {
      {"get-vanilla", "GET", "/", {}, nullptr, "host;x-amz-date",
       "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
      {"get-vanilla-query-order-key-case", "GET", "/?" + CanonicalQuery({{"Param2", "value2"}, {"Param1", "value1"}}),
       {}, nullptr, "host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
      {"get-vanilla-query-unreserved", "GET", "/?" + CanonicalQuery({{unreserved, unreserved}}), {}, nullptr,
       "host;x-amz-date", "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"},
      {"get-vanilla-utf8-query", "GET", "/?" + CanonicalQuery({{"\xe1\x88\xb4", "bar"}}), {}, nullptr,
       "host;x-amz-date", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"},
      {"get-unreserved", "GET", "/" + unreserved, {}, nullptr, "host;x-amz-date",
       "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"},
      {"get-utf8", "GET", "/%E1%88%B4", {}, nullptr, "host;x-amz-date",
       "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"},
      {"post-vanilla", "POST", "/", {}, nullptr, "host;x-amz-date",
       "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
      {"post-vanilla-query", "POST", "/?" + CanonicalQuery({{"Param1", "value1"}}), {}, nullptr, "host;x-amz-date",
       "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"},
      {"post-vanilla-query-nonunreserved", "POST",
       "/?" + CanonicalQuery({{"@#$%^", ""}, {"+", "/,?><`\";:\\|][{}"}}), {}, nullptr, "host;x-amz-date",
       "66c82657c86e26fb25238d0e69f011edc4c6df5ae71119d7cb98ed9b87393c1e"},
      {"post-header-key-sort", "POST", "/", {"My-Header1: value1"}, nullptr, "host;my-header1;x-amz-date",
       "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"},
      {"post-header-value-case", "POST", "/", {"My-Header1: VALUE1"}, nullptr, "host;my-header1;x-amz-date",
       "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"},
      {"post-x-www-form-urlencoded", "POST", "/", {"Content-Type: application/x-www-form-urlencoded"},
       "Param1=value1", "content-type;host;x-amz-date",
       "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
      {"post-x-www-form-urlencoded-parameters", "POST", "/",
       {"Content-Type: application/x-www-form-urlencoded; charset=utf8"}, "Param1=value1",
       "content-type;host;x-amz-date", "1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe"},
  };
  for (const SuiteCase& c : cases) {
    std::vector<std::string> headers = c.headers;
    headers.push_back(kSuiteDate);
    SigV4Signer signer(SuiteCredentials(), "service", headers);
    const std::string request = SendSigned(signer, c.method, "http://example.amazonaws.com" + c.target, c.body);
    EXPECT_EQ(Authorization(request), SuiteAuthorization(c.signed_headers, c.signature)) << c.name;
  }
}

TEST_F(SigV4Test, IamListUsersExample) {
  SigV4Signer signer(SuiteCredentials(), "iam",
                     {"Content-Type: application/x-www-form-urlencoded; charset=utf-8", kSuiteDate});
  const std::string url =
      "http://iam.amazonaws.com/?" + CanonicalQuery({{"Version", "2010-05-08"}, {"Action", "ListUsers"}});
  EXPECT_EQ(url, "http://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08");
  EXPECT_EQ(Authorization(SendSigned(signer, "GET", url)),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date, "
            "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
}

TEST_F(SigV4Test, S3ListObjectsExampleWithHttpClientsHeaders) {
  AwsCredentials credentials;
  credentials.access_key = "AKIAIOSFODNN7EXAMPLE";
  credentials.secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  credentials.region = "us-east-1";
  std::vector<std::string> headers = SigV4Signer::S3Headers(credentials);
  ASSERT_EQ(headers.size(), 1u);  // no session token: x-amz-content-sha256 only
  headers.push_back("x-amz-date: 20130524T000000Z");
  SigV4Signer signer(credentials, "s3", headers);
  const std::string request = SendSigned(
      signer, "GET", "http://examplebucket.s3.amazonaws.com/?" + CanonicalQuery({{"prefix", "J"}, {"max-keys", "2"}}));
  EXPECT_NE(request.find("GET /?max-keys=2&prefix=J HTTP/1.1\r\n"), std::string::npos) << request;
  EXPECT_EQ(Authorization(request),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
            "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST_F(SigV4Test, SessionTokenIsSentAndSigned) {
  AwsCredentials credentials = SuiteCredentials("eu-west-3");
  credentials.session_token = "tok/en+1";
  SigV4Signer signer(credentials, "s3", SigV4Signer::S3Headers(credentials));
  const std::string request = SendSigned(signer, "GET", "http://examplebucket.s3.amazonaws.com/ds/train.uset");
  EXPECT_NE(request.find("\r\nx-amz-security-token: tok/en+1\r\n"), std::string::npos) << request;
  const std::string authorization = Authorization(request);
  EXPECT_EQ(authorization.rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0u) << authorization;
  EXPECT_NE(authorization.find("/eu-west-3/s3/aws4_request, "
                               "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "),
            std::string::npos)
      << authorization;
}

}  // namespace
}  // namespace unirecord::remote
