#include "unirecord/status.h"

#include <gtest/gtest.h>

namespace unirecord {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  UREC_ASSIGN_OR_RETURN(int h, Half(x));
  UREC_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckEven(int x) {
  UREC_RETURN_IF_ERROR(Half(x).status());
  return Status::OK();
}

TEST(StatusTest, OkAndErrorStrings) {
  EXPECT_TRUE(Status::OK().ok());
  EXPECT_EQ(Status::OK().ToString(), "OK");
  Status s = Status::Corruption("x.urec: bad magic");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.ToString(), "Corruption: x.urec: bad magic");
  EXPECT_EQ(s.WithContext("opening").message(), "opening: x.urec: bad magic");
  EXPECT_EQ(s.WithContext("opening").code(), StatusCode::kCorruption);
}

TEST(StatusTest, ResultPropagation) {
  EXPECT_EQ(Quarter(8).value(), 2);
  Result<int> r = Quarter(6);  // 6 -> 3 -> odd
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(5).code(), StatusCode::kInvalidArgument);
}

TEST(StatusTest, ResultFromOkStatusIsAnError) {
  Result<int> r = Status::OK();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(StatusTest, KeyNotFoundHasItsOwnCodeAndName) {
  Status s = Status::KeyNotFound("no field named 'x'");
  EXPECT_EQ(s.code(), StatusCode::kKeyNotFound);
  EXPECT_NE(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "KeyNotFound: no field named 'x'");
}

TEST(StatusTest, UnavailableHasItsOwnCodeAndName) {
  Status s = Status::Unavailable("http://h/x.urec: HTTP 503 after 5 attempts");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.ToString(), "Unavailable: http://h/x.urec: HTTP 503 after 5 attempts");
}

// Before: a NUL in a field name ended the message where it was printed, and
// a 2 MB name was echoed whole (issue 47).
TEST(StatusTest, MessageTextEscapesControlBytesAndBoundsItsLength) {
  EXPECT_EQ(MessageText(std::string("a\0b\n\x7F", 5)), "a\\x00b\\x0A\\x7F");
  EXPECT_EQ(MessageText("caf\xC3\xA9"), "caf\xC3\xA9");  // UTF-8 as it is
  EXPECT_EQ(MessageText(std::string(kMaxMessageTextBytes, 'x')), std::string(kMaxMessageTextBytes, 'x'));
  const std::string huge(2 << 20, 'n');
  EXPECT_EQ(MessageText(huge), std::string(kMaxMessageTextBytes, 'n') + "... (2097152 bytes)");
  // Cut before a character, never inside one.
  std::string accents = "x";
  for (int i = 0; i < 200; ++i) accents += "\xC3\xA9";
  const std::string shown = MessageText(accents);
  EXPECT_EQ(shown, "x" + accents.substr(1, kMaxMessageTextBytes) + "... (401 bytes)");
  // Bytes that are no UTF-8 at all are bounded too.
  EXPECT_EQ(MessageText(std::string(1000, '\x80')),
            std::string(kMaxMessageTextBytes + 3, '\x80') + "... (1000 bytes)");
}

// The check does not depend on NDEBUG: status_test builds as the library
// does, and the message carries the error that was ignored.
TEST(StatusDeathTest, ValueOfAnErrorAbortsWithTheStatus) {
  const Result<int> error = Half(3);
  EXPECT_DEATH((void)error.value(), "value\\(\\) of an error Result: InvalidArgument");
  EXPECT_DEATH((void)*error, "value\\(\\) of an error Result");
  Result<std::string> text = Status::NotFound("x");
  EXPECT_DEATH((void)text->size(), "value\\(\\) of an error Result: NotFound: x");
}

}  // namespace
}  // namespace unirecord
