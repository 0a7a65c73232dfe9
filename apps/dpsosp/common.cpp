// Shared pieces of the subcommands: data sources, numbers, output files (the
// report's JSON: report_json.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

const char* range_rule(Range range) {
  switch (range) {
    case Range::kFinite: return "a finite number";
    case Range::kPositive: return "a finite number > 0";
    case Range::kNonNegative: return "a finite number >= 0";
    case Range::kPositiveOrInf: return "a number > 0 (or inf)";
    case Range::kOpenUnit: return "a number in (0, 1)";
    case Range::kHalfOpenUnit: return "a number in (0, 1]";
  }
  return "a number";
}

bool in_range(double v, Range range) {
  switch (range) {
    case Range::kFinite: return std::isfinite(v);
    case Range::kPositive: return std::isfinite(v) && v > 0;
    case Range::kNonNegative: return std::isfinite(v) && v >= 0;
    case Range::kPositiveOrInf: return v > 0;  // +inf allowed, NaN refused
    case Range::kOpenUnit: return v > 0 && v < 1;
    case Range::kHalfOpenUnit: return v > 0 && v <= 1;
  }
  return false;
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

ModelOptions model_options(const DataSource& s, const std::string& model) {
  ModelOptions o;
  const bool classifier = model == "softmax" || model == "mlp";
  if (s.given("--classes")) {
    if (!classifier) throw Error("--classes: applies to the softmax and mlp models, not " + model);
    o.classes = parse_count(s.classes, "--classes", 2, 1u << 30);
  }
  if (s.given("--hidden")) {
    if (model != "mlp") throw Error("--hidden: applies to the mlp model, not " + model);
    o.hidden = parse_count(s.hidden, "--hidden", 1, 1u << 30);
  }
  if (s.given("--rank")) {
    if (model != "pca") throw Error("--rank: applies to the pca model, not " + model);
    o.rank = parse_count(s.rank, "--rank", 1, 1u << 30);
  }
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
  } catch (const std::bad_alloc&) {
    throw Error("--model " + name + ": out of memory building the model for " + std::to_string(data.cols()) +
                " features");
  }
}

void validate_for_model(const Model& model, const Dataset& data, const std::string& source) {
  try {
    model.validate(data);
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
}

FileFormat format_of(const DataSource& s, const std::string& path) {
  return s.format.empty() ? guess_file_format(path) : parse_file_format(s.format);
}

Dataset load_file(const DataSource& s, const std::string& path, const std::string& labels_path, bool labeled,
                  const std::string& source) {
  const FileFormat format = format_of(s, path);
  if (s.header && format != FileFormat::kCsv) throw Error("--header: applies to CSV files, not " + path);
  if (!labels_path.empty() && format != FileFormat::kIdx)
    throw Error(source + ": a labels file applies to IDX data; " + path + " is not IDX");
  if (!labels_path.empty() && !labeled) throw Error(source + ": a labels file was given, but the pca model takes no labels");
  try {
    if (format == FileFormat::kIdx && !labels_path.empty()) return load_idx(path, labeled ? labels_path : "");
    LoadOptions lo;
    lo.header = s.header;
    lo.labeled = labeled;
    return load_dataset(path, format, lo);
  } catch (const std::bad_alloc&) {
    throw Error(source + ": out of memory loading the records");
  }
}

}  // namespace

void add_data_options(CLI::App& app, DataSource& s) {
  s.app = &app;
  app.add_option("--model", s.model, "Model: " + join(model_names()) + " (default with --synthetic: the problem's model)");
  auto* data = app.add_option("--data", s.data_path, "Data file (CSV, LibSVM or IDX; any of them may be gzip-compressed)");
  app.add_option("--format", s.format, "csv | libsvm | idx (default: from the file name)");
  app.add_option("--labels", s.labels_path, "IDX labels file (default: the labels-idx1 file beside the images)");
  app.add_flag("--header", s.header, "CSV: skip one header line");
  auto* syn = app.add_option("--synthetic", s.synthetic,
                             "NAME:key=value,... with NAME in phase-retrieval, pca, gaussian-mixture");
  data->excludes(syn);
  syn->excludes(data);
  app.add_option("--classes", s.classes, "softmax/mlp: number of classes, >= 2 (default: from the labels)");
  app.add_option("--hidden", s.hidden, "mlp: hidden units (default 32)");
  app.add_option("--rank", s.rank, "pca: rank r (default 1, or the synthetic spec's rank)");
}

double parse_real(const std::string& text, const std::string& option, Range range) {
  double v = 0;
  const NumberStatus status = parse_strict_double(text, v);
  if ((status == NumberStatus::kOk || status == NumberStatus::kNonFinite) && in_range(v, range)) return v;
  std::string message = option + ": expected " + range_rule(range) + ", got " + quote_token(text);
  if (status == NumberStatus::kOutOfRange) message += " (out of the range of a double)";
  throw Error(message);
}

std::uint64_t parse_count(const std::string& text, const std::string& option, std::uint64_t min,
                          std::uint64_t max) {
  std::uint64_t v = 0;
  if (parse_strict_uint(text, v) && v >= min && v <= max) return v;
  if (max == std::numeric_limits<std::uint64_t>::max())
    throw Error(option + ": expected an integer >= " + std::to_string(min) + ", got " + quote_token(text));
  throw Error(option + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
              quote_token(text));
}

LoadedProblem load_problem(const DataSource& s, std::optional<std::uint64_t> sample_order_seed) {
  if (s.given("--data") && s.data_path.empty()) throw Error("--data: empty file name");
  if (s.given("--synthetic") && s.synthetic.empty()) throw Error("--synthetic: empty spec (expected NAME:key=value,...)");
  if (s.given("--model") && s.model.empty()) throw Error("--model: empty (expected one of " + join(model_names()) + ")");
  if (s.given("--format") && s.format.empty()) throw Error("--format: empty (expected csv, libsvm or idx)");
  if (s.given("--labels") && s.labels_path.empty()) throw Error("--labels: empty file name");
  if (s.given("--format") && s.data_path.empty()) throw Error("--format: applies to --data files, not to --synthetic");
  if (s.given("--labels") && s.data_path.empty()) throw Error("--labels: applies to --data IDX files, not to --synthetic");
  if (s.given("--header") && s.data_path.empty()) throw Error("--header: applies to --data CSV files, not to --synthetic");
  if (s.synthetic.empty() && s.data_path.empty()) throw Error("give the records with --data FILE or --synthetic SPEC");
  if (!s.data_path.empty() && s.model.empty()) throw Error("--model is required with --data (one of " + join(model_names()) + ")");
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
        throw Error("--rank " + std::to_string(options.rank) + ": differs from the synthetic spec's rank=" +
                    std::to_string(spec_rank));
      options.rank = spec_rank;
    }
  } else {
    source = "--data " + s.data_path;
    // Files stay in their own order: moving the records afterwards
    // (Dataset::store_in_sample_order) costs several times what a single
    // pass then saves (docs/performance.md).
    p.data = load_file(s, s.data_path, s.labels_path, model_name != "pca", source);
  }
  p.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.model = build_model(model_name, p.data, options, source);
  validate_for_model(*p.model, p.data, source);
  if (p.synthetic && p.synthetic->population && p.synthetic->model == p.model->name() &&
      p.synthetic->population->dim() == p.model->dim())
    p.population = p.synthetic->population;
  return p;
}

ModelOptions model_options_of(const DataSource& s, const std::string& model) { return model_options(s, model); }

Dataset load_eval_data(const DataSource& s, const std::string& path, const std::string& labels_path,
                       const Model& model) {
  const std::string source = "--eval " + path;
  if (path.empty()) throw Error("--eval: empty file name");
  Dataset eval = load_file(s, path, labels_path, model.name() != "pca", source);
  validate_for_model(model, eval, source);
  return eval;
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

namespace {

bool is_stdout(const std::string& path) { return path == "-"; }

// An existing path through its symlinks (so a rename replaces the target, not
// the link); the path itself otherwise.
std::string resolved(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical.string();
}

std::string parent_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  if (is_stdout(path)) return;
  if (path.empty()) throw Error(option + ": empty file name (use - for stdout)");
  const std::string target = resolved(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(option + " " + path + ": is a directory");
    if (!S_ISREG(st.st_mode)) {  // a device or FIFO is written in place
      if (::access(target.c_str(), W_OK) != 0)
        throw Error(option + " " + path + ": cannot write: " + std::strerror(errno));
      return;
    }
  }
  // The report goes to a temporary file beside the target and is renamed over
  // it, so the directory must take a new file; try one and remove it.
  const std::string dir = parent_of(target);
  const std::string probe = target + ".dpsosp-check-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    const int err = errno;
    throw Error(option + " " + path + ": cannot create a file in '" + dir + "': " + std::strerror(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_not_input(const std::string& out, const std::string& input, const std::string& input_option) {
  if (out.empty() || is_stdout(out) || input.empty()) return;
  std::error_code ec;
  if (std::filesystem::equivalent(out, input, ec) && !ec)
    throw Error("--out " + out + ": is the same file as " + input_option + "; refusing to overwrite an input");
}

void write_text(const std::string& path, const std::string& text) {
  if (path.empty() || is_stdout(path)) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (std::fflush(stdout) != 0) throw Error("writing the report to stdout failed: " + std::string(std::strerror(errno)));
    return;
  }
  const std::string target = resolved(path);
  struct stat st {};
  const bool special = ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string tmp = special ? target : target + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw Error("--out " + path + ": cannot write '" + tmp + "': " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    if (!special) ::unlink(tmp.c_str());
    throw Error("--out " + path + ": writing failed: " + std::strerror(written ? errno : err));
  }
  if (!special && std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int rename_err = errno;
    ::unlink(tmp.c_str());
    throw Error("--out " + path + ": cannot replace the file: " + std::strerror(rename_err));
  }
}

}  // namespace dpsosp::cli
