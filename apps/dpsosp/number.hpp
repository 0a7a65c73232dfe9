// Strict number parsing shared by the option parser and the point reader:
// locale-independent, the whole token must be a number ("1.5x", "0x10", " 1"
// are not), and the caller decides what to say about NaN, Inf and overflow.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace dpsosp::cli {

enum class NumberStatus { kOk, kNotNumber, kNonFinite, kOutOfRange };

/// Parses a decimal floating-point token (optional leading '+' or '-').
/// "nan", "inf", "infinity" (any case) give kNonFinite with out set to the value;
/// overflow and underflow past the double range give kOutOfRange.
NumberStatus parse_strict_double(std::string_view token, double& out);

/// Parses a decimal unsigned integer token (optional leading '+'); a '-' sign,
/// spaces, or a value above 2^64 - 1 fail.
bool parse_strict_uint(std::string_view token, std::uint64_t& out);

/// Removes spaces and tabs at both ends.
std::string_view trim_blanks(std::string_view s);

/// 'token' for a message: at most 40 characters, control characters as '?'.
std::string quote_token(std::string_view token);

}  // namespace dpsosp::cli
