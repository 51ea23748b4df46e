// The tokens of a query expression (docs/query.md), and how the parser's
// errors point at a column of it.
#ifndef UNIRECORD_QUERY_TOKENS_H_
#define UNIRECORD_QUERY_TOKENS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::query {

enum class Tok { kIdent, kQuotedIdent, kNumber, kString, kSign, kOp, kLParen, kRParen, kLBracket, kRBracket, kComma, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, number text, string contents (unescaped), operator
  size_t offset = 0;  // byte offset of the token's first character
  size_t end = 0;     // byte offset just past it
};

// The tokens of `expression`, the last one kEnd; InvalidArgument (QueryError)
// at the first character that starts none.
Result<std::vector<Token>> Tokenize(std::string_view expression);

// InvalidArgument "query: column C: MESSAGE" with the expression echoed and
// a caret under byte `offset`.
Status QueryError(std::string_view expression, size_t offset, const std::string& message);

// Whether `t` is the identifier `word` (lowercase), in any case.
bool IsKeyword(const Token& t, const char* word);
// Whether `t` is one of the words the grammar reserves (and, or, not, in, between).
bool IsReserved(const Token& t);
// `t` as an error message names it.
std::string Describe(const Token& t);

}  // namespace unirecord::query

#endif  // UNIRECORD_QUERY_TOKENS_H_
