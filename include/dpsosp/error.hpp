// dpsosp: the one exception type of the library.
#pragma once
#include <stdexcept>
#include <string>

namespace dpsosp {

/// Every error the library reports. Messages start with the function (or file)
/// that failed and state what was expected and what was found, on one line.
/// Derives from std::invalid_argument so that pybind11 maps it to ValueError.
class Error : public std::invalid_argument {
 public:
  explicit Error(const std::string& what) : std::invalid_argument(what) {}
};

}  // namespace dpsosp
