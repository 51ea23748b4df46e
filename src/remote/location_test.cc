// Remote locations: http(s) folders and names, S3 path-style and
// virtual-hosted addressing, endpoint override, credentials and region from
// the environment and ~/.aws files.
#include "remote/location.h"

#include <gtest/gtest.h>

#include "util/files_testing.h"

namespace unirecord::remote {
namespace {

TEST(LocationTest, HttpFolderAndNames) {
  RemoteOptions o;
  std::map<std::string, std::string> env;
  Location folder = ParseLocation("http://127.0.0.1:8080/data/train/", o, &env).value();
  EXPECT_EQ(folder.folder_url, "http://127.0.0.1:8080/data/train/");
  EXPECT_EQ(folder.dataset_name, "");
  EXPECT_FALSE(folder.s3);
  Location named = ParseLocation("https://h/data/train.uset", o, &env).value();
  EXPECT_EQ(named.folder_url, "https://h/data/");
  EXPECT_EQ(named.dataset_name, "train");
  EXPECT_EQ(named.FileUrl("train.uset"), "https://h/data/train.uset");
  EXPECT_EQ(ParseLocation("http://h/d/train", o, &env)->dataset_name, "train");
  EXPECT_EQ(ParseLocation("http:///x", o, &env).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLocation("http://h/x?y=1", o, &env).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(IsRemoteLocation("/data/train"));
  EXPECT_TRUE(IsRemoteLocation("s3://b/k"));
}

TEST(LocationTest, S3AddressingStyles) {
  std::map<std::string, std::string> env{{"AWS_REGION", "eu-west-3"}};
  RemoteOptions o;
  Location aws = ParseLocation("s3://my-bucket/sets/train/", o, &env).value();
  EXPECT_EQ(aws.folder_url, "https://my-bucket.s3.eu-west-3.amazonaws.com/sets/train/");
  EXPECT_EQ(aws.bucket, "my-bucket");
  EXPECT_EQ(aws.key_prefix, "sets/train/");
  // A dotted bucket is path-style on AWS (the TLS certificate is *.s3...).
  EXPECT_EQ(ParseLocation("s3://my.bucket/k/train", o, &env)->folder_url,
            "https://s3.eu-west-3.amazonaws.com/my.bucket/k/");
  // A custom endpoint: path-style unless told otherwise.
  env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/";
  EXPECT_EQ(ParseLocation("s3://b/k/train.uset", o, &env)->folder_url, "http://127.0.0.1:9000/b/k/");
  o.s3_addressing = "virtual";
  EXPECT_EQ(ParseLocation("s3://b/k/train.uset", o, &env)->folder_url, "http://b.127.0.0.1:9000/k/");
  o.s3_addressing = "path";
  o.s3_endpoint = "http://localhost:1234";  // the option beats the environment
  EXPECT_EQ(ParseLocation("s3://b/train", o, &env)->folder_url, "http://localhost:1234/b/");
  o.s3_addressing = "sideways";
  EXPECT_EQ(ParseLocation("s3://b/train", o, &env).status().code(), StatusCode::kInvalidArgument);
  o.s3_addressing = "auto";
  o.s3_endpoint = "http://h:1/with/path";
  EXPECT_EQ(ParseLocation("s3://b/train", o, &env).status().code(), StatusCode::kInvalidArgument);
}

TEST(LocationTest, CredentialsFromEnvironmentThenFiles) {
  testing::ScratchDir home;
  home.Write(".aws/credentials",
             "[default]\naws_access_key_id = AKIDEFAULT\naws_secret_access_key = s3cr3t\n"
             "[ci]\naws_access_key_id=AKICI\naws_secret_access_key=cisecret\naws_session_token=tok\n");
  home.Write(".aws/config", "[default]\nregion = us-west-2\n[profile ci]\nregion = ap-south-1\n");
  std::map<std::string, std::string> env{{"HOME", home.path()}};
  AwsCredentials c = LoadAwsCredentials(&env);
  EXPECT_EQ(c.access_key, "AKIDEFAULT");
  EXPECT_EQ(c.secret_key, "s3cr3t");
  EXPECT_EQ(c.region, "us-west-2");
  env["AWS_PROFILE"] = "ci";
  c = LoadAwsCredentials(&env);
  EXPECT_EQ(c.access_key, "AKICI");
  EXPECT_EQ(c.session_token, "tok");
  EXPECT_EQ(c.region, "ap-south-1");
  env["AWS_ACCESS_KEY_ID"] = "AKIENV";
  env["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  env["AWS_REGION"] = "eu-north-1";
  c = LoadAwsCredentials(&env);
  EXPECT_EQ(c.access_key, "AKIENV");
  EXPECT_EQ(c.secret_key, "envsecret");
  EXPECT_EQ(c.region, "eu-north-1");
  std::map<std::string, std::string> empty;
  EXPECT_EQ(LoadAwsCredentials(&empty).region, "us-east-1");
  EXPECT_EQ(LoadAwsCredentials(&empty).access_key, "");
}

}  // namespace
}  // namespace unirecord::remote
