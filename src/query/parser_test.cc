// The query parser: malformed expressions give InvalidArgument naming the
// problem and its column, with the expression and a caret under the spot;
// well-formed ones become the value ranges they mean.
#include "query/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "index/record_table.h"

namespace unirecord::query {
namespace {

Schema TestSchema() {
  return Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::String("path"),
                       Field::Int32("width", true), Field::Float64("score", true), Field::Float32("ratio"),
                       Field::Array("mean", FieldType::kFloat32, {3}), Field::Int64("and_more")})
      .value();
}

const std::map<std::string, std::string> kMetadata = {{"classes", "n01440764\nn01443537\ngoldfish"}};

struct BadCase {
  const char* expression;
  size_t column;     // 1-based
  const char* text;  // part of the message
};

// InvalidArgument at c.column with c.text, and a caret line under the column.
void ExpectParseError(const BadCase& c, const Result<Node>& parsed) {
  ASSERT_FALSE(parsed.ok());
  const Status& s = parsed.status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("column " + std::to_string(c.column) + ": "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(c.text), std::string::npos) << s.message();
  const std::string& m = s.message();
  const std::string caret_line = m.substr(m.rfind('\n') + 1);
  EXPECT_EQ(caret_line, "  " + std::string(c.column - 1, ' ') + "^");
}

TEST(ParserTest, MalformedExpressionsNameProblemAndColumn) {
  const BadCase cases[] = {
      {"", 1, "empty expression"},
      {"   ", 1, "empty expression"},
      {"widht > 3", 1, "unknown field 'widht'"},
      {"label == 3 and colour == 2", 16, "unknown field 'colour'"},
      {"image == 3", 1, "bytes field"},
      {"mean > 0", 1, "array"},
      {"width == 2.5", 10, "not an integer"},
      {"width == nan", 10, "not an integer"},
      {"width == -inf", 10, "not an integer"},
      {"score == \"x\"", 10, "a string cannot be compared"},
      {"path == 3", 9, "write the value in quotes"},
      {"label == \"tench\"", 10, "no class named \"tench\""},
      {"label == 9223372036854775808", 10, "out of the int64 range"},
      {"label == -9223372036854775809", 10, "out of the int64 range"},
      {"label == 99999999999999999999999", 10, "out of the int64 range"},
      {"score > 1e400", 9, "out of the float64 range"},
      {"score > 1.2.3", 9, "bad number '1.2.3'"},
      {"label == 12abc", 10, "bad number '12abc'"},
      {"score == 9007199254740993", 10, "not exactly a float64"},
      {"(label == 1", 1, "unbalanced '('"},
      {"label == 1)", 11, "unbalanced ')'"},
      {"((label == 1) or width < 3", 1, "unbalanced '('"},
      {"label in [1, 2", 10, "unbalanced '['"},
      {"label in (1, 2)", 10, "expected '['"},
      {"label in [1 2]", 13, "expected ',' or ']'"},
      {"label in [1,]", 13, "expected a value"},
      {"label = 3", 7, "use '=='"},
      {"label ! 3", 7, "use '!='"},
      {"label == 3 && width > 2", 12, "use 'and'"},
      {"label == 3 || width > 2", 12, "use 'or'"},
      {"label 3", 7, "expected an operator"},
      {"label", 6, "expected an operator"},
      {"label ==", 9, "expected a value"},
      {"label == and", 10, "expected a value"},
      {"label between 1 or 5", 17, "expected 'and' in 'between"},
      {"label == 1 and", 15, "expected a field name"},
      {"and label == 1", 1, "expected a field name"},
      {"label == 1 width == 2", 12, "expected 'and', 'or'"},
      {"path == \"abc", 9, "unterminated string"},
      {"path == 'a\\qb'", 11, "unknown escape"},
      {"`lab", 1, "unterminated field name"},
      {"label == 1 # comment", 12, "unexpected character '#'"},
      {"path == -\"x\"", 9, "a sign cannot precede a string"},
      {"not", 4, "expected a field name"},
      {"()", 2, "expected a field name"},
      {"label == 3 and (width > 2 or)", 29, "expected a field name"},
      {"label == \xC3\xA9", 10, "unexpected character byte 0xC3"},
      {"path == \"\xC3\xA9\" and x == 1", 17, "unknown field 'x'"},  // the column counts characters
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.expression);
    ExpectParseError(c, ParseExpression(c.expression, TestSchema(), kMetadata));
  }
}

TEST(ParserTest, DeepNestingIsRefusedNotACrash) {
  std::string deep(100000, '(');
  auto parsed = ParseExpression(deep + "label == 1", TestSchema(), kMetadata);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nested too deeply"), std::string::npos);
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  parsed = ParseExpression(nots + "label == 1", TestSchema(), kMetadata);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nested too deeply"), std::string::npos);
  // Just under the limit parses.
  std::string ok(kMaxQueryDepth - 1, '(');
  EXPECT_TRUE(ParseExpression(ok + "label == 1" + std::string(kMaxQueryDepth - 1, ')'), TestSchema(), kMetadata).ok());
}

uint64_t IntKey(int64_t v) { return index::IndexedOrderKey(FieldType::kInt64, index::IndexedBitsFromInt(v)); }
uint64_t FloatKey(double v) { return index::IndexedOrderKey(FieldType::kFloat64, index::IndexedBitsFromFloat(v)); }

Comparison Only(const std::string& expression) {
  auto parsed = ParseExpression(expression, TestSchema(), kMetadata);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->kind, Node::Kind::kComparison);
  return parsed->comparison;
}

TEST(ParserTest, IntegerComparisonsCoverTheFullRange) {
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  Comparison c = Only("label >= -9223372036854775808");
  EXPECT_TRUE(c.Matches(IntKey(kMin)));
  EXPECT_TRUE(c.Matches(IntKey(kMax)));
  c = Only("label < -9223372036854775808");
  EXPECT_TRUE(c.keys.empty());
  c = Only("label > 9223372036854775807");
  EXPECT_TRUE(c.keys.empty());
  c = Only("label != 9223372036854775807");
  EXPECT_TRUE(c.Matches(IntKey(kMax - 1)));
  EXPECT_FALSE(c.Matches(IntKey(kMax)));
  EXPECT_TRUE(c.Matches(IntKey(kMin)));
  c = Only("label not in [3, -1, 3]");
  EXPECT_FALSE(c.Matches(IntKey(3)));
  EXPECT_FALSE(c.Matches(IntKey(-1)));
  EXPECT_TRUE(c.Matches(IntKey(0)));
  EXPECT_TRUE(c.Matches(IntKey(kMin)));
  c = Only("label between 5 and 2");
  EXPECT_TRUE(c.keys.empty());
  c = Only("label == \"goldfish\"");
  EXPECT_TRUE(c.Matches(IntKey(2)));
  EXPECT_FALSE(c.Matches(IntKey(1)));
  c = Only("`label` IN []");
  EXPECT_TRUE(c.keys.empty());
}

TEST(ParserTest, FloatsUseTheTotalOrder) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Comparison c = Only("score == -0.0");
  EXPECT_TRUE(c.Matches(FloatKey(-0.0)));
  EXPECT_FALSE(c.Matches(FloatKey(0.0)));
  c = Only("score > inf");
  EXPECT_TRUE(c.Matches(FloatKey(nan)));
  EXPECT_FALSE(c.Matches(FloatKey(inf)));
  c = Only("score < -inf");
  EXPECT_TRUE(c.Matches(FloatKey(-nan)));
  EXPECT_FALSE(c.Matches(FloatKey(nan)));
  c = Only("score == nan");
  EXPECT_TRUE(c.Matches(FloatKey(nan)));
  c = Only("score == -nan");
  EXPECT_TRUE(c.Matches(FloatKey(std::copysign(nan, -1.0))));
  c = Only("score between -1 and 2.5e0");
  EXPECT_TRUE(c.Matches(FloatKey(-1.0)));
  EXPECT_TRUE(c.Matches(FloatKey(2.5)));
  EXPECT_FALSE(c.Matches(FloatKey(2.5000000001)));
  c = Only("score == .5");
  EXPECT_TRUE(c.Matches(FloatKey(0.5)));
}

TEST(ParserTest, StringsCompareBytewise) {
  Comparison c = Only("path < 'b'");
  EXPECT_TRUE(c.Matches(std::string_view("a\xff")));
  EXPECT_TRUE(c.Matches(std::string_view("")));
  EXPECT_FALSE(c.Matches(std::string_view("b")));
  c = Only("path != \"\"");
  EXPECT_FALSE(c.Matches(std::string_view("")));
  EXPECT_TRUE(c.Matches(std::string_view("x")));
  c = Only("path not in ['a', 'c']");
  EXPECT_TRUE(c.Matches(std::string_view("b")));
  EXPECT_FALSE(c.Matches(std::string_view("c")));
  EXPECT_TRUE(c.Matches(std::string_view("cc")));
  c = Only("path == 'say \\\"hi\\\"\\n'");
  EXPECT_TRUE(c.Matches(std::string_view("say \"hi\"\n")));
}

TEST(ParserTest, PrecedenceNotThenAndThenOr) {
  auto parsed = ParseExpression("label == 1 or not width == 2 and path == 'x'", TestSchema(), kMetadata);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->kind, Node::Kind::kOr);
  ASSERT_EQ(parsed->children.size(), 2u);
  const Node& conj = parsed->children[1];
  ASSERT_EQ(conj.kind, Node::Kind::kAnd);
  EXPECT_EQ(conj.children[0].kind, Node::Kind::kNot);
  EXPECT_TRUE(conj.scans);
  EXPECT_FALSE(parsed->children[0].scans);
  EXPECT_EQ(parsed->children[0].comparison.text, "label == 1");
  // Keywords are case-insensitive; a field whose name starts like one is a field.
  EXPECT_TRUE(ParseExpression("and_more == 1 AND label BETWEEN 1 AND 2", TestSchema(), kMetadata).ok());
}

}  // namespace
}  // namespace unirecord::query

namespace unirecord::query {
namespace {

// Lists of values (docs/query.md): `contains`, `any(f in [...])`, `len(f)`.
Schema ListSchema() {
  Field tags = Field::Array("tags", FieldType::kInt64, {kVariableDim});
  tags.indexed = true;
  return Schema::Make({tags, Field::Array("ids", FieldType::kUint16, {kVariableDim}),
                       Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}),
                       Field::Array("mean", FieldType::kFloat32, {3}), Field::Int64("len"), Field::String("path")})
      .value();
}

Result<Node> ParseList(const std::string& expression) { return ParseExpression(expression, ListSchema(), kMetadata); }

TEST(ParserListTest, ListComparisons) {
  auto n = ParseList("tags contains -9223372036854775808");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->comparison.test, Comparison::Test::kContains);
  EXPECT_TRUE(n->comparison.indexed);
  EXPECT_FALSE(n->scans);
  EXPECT_TRUE(n->comparison.Matches(IntKey(std::numeric_limits<int64_t>::min())));
  EXPECT_EQ(n->comparison.text, "tags contains -9223372036854775808");
  n = ParseList("ANY(ids in [3, 1, 3])");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->comparison.test, Comparison::Test::kContains);
  EXPECT_FALSE(n->comparison.indexed);  // no list index: a scan of the blobs
  EXPECT_TRUE(n->scans);
  EXPECT_EQ(n->comparison.keys.size(), 2u);  // distinct points
  EXPECT_EQ(n->comparison.text, "ANY(ids in [3, 1, 3])");
  n = ParseList("len(boxes) >= 2");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->comparison.test, Comparison::Test::kLength);
  EXPECT_FALSE(n->comparison.Matches(IntKey(1)));
  EXPECT_TRUE(n->comparison.Matches(IntKey(2)));
  n = ParseList("len(tags) == 0");
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->comparison.indexed);
  n = ParseList("len == 3 and not tags contains 1");  // a field called len
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->kind, Node::Kind::kAnd);
  EXPECT_EQ(n->children[1].kind, Node::Kind::kNot);
  n = ParseList("any(tags in [])");
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->comparison.keys.empty());
}

TEST(ParserListTest, MalformedListComparisonsNameProblemAndColumn) {
  const BadCase cases[] = {
      {"boxes contains 1", 1, "is not a list of integers"},
      {"mean contains 1", 1, "is not a list of integers"},
      {"len contains 1", 1, "is not a list of integers"},
      {"any(boxes in [1])", 5, "is not a list of integers"},
      {"any(tags [1])", 10, "expected 'in'"},
      {"any(tags in [1]", 16, "expected ')'"},
      {"len(mean) > 1", 5, "length is fixed"},
      {"len(path) > 1", 5, "not an array"},
      {"len(tags) 3", 11, "expected an operator"},
      {"len(tags) > 1.5", 13, "not an integer"},
      {"len(tags > 1", 10, "expected ')'"},
      {"tags contains 1.5", 15, "not an integer"},
      {"tags == 3", 1, "queried with 'contains'"},
      {"any(nope in [1])", 5, "unknown field 'nope'"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.expression);
    ExpectParseError(c, ParseList(c.expression));
  }
}

}  // namespace
}  // namespace unirecord::query
