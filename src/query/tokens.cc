// Splitting a query expression into tokens (tokens.h).
#include "query/tokens.h"

#include <cctype>
#include <cstdio>
#include <cstring>

namespace unirecord::query {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

}  // namespace

bool IsKeyword(const Token& t, const char* word) {
  if (t.kind != Tok::kIdent || t.text.size() != std::strlen(word)) return false;
  for (size_t i = 0; i < t.text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(t.text[i])) != word[i]) return false;
  }
  return true;
}

bool IsReserved(const Token& t) {
  for (const char* w : {"and", "or", "not", "in", "between"}) {
    if (IsKeyword(t, w)) return true;
  }
  return false;
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEnd: return "the end of the expression";
    case Tok::kString: return "a string";
    case Tok::kQuotedIdent: return "`" + t.text + "`";
    default: return "'" + t.text + "'";
  }
}

Status QueryError(std::string_view expression, size_t offset, const std::string& message) {
  // The column counts characters, not the continuation bytes of UTF-8.
  size_t column = 1;
  for (size_t i = 0; i < offset && i < expression.size(); ++i) {
    if ((static_cast<unsigned char>(expression[i]) & 0xC0) != 0x80) ++column;
  }
  std::string echo(expression);
  for (char& c : echo) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  return Status::InvalidArgument("query: column " + std::to_string(column) + ": " + message + "\n  " + echo +
                                 "\n  " + std::string(column - 1, ' ') + "^");
}

Result<std::vector<Token>> Tokenize(std::string_view expression) {
  std::vector<Token> tokens;
  const auto error = [&](size_t offset, const std::string& message) { return QueryError(expression, offset, message); };
  size_t i = 0;
  while (true) {
    while (i < expression.size() && std::isspace(static_cast<unsigned char>(expression[i]))) ++i;
    Token t;
    t.offset = i;
    if (i == expression.size()) {
      t.end = i;
      tokens.push_back(std::move(t));
      return tokens;
    }
    const char c = expression[i];
    if (IsIdentStart(c)) {
      while (i < expression.size() && IsIdentChar(expression[i])) ++i;
      t.kind = Tok::kIdent;
      t.text = std::string(expression.substr(t.offset, i - t.offset));
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < expression.size() && std::isdigit(static_cast<unsigned char>(expression[i + 1])))) {
      // Letters and dots are taken in too, so that "12abc" is one bad number.
      const auto exponent_sign = [&](size_t k) {
        return (expression[k] == '+' || expression[k] == '-') && (expression[k - 1] == 'e' || expression[k - 1] == 'E');
      };
      while (i < expression.size() && (IsIdentChar(expression[i]) || exponent_sign(i))) ++i;
      t.kind = Tok::kNumber;
      t.text = std::string(expression.substr(t.offset, i - t.offset));
    } else if (c == '"' || c == '\'' || c == '`') {
      ++i;
      bool closed = false;
      while (i < expression.size()) {
        char ch = expression[i++];
        if (ch == c) {
          closed = true;
          break;
        }
        if (ch == '\\') {
          if (i == expression.size()) break;
          ch = expression[i++];
          switch (ch) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case '\\': case '"': case '\'': case '`': break;
            default: return error(i - 2, std::string("unknown escape '\\") + ch + "' (use \\\\, \\\", \\', \\n or \\t)");
          }
        }
        t.text.push_back(ch);
      }
      if (!closed) {
        return error(t.offset, std::string("unterminated ") + (c == '`' ? "field name" : "string") +
                                   ": no closing " + c);
      }
      t.kind = c == '`' ? Tok::kQuotedIdent : Tok::kString;
    } else if (c == '-' || c == '+') {
      ++i;
      t.kind = Tok::kSign;
      t.text = std::string(1, c);
    } else if (c == '=' || c == '!' || c == '<' || c == '>') {
      const bool two = i + 1 < expression.size() && expression[i + 1] == '=';
      if (c == '=' && !two) return error(i, "'=' is not an operator; use '==' for equality");
      if (c == '!' && !two) return error(i, "'!' is not an operator; use '!=' or 'not'");
      i += two ? 2 : 1;
      t.kind = Tok::kOp;
      t.text = std::string(expression.substr(t.offset, i - t.offset));
    } else if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') {
      ++i;
      t.kind = c == '(' ? Tok::kLParen : c == ')' ? Tok::kRParen : c == '[' ? Tok::kLBracket
               : c == ']' ? Tok::kRBracket : Tok::kComma;
      t.text = std::string(1, c);
    } else if (c == '&' || c == '|') {
      return error(i, std::string("unexpected '") + c + "'; use '" + (c == '&' ? "and" : "or") + "'");
    } else {
      const unsigned char u = static_cast<unsigned char>(c);
      char shown[16];
      std::snprintf(shown, sizeof(shown), u >= 0x20 && u < 0x7F ? "'%c'" : "byte 0x%02X", u);
      return error(i, std::string("unexpected character ") + shown);
    }
    t.end = i;
    tokens.push_back(std::move(t));
  }
}

}  // namespace unirecord::query
