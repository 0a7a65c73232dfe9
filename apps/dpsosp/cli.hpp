// The dpsosp command-line tool: a thin layer over the library.
//
// Error contract (SPEC section 7, docs/reliability.md): every bad file or
// option ends the process with exit status 1 (2 for a command line CLI11
// cannot parse) and exactly one line on stderr, "dpsosp: error: <what>",
// naming the option or file and the rule broken; nothing on stdout, and an
// existing --out file is left as it was. Numeric options are therefore taken
// as text and parsed here, strictly, so that the messages name the option.
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "dpsosp/options.hpp"
#include "dpsosp/report.hpp"

namespace dpsosp::cli {

/// Where the records come from: a file or a synthetic spec.
struct DataSource {
  std::string model;
  std::string data_path;
  std::string format;       // empty = guess from the file name
  std::string labels_path;  // IDX labels file
  bool header = false;
  bool fit_intercept = false;     // --fit-intercept given
  bool no_fit_intercept = false;  // --no-fit-intercept given
  /// run: an intercept unless --no-fit-intercept for the models that take one
  /// and want it (logistic, sigmoid, softmax, linear, cauchy; not --synthetic).
  bool intercept_by_default = false;
  std::string synthetic;
  std::string classes, hidden, rank;             // ModelOptions, as given (empty = default); classes: a count or names
  std::string label;                             // CSV: --label NAME or 0-based index
  std::string weights_column;                    // CSV: --weights-column NAME or 0-based index (run, certify)
  std::vector<std::string> categorical, impute;  // CSV: --categorical COL=a|b, --impute zero|COL=VALUE
  /// --classes a,b,c: the public class names (empty for a count or none);
  /// without --classes, those of the point (predict: point_class_names).
  std::vector<std::string> class_names() const;
  /// predict: the class names a run's report or a model file keeps, read
  /// through when --classes is not given (labels as the run read them).
  std::vector<std::string> point_class_names;
  /// predict: the table rule a run's report or a model file keeps (the run's
  /// --label, --categorical and --impute: declared, public), taken for each
  /// of those options predict is not given, so that a CSV laid out as the
  /// run's predicts as it is.
  CsvColumn point_label;
  std::vector<CsvCategorical> point_categorical;
  std::vector<CsvImpute> point_impute;
  bool point_impute_zero = false;
  std::string features;     // --features D (empty: none declared)
  CLI::App* app = nullptr;  // to tell which options were given
  bool given(const std::string& option) const { return app != nullptr && app->count(option) > 0; }
};

/// Adds the data-source options to a subcommand.
void add_data_options(CLI::App& app, DataSource& source);
/// --features D, as given: the declared feature count (public), for LibSVM
/// and record files; 0 when not given. Throws Error naming the option.
Index declared_features(const DataSource& source);
/// A private run's public shape (SPEC section 9, docs/privacy.md "Public
/// shape"): what sizes the run is declared, never read from the records. With
/// --data, softmax and mlp need --classes, LibSVM records (a file or stdin)
/// need --features, and a sparse record file needs the feature count its
/// header declares (dpsosp convert --features). Throws Error, one line saying
/// how to declare it, before any record is read.
void check_public_shape(const DataSource& source, bool private_run);
/// certify, predict: a LibSVM --data without --features takes the feature
/// count of the point's shape (public: the released model's), if it has one.
void default_features_from_point(DataSource& source, std::optional<Index> features);
/// "a,b,c" (or "a|b|c" with sep '|') into trimmed items, each non-empty and
/// named once; errors begin with `option` (table_options.cpp).
std::vector<std::string> split_names(const std::string& text, char sep, const std::string& option);
/// The table rule of a run's CSV options (--label, --categorical, --impute:
/// declared, public) as report keys "label", "categorical" ({column:
/// [categories]}) and "impute" ("zero" or {column: value}, text); empty where
/// none was given. dpsosp predict reads them back (result_reader.hpp).
nlohmann::json table_rule_keys(const DataSource& s, bool labeled);
/// --label, --classes NAMES, --categorical and --impute into the CSV loader's options.
void csv_table_options(const DataSource& source, bool labeled, LoadOptions& lo);
/// The --eval diagnostics of x on `eval`: n, loss, accuracy, and for a
/// regression R^2 against `user_y`, the held-out targets in the user's units
/// before any clip (`target`: the run's map of the target, if any); `figure`
/// gets the summary line's words (eval_figures.cpp).
nlohmann::json eval_diagnostics(const Model& model, const Vec& x, const Dataset& eval, const Vec& user_y,
                                const Scaling* target, std::string& figure);

/// A loaded problem: data, model, and (for synthetic specs) the problem.
struct LoadedProblem {
  Dataset data;
  std::unique_ptr<Model> model;
  std::optional<SyntheticProblem> synthetic;
  /// The synthetic problem's known population, when it is the population of this
  /// model (the same model and dimension); null otherwise.
  std::shared_ptr<const Population> population;
  double load_seconds = 0;
  /// run --stream: the record file, opened but not loaded (data is empty).
  std::optional<RecordFile> records;
  /// CSV: per feature, whether it is a one-hot feature of a --categorical column (load_csv); else empty.
  std::vector<bool> one_hot;
  /// CSV: what its layout says (load_csv's notes): warnings for the run's, and where its labels were read from.
  CsvNotes notes;
  Index rows() const { return records ? records->info().rows : data.rows(); }
};
/// Loads the records and builds the model; every problem is reported as an Error
/// naming the option (--data, --synthetic, --model, --classes, ...). Given
/// sample_order_seed, --synthetic records are generated straight into that
/// seed's sample order (make_synthetic), for a single-pass run with that seed:
/// the same results, read front to back. --data files keep their order.
LoadedProblem load_problem(const DataSource& source, std::optional<std::uint64_t> sample_order_seed = std::nullopt);
/// run --stream: opens the --data record file and builds the model from its
/// header (a class count from its label range, as load_problem infers it
/// from the labels); the run checks the records as it reads them.
LoadedProblem open_streamed_problem(const DataSource& source);
/// The ModelOptions that source's --classes, --hidden, --rank give `model`.
ModelOptions model_options_of(const DataSource& source, const std::string& model);
/// The records of --data alone (labeled: the first CSV column, or the IDX
/// labels, is the label), for a model built elsewhere (predict).
Dataset load_data_file(const DataSource& source, bool labeled);
/// Loads evaluation data for `model` (--eval FILE) with the options of `source`.
Dataset load_eval_data(const DataSource& source, const std::string& path, const std::string& labels_path,
                       const Model& model);

/// What a numeric option accepts: the library's rules and words (optimizer.hpp).
using Range = ValueRule;
/// Parses a number for `option`; throws Error "OPTION: expected RULE, got 'TEXT'".
double parse_real(const std::string& text, const std::string& option, Range range);
/// --sampling's words: poisson or order; throws Error naming the option otherwise.
Sampling parse_sampling(const std::string& text);
/// --adjacency replace-one|zero-out into o.privacy (a private run's).
void set_adjacency(const std::string& text, RunOptions& o);
/// Parses an integer in [min, max] for `option`.
std::uint64_t parse_count(const std::string& text, const std::string& option, std::uint64_t min, std::uint64_t max);
/// --threads: 0 (all cores) to kMaxThreads.
constexpr std::uint64_t kMaxThreads = 1024;

/// JSON helpers: +-inf and NaN become null (JSON has no infinity); the
/// report's parts are the library's (report.hpp).
inline nlohmann::json number(double v) { return report_number(v); }
// The guarantee's words and caveats: the library's guarantee_text and privacy_caveats (optimizer.hpp).

/// --noise-key-file: the key in the file, or a fresh one when `path` is empty.
/// Errors name the option and never repeat the file's content.
std::optional<NoiseKey> read_noise_key_option(const std::string& path, bool given);

/// Writes text to path through a temporary file in the same directory and a
/// rename, so an existing file is replaced whole or not at all ("-" or empty:
/// stdout). Throws Error naming `option` if it cannot.
void write_text(const std::string& path, const std::string& text, const std::string& option = "--out");
/// Throws Error if `path` cannot be written (checked before a run starts): its
/// directory must exist and take a new file, and it must not be a directory.
/// Creates nothing and leaves an existing file untouched.
void check_writable(const std::string& path, const std::string& option = "--out");
/// Throws Error if the output path names the same file as an input.
void check_not_input(const std::string& out, const std::string& input, const std::string& input_option);

/// --set's name=value items by name (each once); the values are RunRequest's to check.
std::map<std::string, std::string> parse_overrides(const std::vector<std::string>& items);

/// --budget FILE: the budget a `dpsosp budget --new` wrote (budget.hpp);
/// Error naming the option and the file otherwise.
Budget read_budget_file(const std::string& path, const std::string& option = "--budget");
/// An exclusive lock on FILE.lock (made if missing, kept) for as long as it
/// lives: runs charged to one budget file take turns, so none loses another's charge.
class BudgetLock {
 public:
  explicit BudgetLock(const std::string& path);
  ~BudgetLock();
  BudgetLock(const BudgetLock&) = delete;
  BudgetLock& operator=(const BudgetLock&) = delete;

 private:
  int fd_ = -1;
};

void setup_run(CLI::App& app);
void setup_budget(CLI::App& app);
void setup_certify(CLI::App& app);
void setup_privacy(CLI::App& app);
void setup_demo(CLI::App& app);
void setup_audit(CLI::App& app);
void setup_keygen(CLI::App& app);
void setup_convert(CLI::App& app);
void setup_predict(CLI::App& app);

}  // namespace dpsosp::cli
