// dpsosp: the run's options as a user gives them, defined once. The option
// table names each option (its CLI flag, its Python keyword), its type,
// default, rule and help; RunRequest turns what a user gave (text by key)
// into RunOptions by the table's rules, its every error in the front end's
// words. `dpsosp run`, `dpsosp.run`, the estimators and docs/parameters.md's
// option table are built from it (docs/architecture.md, "One contract").
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "dpsosp/error.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/scaling.hpp"
#include "dpsosp/text.hpp"

namespace dpsosp {

/// Who reads an error: the command line names an option by its flag
/// (--learning-rate), Python by its keyword (learning_rate).
enum class FrontEnd { kCli, kPython };

enum class OptionKind {
  kReal,       ///< a number, by value_rule
  kCount,      ///< an integer in [min, max]
  kChoice,     ///< one of choices
  kSwitch,     ///< on or off (Python: True or False)
  kFlag,       ///< given or not (Python: a bool)
  kConstant,   ///< a number by value_rule, or auto: a private estimate (G, M) or a public rule (scale_share)
  kText,       ///< a file name
  kOverrides,  ///< name=value settings of computed parameters (CLI: --set, repeated; Python: overrides={...})
  kBounds,     ///< intervals (CLI: LO:HI, one per feature, or a file; Python: (lo, hi) pairs)
};

/// One option of `dpsosp run` and `dpsosp.run` (the estimators take the
/// subset their parameters name).
struct OptionSpec {
  std::string key;    ///< Python's keyword, the report's word
  std::string flag;   ///< the CLI's flag
  std::string field;  ///< where it lands (RunOptions, ScalingOptions, ModelOptions), as a C++ caller names it
  OptionKind kind = OptionKind::kReal;
  /// The default as a user would write it; "" where it is computed (the help
  /// says how) or the option is off.
  std::string default_text;
  std::string help;
  ValueRule value_rule = ValueRule::kFinite;  ///< kReal
  std::uint64_t min = 0, max = 0;             ///< kCount
  std::vector<std::string> choices;           ///< kChoice
  /// The algorithm-table bit (algorithm.hpp, Knob) of the algorithms that read
  /// it; 0: every algorithm.
  unsigned knob = 0;
  /// True where the option is read by the model or the data (classes,
  /// fit_intercept, bounds): the front ends parse its value against the
  /// library's rules (ModelOptions, ScalingOptions), RunRequest does not.
  bool model_or_data = false;
};

/// Every option, in the order `dpsosp run --help` and docs/parameters.md list them.
const std::vector<OptionSpec>& run_option_table();
/// The row of `key`; throws Error for an unknown key.
const OptionSpec& run_option(const std::string& key);
/// How a front end names an option: "--learning-rate" / "learning_rate";
/// an override "overrides.b" as "--set b" / "overrides.b".
std::string option_word(const std::string& key, FrontEnd front_end);
/// What the option's values must be, in words ("a finite number > 0", "pld or rdp").
std::string option_rule_text(const OptionSpec& spec);

/// An OptionError (error.hpp) with the option named as `front_end` names it
/// ("--delta = ..." / "delta = ...").
std::string option_error_words(const OptionError& e, FrontEnd front_end);
/// Throws the OptionError of a RunOptions field: what() "RunOptions: FIELD DETAIL"
/// (FIELD the option's RunOptions path, privacy.delta), its key for the front ends.
[[noreturn]] void refuse_option(const std::string& key, const std::string& detail);

/// What a user gave: each option's text by key (numbers as typed, or as
/// Python's repr writes them; flags "true"/"false"; switches "on"/"off").
/// Absent keys take the table's default.
using OptionValues = std::map<std::string, std::string>;

/// A run's options from what a user gave, checked by the table's rules and
/// RunOptions::Validate before any record is read. Every error is an Error in
/// the front end's words: the option as it names it, the rule, the value.
class RunRequest {
 public:
  /// overrides: name -> text (alpha, kappa, sigma, noise_multiplier, eta,
  /// zeta, threshold, b, T, Gamma). streamed: the records are read once, in
  /// the file's order (--stream, stream=True). Leaves options.process_group
  /// and options.noise_key to the front end.
  RunRequest(const OptionValues& values, const std::map<std::string, std::string>& overrides, FrontEnd front_end,
             bool streamed);

  RunOptions options;
  /// The scale options RunRequest reads (bounds and y_bounds are the front end's to parse).
  std::string scale = "auto";
  std::optional<double> scale_share;  ///< unset: auto (ScalingOptions::automatic_share)
  bool normalize = false;
  bool release_only = false;
  /// delta as given (or its default), also for a non-private run's report.
  double delta = 1e-6;

  bool given(const std::string& key) const { return given_.count(key) > 0; }
  std::string word(const std::string& key) const { return option_word(key, front_end_); }
  /// An option set to a value, as the user would write it: "--sampling order" / "sampling='order'".
  std::string setting(const std::string& key, const std::string& value) const {
    return front_end_ == FrontEnd::kCli ? word(key) + " " + value : word(key) + "='" + value + "'";
  }
  FrontEnd front_end() const { return front_end_; }
  /// The scale of a run of `model` (scaling.hpp): scale, scale_share and
  /// normalize as given, bounds and y_bounds as the front end read them.
  /// table: loaded records of a table (CSV, LibSVM, arrays), which scale =
  /// auto estimates; IDX images and record files are prepared data, and
  /// streamed records are read as they are. one_hot: per feature (or empty),
  /// whether it is a one-hot feature of a declared categorical column (the
  /// CLI's CSV loader and Python's encode_table say which): its box [0, 1] is
  /// public (ScalingOptions::public_boxes).
  ScalingOptions scaling(const std::string& model, Index features, bool table, bool streamed,
                         std::vector<Interval> bounds, std::optional<Interval> y_bounds,
                         const std::vector<bool>& one_hot = {}) const;
  /// RunOptions::Validate(n) for the records' count, in the front end's words;
  /// a default delta not below 1/n says it is the default.
  void check_records(Index n) const;

 private:
  std::set<std::string> given_;
  FrontEnd front_end_;
};

/// An option's number: "WORD: expected RULE, got VALUE" otherwise (VALUE
/// quoted on the command line, as written in Python); `or_auto`: the option
/// also takes auto, and the words say so ("RULE, or auto").
double parse_option_real(const std::string& text, const std::string& word, ValueRule rule,
                         FrontEnd front_end = FrontEnd::kCli, bool or_auto = false);
std::uint64_t parse_option_count(const std::string& text, const std::string& word, std::uint64_t min, std::uint64_t max,
                                 FrontEnd front_end = FrontEnd::kCli);

}  // namespace dpsosp
