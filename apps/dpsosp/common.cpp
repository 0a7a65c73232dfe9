// Shared pieces of the subcommands: data sources and numbers (the report's
// JSON: report_json.cpp; output files: output.cpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>

#include "cli.hpp"

namespace dpsosp::cli {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string list;
  for (const auto& m : items) list += (list.empty() ? "" : ", ") + m;
  return list;
}

// The model a data source names, or the synthetic problem's own.
std::string model_of(const DataSource& s) {
  if (!s.model.empty()) return s.model;
  if (!s.synthetic.empty()) {
    const std::string name = s.synthetic.substr(0, s.synthetic.find(':'));
    if (name == "gaussian-mixture") return "logistic";
    return name;  // phase-retrieval, pca; an unknown name fails in make_synthetic
  }
  return "";
}

bool is_count(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

ModelOptions model_options(const DataSource& s, const std::string& model) {
  ModelOptions o;
  const ModelInfo& info = model_info(model);
  const bool classifier = info.classifier;
  if (s.given("--classes") && !is_count(s.classes)) {
    // Class names: a CSV's labels mapped to their indices (0, 1, ... in this order).
    const std::size_t k = s.class_names().size();
    if (info.binary) {
      if (k != 2)
        throw Error("--classes: " + model + " takes 2 classes (the first is label 0, the second 1), got " +
                    std::to_string(k) + " names");
    } else if (!classifier) {
      throw Error("--classes: class names apply to the logistic, sigmoid, softmax and mlp models, not " + model);
    } else if (k < 2) {
      throw Error("--classes: expected 2 class names or more (a,b,...), or a count >= 2, got " +
                  quote_token(s.classes));
    } else {
      o.classes = static_cast<Index>(k);
    }
  } else if (s.given("--classes")) {
    if (!classifier) throw Error("--classes: applies to the softmax and mlp models, not " + model);
    o.classes = parse_count(s.classes, "--classes", 2, 1u << 30);
  }
  if (s.given("--hidden")) {
    if (!info.reads_hidden) throw Error("--hidden: applies to the mlp model, not " + model);
    o.hidden = parse_count(s.hidden, "--hidden", 1, 1u << 30);
  }
  if (s.given("--rank")) {
    if (!info.reads_rank) throw Error("--rank: applies to the pca model, not " + model);
    o.rank = parse_count(s.rank, "--rank", 1, 1u << 30);
  }
  if (s.fit_intercept && s.no_fit_intercept) throw Error("--no-fit-intercept: cannot be given with --fit-intercept");
  o.fit_intercept = s.fit_intercept;
  if (!s.fit_intercept && !s.no_fit_intercept && s.intercept_by_default && s.synthetic.empty())
    o.fit_intercept = info.intercept_by_default;
  return o;
}

// Models refuse more than 2^31 - 1 parameters; a LibSVM index of 10^12 would
// otherwise end in bad_alloc.
constexpr Index kMaxFeatures = 2147483647;

std::unique_ptr<Model> build_model(const std::string& name, const Dataset& data, const ModelOptions& options,
                                   const std::string& source) {
  if (data.cols() > kMaxFeatures)
    throw Error(source + ": the records have " + std::to_string(data.cols()) +
                " feature columns (for LibSVM, the largest index), more than the " + std::to_string(kMaxFeatures) +
                " supported");
  try {
    return make_model(name, data.cols(), options, &data);
  } catch (const OptionError& e) {
    throw Error(option_error_words(e, FrontEnd::kCli));  // the library's words, the option's flag
  } catch (const std::bad_alloc&) {
    throw Error("--model " + name + ": out of memory building the model for " + std::to_string(data.cols()) +
                " features");
  }
}

// A refusal of the labels read from `source`, with where they were read from
// (CsvNotes::label_origin; empty: nothing to add).
Error label_refusal(const std::string& source, const LabelError& e, const std::string& label_origin) {
  return Error(source + ": " + e.what() + (label_origin.empty() ? "" : "; " + label_origin));
}

void validate_for_model(const Model& model, const Dataset& data, const std::string& source,
                        const std::string& label_origin = "") {
  try {
    model.validate(data);
  } catch (const LabelError& e) {
    throw label_refusal(source, e, label_origin);
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
}

FileFormat format_of(const DataSource& s, const std::string& path) {
  if (path == "-" && s.format.empty())
    throw Error("--format: required when the records come from stdin (- has no name to guess the format from)");
  return s.format.empty() ? guess_file_format(path) : parse_file_format(s.format);
}

// A declared --features D against records whose width is fixed otherwise (a
// dense format's, the same for every record, or a record file's header).
void check_declared_width(const DataSource& s, FileFormat format, const Dataset& data, const std::string& path) {
  const Index declared = declared_features(s);
  if (declared == 0 || format_info(format).sparse || data.cols() == declared) return;
  if (format == FileFormat::kRecords)
    throw Error("--features " + std::to_string(declared) + ": the record file " + path + " holds records of " +
                std::to_string(data.cols()) + " features; convert it again with --features " +
                std::to_string(declared));
  throw Error("--features " + std::to_string(declared) + ": the records of " + path + " have " +
              std::to_string(data.cols()) + " features (the width of every record of a dense format)");
}

Dataset load_file(const DataSource& s, const std::string& path, const std::string& labels_path, bool labeled,
                  const std::string& source, std::vector<bool>* one_hot = nullptr, CsvNotes* notes = nullptr) {
  const FileFormat format = format_of(s, path);
  if (s.header && !format_info(format).csv_options) throw Error("--header: applies to CSV files, not " + path);
  for (const char* option : {"--label", "--categorical", "--impute"})
    if (s.given(option) && !format_info(format).csv_options)
      throw Error(std::string(option) + ": applies to CSV files, not " + path);
  if (!s.weights_column.empty() && !format_info(format).csv_options)
    throw Error("--weights-column: applies to CSV files, not " + path);
  if (s.given("--classes") && !s.class_names().empty() && !format_info(format).csv_options)
    throw Error("--classes " + s.classes + ": class names map a CSV file's labels; " + path +
                " holds class indices: give their count (--classes " + std::to_string(s.class_names().size()) + ")");
  if (!labels_path.empty() && !format_info(format).labels_file)
    throw Error(source + ": a labels file applies to IDX data; " + path + " is not IDX");
  if (!labels_path.empty() && !labeled)
    throw Error(source + ": a labels file was given, but the pca model takes no labels");
  try {
    Dataset data;
    if (format_info(format).labels_file && !labels_path.empty()) {
      data = load_idx(path, labeled ? labels_path : "");
    } else {
      LoadOptions lo;
      lo.header = s.header;
      lo.labeled = labeled;
      lo.libsvm_features = declared_features(s);
      if (format_info(format).csv_options) csv_table_options(s, labeled, lo);
      data =
          format == FileFormat::kCsv && one_hot ? load_csv(path, lo, one_hot, notes) : load_dataset(path, format, lo);
    }
    check_declared_width(s, format, data, path);
    return data;
  } catch (const std::bad_alloc&) {
    throw Error(source + ": out of memory loading the records");
  }
}

}  // namespace

void add_data_options(CLI::App& app, DataSource& s) {
  s.app = &app;
  app.add_option("--model", s.model,
                 "Model: " + join(model_names()) + " (default with --synthetic: the problem's model)");
  auto* data =
      app.add_option("--data", s.data_path,
                     "Data file (CSV, LibSVM or IDX; any of them may be gzip-compressed; - = stdin, with --format)");
  app.add_option("--format", s.format, format_names(" | ") + " (default: what the file says it is, else its name)");
  app.add_option("--labels", s.labels_path, "IDX labels file (default: the labels-idx1 file beside the images)");
  app.add_flag("--header", s.header,
               "CSV: the first line is a header (default: detected: a first line with a word in a numeric column, "
               "or a column named by --label/--categorical/--impute)");
  app.add_option("--label", s.label, "CSV: the label column, by header name or 0-based index (default: 0, the first)");
  app.add_option("--weights-column", s.weights_column,
                 "CSV: a column of per-record weights in [0, 1], by header name or 0-based index: each record's "
                 "clipped gradient is multiplied by its weight (the guarantee is unchanged; docs/privacy.md)");
  app.add_option("--categorical", s.categorical,
                 "CSV: COLUMN=a|b|c: a categorical column and its public categories, one-hot encoded (repeatable)");
  app.add_option("--impute", s.impute,
                 "CSV: how a missing value (empty, NA, N/A, NaN) is filled: zero (numbers 0, categorical no "
                 "category) or COLUMN=VALUE (repeatable; default: refused, naming line and column)");
  app.add_flag("--fit-intercept", s.fit_intercept,
               "A bias in each margin / logit (logistic, sigmoid, linear, cauchy, phase-retrieval, softmax; "
               "docs/models.md); run's default for --data with logistic, sigmoid, softmax, linear and cauchy");
  app.add_flag("--no-fit-intercept", s.no_fit_intercept, "No bias (turns run's default intercept off)");
  auto* syn = app.add_option("--synthetic", s.synthetic,
                             "NAME:key=value,... with NAME in phase-retrieval, pca, gaussian-mixture");
  data->excludes(syn);
  syn->excludes(data);
  app.add_option("--classes", s.classes,
                 "softmax/mlp: number of classes K >= 2, labels 0 .. K-1, or the public class names a,b,c of a CSV's "
                 "label column (logistic/sigmoid: 2 names), each label mapped to its index (public; a private "
                 "softmax/mlp run on --data needs it; otherwise default: the largest label + 1)");
  app.add_option("--features", s.features,
                 "The number of features D (public): LibSVM indices 1 .. D, a larger one is refused (a private run "
                 "on LibSVM records needs it; otherwise default: the largest index); CSV, IDX and record files: "
                 "checked against their width");
  app.add_option("--hidden", s.hidden, "mlp: hidden units (default 32)");
  app.add_option("--rank", s.rank, "pca: rank r (default 1, or the synthetic spec's rank)");
}

std::vector<std::string> DataSource::class_names() const {
  if (!given("--classes")) return point_class_names;
  if (is_count(classes)) return {};
  return split_names(classes, ',', "--classes");
}

double parse_real(const std::string& text, const std::string& option, Range range) {
  return parse_option_real(text, option, range, FrontEnd::kCli);
}

std::uint64_t parse_count(const std::string& text, const std::string& option, std::uint64_t min, std::uint64_t max) {
  return parse_option_count(text, option, min, max, FrontEnd::kCli);
}

LoadedProblem load_problem(const DataSource& s, std::optional<std::uint64_t> sample_order_seed) {
  if (s.given("--data") && s.data_path.empty()) throw Error("--data: empty file name");
  if (s.given("--synthetic") && s.synthetic.empty())
    throw Error("--synthetic: empty spec (expected NAME:key=value,...)");
  if (s.given("--model") && s.model.empty())
    throw Error("--model: empty (expected one of " + join(model_names()) + ")");
  if (s.given("--format") && s.format.empty())
    throw Error("--format: empty (expected one of " + format_names(", ") + ")");
  if (s.given("--labels") && s.labels_path.empty()) throw Error("--labels: empty file name");
  if (s.given("--format") && s.data_path.empty()) throw Error("--format: applies to --data files, not to --synthetic");
  if (s.given("--labels") && s.data_path.empty())
    throw Error("--labels: applies to --data IDX files, not to --synthetic");
  if (s.given("--header") && s.data_path.empty())
    throw Error("--header: applies to --data CSV files, not to --synthetic");
  if (s.given("--features") && s.data_path.empty())
    throw Error("--features: applies to --data files, not to --synthetic (its spec fixes d)");
  for (const char* option : {"--label", "--categorical", "--impute"})
    if (s.given(option) && s.data_path.empty())
      throw Error(std::string(option) + ": applies to --data CSV files, not to --synthetic");
  if (!s.weights_column.empty() && s.data_path.empty())
    throw Error("--weights-column: applies to --data CSV files, not to --synthetic");
  if (!s.synthetic.empty() && !s.class_names().empty())
    throw Error("--classes " + s.classes + ": class names map a CSV file's labels, not --synthetic ones");
  if (s.synthetic.empty() && s.data_path.empty()) throw Error("give the records with --data FILE or --synthetic SPEC");
  if (!s.data_path.empty() && s.model.empty())
    throw Error("--model is required with --data (one of " + join(model_names()) + ")");
  if (!s.synthetic.empty()) {
    const std::string name = s.synthetic.substr(0, s.synthetic.find(':'));
    if (name != "phase-retrieval" && name != "pca" && name != "gaussian-mixture")
      make_synthetic(s.synthetic);  // throws at once, naming the problem and the valid names
  }
  const std::string model_name = model_of(s);
  const auto names = model_names();
  if (!s.model.empty() && std::find(names.begin(), names.end(), s.model) == names.end())
    throw Error("--model: unknown model '" + s.model + "', expected one of " + join(names));
  ModelOptions options = model_options(s, model_name);

  LoadedProblem p;
  const auto start = std::chrono::steady_clock::now();
  std::string source;
  if (!s.synthetic.empty()) {
    source = "--synthetic " + s.synthetic;
    try {
      p.synthetic = make_synthetic(s.synthetic, sample_order_seed);
    } catch (const std::bad_alloc&) {
      throw Error(source + ": out of memory generating the records (n x d too large)");
    }
    // Moved, not copied: a second copy of the records would double the peak
    // memory (p.synthetic->data is not read again).
    p.data = std::move(p.synthetic->data);
    // A pca spec fixes the rank of its population; the model follows it.
    const auto rank = p.synthetic->params.find("rank");
    if (model_name == "pca" && p.synthetic->model == "pca" && rank != p.synthetic->params.end()) {
      const auto spec_rank = static_cast<Index>(rank->second);
      if (s.given("--rank") && options.rank != spec_rank)
        throw Error("--rank " + std::to_string(options.rank) +
                    ": differs from the synthetic spec's rank=" + std::to_string(spec_rank));
      options.rank = spec_rank;
    }
  } else {
    source = "--data " + s.data_path;
    // Files stay in their own order: moving the records afterwards
    // (Dataset::store_in_sample_order) costs several times what a single
    // pass then saves (docs/performance.md).
    p.data = load_file(s, s.data_path, s.labels_path, model_info(model_name).labeled, source, &p.one_hot, &p.notes);
  }
  p.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    p.model = build_model(model_name, p.data, options, source);
  } catch (const LabelError& e) {  // the class count inferred from the labels
    throw label_refusal(source, e, p.notes.label_origin);
  }
  validate_for_model(*p.model, p.data, source, p.notes.label_origin);
  if (p.synthetic && p.synthetic->population && p.synthetic->model == p.model->name() &&
      p.synthetic->population->dim() == p.model->dim())
    p.population = p.synthetic->population;
  return p;
}

ModelOptions model_options_of(const DataSource& s, const std::string& model) { return model_options(s, model); }

Dataset load_data_file(const DataSource& s, bool labeled) {
  if (s.data_path.empty()) throw Error("--data: required (the records to predict)");
  return load_file(s, s.data_path, s.labels_path, labeled, "--data " + s.data_path);
}

Dataset load_eval_data(const DataSource& s, const std::string& path, const std::string& labels_path,
                       const Model& model) {
  const std::string source = "--eval " + path;
  if (path.empty()) throw Error("--eval: empty file name");
  if (path == "-" && s.data_path == "-") throw Error("--eval -: stdin already holds the --data records");
  Dataset eval = load_file(s, path, labels_path, model_info(model.name()).labeled, source);
  validate_for_model(model, eval, source);
  return eval;
}

Index declared_features(const DataSource& s) {
  if (!s.given("--features") && s.features.empty()) return 0;
  return static_cast<Index>(parse_count(s.features, "--features", 1, kMaxFeatures));
}

void check_public_shape(const DataSource& s, bool private_run) {
  if (!private_run || s.data_path.empty()) return;  // --synthetic: its spec fixes the shape
  if (!s.model.empty() && model_info(s.model).classifier && !s.given("--classes"))
    throw Error("--classes: a private " + s.model +
                " run is sized by its class count, which must be declared "
                "(public), not read from the labels: give --classes K (labels 0 .. K-1)");
  FileFormat format = FileFormat::kCsv;
  try {
    format = format_of(s, s.data_path);
  } catch (const Error&) {
    return;  // loading names the problem
  }
  if (format_info(format).sparse && declared_features(s) == 0)
    throw Error(
        "--features: a private run on LibSVM records is sized by their feature count, which must be "
        "declared (public), not read from the largest index: give --features D (indices 1 .. D)");
  if (format != FileFormat::kRecords || s.data_path == "-") return;
  RecordFileInfo info;
  try {
    info = read_record_file_info(s.data_path);
  } catch (const Error&) {
    return;  // loading names the problem
  }
  if (!info.features_declared)
    throw Error("--data " + s.data_path +
                ": the feature count of these sparse records was read from their "
                "largest index when they were converted; a private run needs it declared (public): convert them "
                "again with dpsosp convert --features D");
}

void default_features_from_point(DataSource& s, std::optional<Index> features) {
  if (!features || s.given("--features") || s.data_path.empty()) return;
  try {
    if (format_info(format_of(s, s.data_path)).sparse) s.features = std::to_string(*features);
  } catch (const Error&) {
    // loading names the problem
  }
}

std::optional<NoiseKey> read_noise_key_option(const std::string& path, bool given) {
  if (!given) return std::nullopt;
  if (path.empty()) throw Error("--noise-key-file: empty file name");
  try {
    return NoiseKey::from_file(path);
  } catch (const Error& e) {
    throw Error(std::string("--noise-key-file: ") + e.what());
  }
}

Sampling parse_sampling(const std::string& text) {
  if (text == "poisson") return Sampling::kPoisson;
  if (text == "order") return Sampling::kOrder;
  throw Error("--sampling: expected poisson or order, got " + quote_token(text));
}

void set_adjacency(const std::string& text, RunOptions& o) {
  if (text != "replace-one" && text != "zero-out")
    throw Error("--adjacency: expected replace-one or zero-out, got " + quote_token(text));
  if (!o.privacy) throw Error("--adjacency: applies to private runs");
  o.privacy->adjacency = text == "zero-out" ? Adjacency::kZeroOut : Adjacency::kReplaceOne;
}

}  // namespace dpsosp::cli
