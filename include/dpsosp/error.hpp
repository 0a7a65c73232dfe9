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

/// A record's label that the model cannot take (the models' label checks). A
/// front end that read the labels from a CSV table's default column adds which
/// column that was and how another is picked (CsvNotes::label_origin).
class LabelError : public Error {
 public:
  using Error::Error;
};

/// A value an option cannot take (options.hpp names the options): the option's
/// key ("delta", "fit_intercept", "overrides.b") and what follows its name in
/// the message (" = 0.5: not below 1/n ..."). what() names it `shown_as` (a
/// C++ caller's "RunOptions: privacy.delta"), by default by its key; the front
/// ends name it by their own words (option_error_words, options.hpp).
class OptionError : public Error {
 public:
  OptionError(std::string key, std::string detail, const std::string& shown_as = "")
      : Error((shown_as.empty() ? key : shown_as) + detail), key_(std::move(key)), detail_(std::move(detail)) {}
  const std::string& key() const { return key_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string key_, detail_;
};

}  // namespace dpsosp
