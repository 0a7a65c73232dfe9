// dpsosp: strict number text, as options, point files and messages read and
// show it (src/data/number_text.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace dpsosp {

/// Strict number text, as options and point files are read: locale-independent,
/// the whole token must be a number ("1.5x", "0x10", " 1" are not).
enum class NumberStatus { kOk, kNotNumber, kNonFinite, kOutOfRange };
/// A decimal floating-point token (optional leading '+' or '-'); "nan", "inf",
/// "infinity" (any case) give kNonFinite with out set; past the double range: kOutOfRange.
NumberStatus parse_strict_double(std::string_view token, double& out);
/// A decimal unsigned integer token (optional leading '+').
bool parse_strict_uint(std::string_view token, std::uint64_t& out);
/// Removes spaces and tabs at both ends.
std::string_view trim_blanks(std::string_view s);
/// 'token' for a message: at most 40 characters, control characters as '?'.
std::string quote_token(std::string_view token);

}  // namespace dpsosp
