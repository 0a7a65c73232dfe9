// Strict number text (text.hpp): how options and point files read numbers.
#include <charconv>
#include <cmath>

#include "dpsosp/text.hpp"

namespace dpsosp {

NumberStatus parse_strict_double(std::string_view token, double& out) {
  const char* first = token.data();
  const char* last = first + token.size();
  // from_chars takes no '+', which users write ("+1e-3").
  if (first != last && *first == '+') ++first;
  if (first == last || *first == '+') return NumberStatus::kNotNumber;
  double value = 0;
  const auto result = std::from_chars(first, last, value);
  if (result.ptr != last) return NumberStatus::kNotNumber;
  if (result.ec == std::errc::result_out_of_range) return NumberStatus::kOutOfRange;
  if (result.ec != std::errc()) return NumberStatus::kNotNumber;
  out = value;
  if (!std::isfinite(value)) return NumberStatus::kNonFinite;
  return NumberStatus::kOk;
}

bool parse_strict_uint(std::string_view token, std::uint64_t& out) {
  const char* first = token.data();
  const char* last = first + token.size();
  if (first != last && *first == '+') ++first;
  if (first == last) return false;
  std::uint64_t value = 0;
  const auto result = std::from_chars(first, last, value, 10);
  if (result.ptr != last || result.ec != std::errc()) return false;
  out = value;
  return true;
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string quote_token(std::string_view token) {
  constexpr std::size_t kMax = 40;
  std::string s(token.substr(0, kMax));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return "'" + s + (token.size() > kMax ? "...'" : "'");
}

}  // namespace dpsosp
