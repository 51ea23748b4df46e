#include "query/parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "format/array_values.h"
#include "index/record_table.h"
#include "query/tokens.h"

namespace unirecord::query {

bool Comparison::Matches(uint64_t key) const {
  // First range whose hi >= key; ranges are ascending and disjoint.
  auto it = std::lower_bound(keys.begin(), keys.end(), key, [](const KeyRange& r, uint64_t k) { return r.hi < k; });
  return it != keys.end() && it->lo <= key;
}

bool Comparison::Matches(std::string_view value) const {
  for (const StringRange& r : strings) {
    if (r.has_lo) {
      const int c = value.compare(r.lo);
      if (c < 0 || (c == 0 && r.lo_open)) continue;
    }
    if (r.has_hi) {
      const int c = value.compare(r.hi);
      if (c > 0 || (c == 0 && r.hi_open)) continue;
    }
    return true;
  }
  return false;
}

namespace {

enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };

class Parser {
 public:
  Parser(std::string_view expression, const Schema& schema, const std::map<std::string, std::string>& metadata)
      : expr_(expression), schema_(schema), metadata_(metadata) {}

  Result<Node> Run() {
    UREC_ASSIGN_OR_RETURN(tokens_, Tokenize(expr_));
    if (tokens_.front().kind == Tok::kEnd) return Error(0, "empty expression");
    UREC_ASSIGN_OR_RETURN(Node root, ParseOr(0));
    if (Peek().kind != Tok::kEnd) {
      const Token& t = Peek();
      if (t.kind == Tok::kRParen) return Error(t.offset, "unbalanced ')': no '(' before it");
      return Error(t.offset, "expected 'and', 'or' or the end of the expression, found " + Describe(t));
    }
    return root;
  }

 private:
  Status Error(size_t offset, const std::string& message) const { return QueryError(expr_, offset, message); }

  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (t.kind != Tok::kEnd) ++pos_;
    return t;
  }

  // --- expressions ----------------------------------------------------------
  static Node Combine(Node::Kind kind, std::vector<Node> children) {
    if (children.size() == 1) return std::move(children.front());
    Node n;
    n.kind = kind;
    for (const Node& c : children) n.scans = n.scans || c.scans;
    n.children = std::move(children);
    return n;
  }

  // `operand (word operand)*`: `or` over `and` terms, `and` over unary ones.
  Result<Node> ParseChain(int depth, const char* word, Node::Kind kind, Result<Node> (Parser::*operand)(int)) {
    std::vector<Node> terms;
    while (true) {
      UREC_ASSIGN_OR_RETURN(Node term, (this->*operand)(depth));
      terms.push_back(std::move(term));
      if (!IsKeyword(Peek(), word)) break;
      Next();
    }
    return Combine(kind, std::move(terms));
  }
  Result<Node> ParseOr(int depth) { return ParseChain(depth, "or", Node::Kind::kOr, &Parser::ParseAnd); }
  Result<Node> ParseAnd(int depth) { return ParseChain(depth, "and", Node::Kind::kAnd, &Parser::ParseUnary); }

  Result<Node> ParseUnary(int depth) {
    if (depth >= kMaxQueryDepth) {
      return Error(Peek().offset, "expression nested too deeply (more than " + std::to_string(kMaxQueryDepth) +
                                      " levels of parentheses and 'not')");
    }
    const Token& t = Peek();
    if (IsKeyword(t, "not")) {
      Next();
      UREC_ASSIGN_OR_RETURN(Node operand, ParseUnary(depth + 1));
      Node n;
      n.kind = Node::Kind::kNot;
      n.scans = operand.scans;
      n.children.push_back(std::move(operand));
      return n;
    }
    if (t.kind == Tok::kLParen) {
      const size_t open = t.offset;
      Next();
      UREC_ASSIGN_OR_RETURN(Node inner, ParseOr(depth + 1));
      if (Peek().kind != Tok::kRParen) {
        if (Peek().kind == Tok::kEnd) return Error(open, "unbalanced '(': no ')' closes it");
        return Error(Peek().offset, "expected ')', 'and' or 'or', found " + Describe(Peek()));
      }
      Next();
      return inner;
    }
    return ParseComparison();
  }

  // --- one comparison -------------------------------------------------------
  // The field a name token names, or an error at the token.
  Result<size_t> FieldOf(const Token& name) const {
    if ((name.kind != Tok::kIdent && name.kind != Tok::kQuotedIdent) || IsReserved(name)) {
      return Error(name.offset, "expected a field name, '(' or 'not', found " + Describe(name));
    }
    const int index = schema_.FieldIndex(name.text);
    if (index < 0) {
      return Error(name.offset, "unknown field '" + name.text + "' (fields: " + schema_.FieldNames() + ")");
    }
    return static_cast<size_t>(index);
  }

  static bool IsIntList(const Field& f) {
    return f.shape.size() == 1 && f.shape[0] == kVariableDim && IsIntegral(f.type);
  }

  Status Expect(Tok kind, const char* what, const char* after) {
    if (Peek().kind != kind) {
      return Error(Peek().offset, std::string("expected '") + what + "' " + after + ", found " + Describe(Peek()));
    }
    Next();
    return Status::OK();
  }

  Node ListNode(Comparison c, size_t start) {
    c.text = std::string(expr_.substr(start, tokens_[pos_ - 1].end - start));
    Node n;
    n.kind = Node::Kind::kComparison;
    n.scans = !c.indexed;
    n.comparison = std::move(c);
    return n;
  }

  // `any(FIELD in [v, ...])` and `len(FIELD) OP N` (the function name is
  // the current token, followed by '(').
  Result<Node> ParseFunction() {
    const Token& fn = Next();
    const size_t start = fn.offset;
    const bool is_any = IsKeyword(fn, "any");
    Next();  // '('
    const Token& name = Next();
    UREC_ASSIGN_OR_RETURN(size_t index, FieldOf(name));
    const Field& field = schema_.field(index);
    Comparison c;
    c.field = index;
    c.type = field.type;
    if (is_any) {
      if (!IsIntList(field)) return NotIntList(name, field, "any(... in [...])");
      c.test = Comparison::Test::kContains;
      c.indexed = field.has_list_index();
      if (!IsKeyword(Peek(), "in")) return Error(Peek().offset, "expected 'in' in 'any(" + field.name + " in [...])', found " + Describe(Peek()));
      Next();
      UREC_ASSIGN_OR_RETURN(std::vector<Literal> values, ParseList(field));
      AddList(c, values, false);
      UREC_RETURN_IF_ERROR(Expect(Tok::kRParen, ")", "after the list of any(...)"));
      return ListNode(std::move(c), start);
    }
    if (!field.has_variable_shape()) {
      return Error(name.offset, "field '" + field.name + "' is not a variable-shape array; len() needs one (" +
                                    (field.is_array() ? "this one's length is fixed" : "this one is not an array") + ")");
    }
    c.test = Comparison::Test::kLength;
    c.type = FieldType::kInt64;
    c.indexed = field.has_list_index();
    UREC_RETURN_IF_ERROR(Expect(Tok::kRParen, ")", "after len(FIELD"));
    const Token& op = Next();
    if (op.kind != Tok::kOp) {
      return Error(op.offset, "expected an operator (==, !=, <, <=, >, >=) after 'len(" + field.name + ")', found " + Describe(op));
    }
    const Field length = Field::Int64("len(" + field.name + ")");
    UREC_ASSIGN_OR_RETURN(Literal v, ParseLiteral(length));
    AddComparison(c, ToOp(op.text), v);
    return ListNode(std::move(c), start);
  }

  Status NotIntList(const Token& name, const Field& field, const char* what) const {
    return Error(name.offset, "field '" + field.name + "' is not a list of integers (shape [-1] of an integer or bool "
                                  "type); " + what + " needs one");
  }

  static Op ToOp(const std::string& text) {
    return text == "==" ? Op::kEq : text == "!=" ? Op::kNe : text == "<" ? Op::kLt
           : text == "<=" ? Op::kLe : text == ">" ? Op::kGt : Op::kGe;
  }

  Result<Node> ParseComparison() {
    if ((IsKeyword(Peek(), "any") || IsKeyword(Peek(), "len")) && tokens_[pos_ + 1].kind == Tok::kLParen) {
      return ParseFunction();
    }
    const Token& name = Next();
    if ((name.kind != Tok::kIdent && name.kind != Tok::kQuotedIdent) || IsReserved(name)) {
      return Error(name.offset, "expected a field name, '(' or 'not', found " + Describe(name));
    }
    const int index = schema_.FieldIndex(name.text);
    if (index < 0) {
      return Error(name.offset, "unknown field '" + name.text + "' (fields: " + schema_.FieldNames() + ")");
    }
    const Field& field = schema_.field(static_cast<size_t>(index));
    if (field.type == FieldType::kBytes) {
      return Error(name.offset, "field '" + field.name + "' is a bytes field; bytes fields cannot be queried");
    }
    Comparison c;
    c.field = static_cast<size_t>(index);
    c.type = field.type;
    c.indexed = field.indexed;
    if (IsKeyword(Peek(), "contains")) {
      if (!IsIntList(field)) return NotIntList(name, field, "'contains'");
      Next();
      c.test = Comparison::Test::kContains;
      c.indexed = field.has_list_index();
      UREC_ASSIGN_OR_RETURN(Literal v, ParseLiteral(field));
      AddList(c, {v}, false);
      return ListNode(std::move(c), name.offset);
    }
    if (field.is_array()) {
      return Error(name.offset, "field '" + field.name + "' is an array; an array is queried with 'contains', "
                                    "any(" + field.name + " in [...]) or len(" + field.name + ") (lists of integers), "
                                    "not compared as a whole");
    }

    const Token& op = Next();
    if (op.kind == Tok::kOp) {
      UREC_ASSIGN_OR_RETURN(Literal v, ParseLiteral(field));
      AddComparison(c, ToOp(op.text), v);
    } else if (IsKeyword(op, "between")) {
      UREC_ASSIGN_OR_RETURN(Literal lo, ParseLiteral(field));
      if (!IsKeyword(Peek(), "and")) {
        return Error(Peek().offset, "expected 'and' in 'between A and B', found " + Describe(Peek()));
      }
      Next();
      UREC_ASSIGN_OR_RETURN(Literal hi, ParseLiteral(field));
      AddBetween(c, lo, hi);
    } else if (IsKeyword(op, "in") || (IsKeyword(op, "not") && IsKeyword(Peek(), "in"))) {
      const bool negated = IsKeyword(op, "not");
      if (negated) Next();
      UREC_ASSIGN_OR_RETURN(std::vector<Literal> values, ParseList(field));
      AddList(c, values, negated);
    } else {
      return Error(op.offset, "expected an operator (==, !=, <, <=, >, >=, in, not in, between, contains) after '" +
                                  field.name + "', found " + Describe(op));
    }
    c.text = std::string(expr_.substr(name.offset, tokens_[pos_ - 1].end - name.offset));
    Node n;
    n.kind = Node::Kind::kComparison;
    n.scans = !c.indexed;
    n.comparison = std::move(c);
    return n;
  }

  // A literal converted for its field: an order key or a string.
  struct Literal {
    uint64_t key = 0;
    std::string text;
  };

  Result<std::vector<Literal>> ParseList(const Field& field) {
    if (Peek().kind != Tok::kLBracket) return Error(Peek().offset, "expected '[' after 'in', found " + Describe(Peek()));
    const size_t open = Next().offset;
    std::vector<Literal> values;
    if (Peek().kind == Tok::kRBracket) {
      Next();
      return values;
    }
    while (true) {
      UREC_ASSIGN_OR_RETURN(Literal v, ParseLiteral(field));
      values.push_back(std::move(v));
      const Token& t = Next();
      if (t.kind == Tok::kRBracket) return values;
      if (t.kind == Tok::kEnd) return Error(open, "unbalanced '[': no ']' closes the list");
      if (t.kind != Tok::kComma) return Error(t.offset, "expected ',' or ']' in the list, found " + Describe(t));
    }
  }

  Result<Literal> ParseLiteral(const Field& field) {
    const size_t start = Peek().offset;
    bool negative = false;
    if (Peek().kind == Tok::kSign) negative = Next().text == "-";
    const Token& t = Next();
    const bool is_int_field = IsIntegral(field.type);
    Literal out;
    if (t.kind == Tok::kString) {
      if (t.offset != start) return Error(start, "a sign cannot precede a string");
      if (field.type == FieldType::kString) {
        out.text = t.text;
        return out;
      }
      if (is_int_field) return ClassLiteral(field, t);
      return Error(t.offset, "field '" + field.name + "' is " + FieldTypeName(field.type) +
                                 "; a string cannot be compared with it");
    }
    const bool special = t.kind == Tok::kIdent && (IsKeyword(t, "inf") || IsKeyword(t, "nan"));
    if (t.kind != Tok::kNumber && !special) {
      return Error(t.kind == Tok::kEnd ? t.offset : start, "expected a value, found " + Describe(t));
    }
    if (field.type == FieldType::kString) {
      return Error(start, "field '" + field.name + "' is a string; write the value in quotes");
    }
    const std::string text = std::string(negative ? "-" : "") + t.text;
    const bool looks_int = t.kind == Tok::kNumber &&
                           std::all_of(t.text.begin(), t.text.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
    if (looks_int) {
      UREC_ASSIGN_OR_RETURN(int64_t v, ParseInt(t.text, negative, start));
      if (is_int_field) {
        out.key = index::IndexedOrderKey(field.type, index::IndexedBitsFromInt(v));
        return out;
      }
      const double d = static_cast<double>(v);
      if (d >= 9223372036854775808.0 || static_cast<int64_t>(d) != v) {
        return Error(start, "integer " + text + " is not exactly a float64; write it as a float (" + text + ".0)");
      }
      out.key = index::IndexedOrderKey(field.type, index::IndexedBitsFromFloat(d));
      return out;
    }
    double d = 0;
    if (special) {
      d = IsKeyword(t, "inf") ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      d = std::copysign(d, negative ? -1.0 : 1.0);  // -nan keeps its sign bit
    } else {
      const char* first = t.text.data();
      const char* last = first + t.text.size();
      auto [end, ec] = std::from_chars(first, last, d, std::chars_format::general);
      if (ec == std::errc::result_out_of_range) return Error(start, "float " + text + " is out of the float64 range");
      if (ec != std::errc() || end != last) return Error(start, "bad number '" + text + "'");
      if (negative) d = -d;
    }
    if (is_int_field) {
      return Error(start, "field '" + field.name + "' is " + FieldTypeName(field.type) + "; " + text +
                              " is not an integer");
    }
    out.key = index::IndexedOrderKey(field.type, index::IndexedBitsFromFloat(d));
    return out;
  }

  Result<int64_t> ParseInt(const std::string& digits, bool negative, size_t start) const {
    uint64_t magnitude = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (ec != std::errc() || end != digits.data() + digits.size() || magnitude > limit) {
      return Error(start, "integer " + std::string(negative ? "-" : "") + digits +
                              " is out of the int64 range [-9223372036854775808, 9223372036854775807]");
    }
    return negative ? static_cast<int64_t>(uint64_t{0} - magnitude) : static_cast<int64_t>(magnitude);
  }

  Result<Literal> ClassLiteral(const Field& field, const Token& t) const {
    auto it = metadata_.find(kClassesMetadataKey);
    if (it == metadata_.end()) {
      return Error(t.offset, "field '" + field.name + "' is " + FieldTypeName(field.type) +
                                 "; a string names a class only in a dataset with 'classes' metadata, and this one has none");
    }
    const std::vector<std::string> classes = DecodeNameList(it->second);
    auto found = std::find(classes.begin(), classes.end(), t.text);
    if (found == classes.end()) {
      return Error(t.offset, "no class named \"" + t.text + "\" in the dataset's 'classes' metadata (" +
                                 std::to_string(classes.size()) + " classes)");
    }
    Literal out;
    out.key = index::IndexedOrderKey(field.type, index::IndexedBitsFromInt(found - classes.begin()));
    return out;
  }

  // --- literal sets -> ranges -----------------------------------------------
  static constexpr uint64_t kMaxKey = std::numeric_limits<uint64_t>::max();

  static void AddComparison(Comparison& c, Op op, const Literal& v) {
    if (c.is_string()) {
      StringRange below, above, point;
      below.has_hi = true, below.hi = v.text, below.hi_open = op != Op::kLe;
      above.has_lo = true, above.lo = v.text, above.lo_open = op != Op::kGe;
      point.has_lo = point.has_hi = true, point.lo = point.hi = v.text;
      switch (op) {
        case Op::kEq: c.strings = {point}; break;
        case Op::kNe: c.strings = {below, above}; break;
        case Op::kLt: case Op::kLe: c.strings = {below}; break;
        case Op::kGt: case Op::kGe: c.strings = {above}; break;
      }
      return;
    }
    const uint64_t k = v.key;
    switch (op) {
      case Op::kEq: c.keys = {{k, k}}; break;
      case Op::kNe: c.keys = Complement({{k, k}}); break;
      case Op::kLt: if (k > 0) c.keys = {{0, k - 1}}; break;
      case Op::kLe: c.keys = {{0, k}}; break;
      case Op::kGt: if (k < kMaxKey) c.keys = {{k + 1, kMaxKey}}; break;
      case Op::kGe: c.keys = {{k, kMaxKey}}; break;
    }
  }

  static void AddBetween(Comparison& c, const Literal& lo, const Literal& hi) {
    if (c.is_string()) {
      if (lo.text <= hi.text) {
        StringRange r;
        r.has_lo = r.has_hi = true, r.lo = lo.text, r.hi = hi.text;
        c.strings = {r};
      }
      return;
    }
    if (lo.key <= hi.key) c.keys = {{lo.key, hi.key}};
  }

  static void AddList(Comparison& c, std::vector<Literal> values, bool negated) {
    if (c.is_string()) {
      std::vector<std::string> points;
      for (Literal& v : values) points.push_back(std::move(v.text));
      std::sort(points.begin(), points.end());
      points.erase(std::unique(points.begin(), points.end()), points.end());
      if (!negated) {
        for (const std::string& p : points) {
          StringRange r;
          r.has_lo = r.has_hi = true, r.lo = r.hi = p;
          c.strings.push_back(std::move(r));
        }
        return;
      }
      // The gaps between the points, open at both ends.
      StringRange gap;
      for (const std::string& p : points) {
        gap.has_hi = true, gap.hi = p, gap.hi_open = true;
        c.strings.push_back(gap);
        gap = StringRange();
        gap.has_lo = true, gap.lo = p, gap.lo_open = true;
      }
      c.strings.push_back(gap);
      return;
    }
    std::vector<KeyRange> points;
    for (const Literal& v : values) points.push_back({v.key, v.key});
    std::sort(points.begin(), points.end(), [](const KeyRange& a, const KeyRange& b) { return a.lo < b.lo; });
    points.erase(std::unique(points.begin(), points.end(), [](const KeyRange& a, const KeyRange& b) { return a.lo == b.lo; }),
                 points.end());
    c.keys = negated ? Complement(points) : points;
  }

  // The keys outside ascending, disjoint `ranges`.
  static std::vector<KeyRange> Complement(const std::vector<KeyRange>& ranges) {
    std::vector<KeyRange> out;
    uint64_t next = 0;  // first key not yet covered
    bool done = false;  // every key up to kMaxKey is covered
    for (const KeyRange& r : ranges) {
      if (r.lo > next) out.push_back({next, r.lo - 1});
      if (r.hi == kMaxKey) {
        done = true;
        break;
      }
      next = r.hi + 1;
    }
    if (!done) out.push_back({next, kMaxKey});
    return out;
  }

  std::string_view expr_;
  const Schema& schema_;
  const std::map<std::string, std::string>& metadata_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

Result<Node> ParseExpression(std::string_view expression, const Schema& schema,
                             const std::map<std::string, std::string>& metadata) {
  return Parser(expression, schema, metadata).Run();
}

}  // namespace unirecord::query
