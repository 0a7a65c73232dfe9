// Shared pieces of the subcommands: data sources, numbers, JSON.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "cli.hpp"

namespace dpsosp::cli {

void add_data_options(CLI::App& app, DataSource& s) {
  app.add_option("--model", s.model, "Model: " + [] {
    std::string list;
    for (const auto& m : model_names()) list += (list.empty() ? "" : ", ") + m;
    return list;
  }() + " (default with --synthetic: the problem's model)");
  auto* data = app.add_option("--data", s.data_path, "Data file (CSV, LibSVM or IDX; .gz accepted for IDX)");
  app.add_option("--format", s.format, "csv | libsvm | idx (default: from the file name)");
  app.add_option("--labels", s.labels_path, "IDX labels file (with --format idx)");
  app.add_flag("--header", s.header, "CSV: skip one header line");
  auto* syn = app.add_option("--synthetic", s.synthetic,
                             "NAME:key=value,... with NAME in phase-retrieval, pca, gaussian-mixture");
  data->excludes(syn);
  syn->excludes(data);
  app.add_option("--classes", s.model_options.classes, "softmax/mlp: number of classes (default: from labels)");
  app.add_option("--hidden", s.model_options.hidden, "mlp: hidden units")->capture_default_str();
  app.add_option("--rank", s.model_options.rank, "pca: rank r")->capture_default_str();
}

double parse_number(const std::string& text, const std::string& option) {
  if (text == "inf" || text == "infinity" || text == "Inf" || text == "INF") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isnan(v)) {
    throw Error(option + ": expected a number, got '" + text + "'");
  }
  return v;
}

LoadedProblem load_problem(const DataSource& s) {
  LoadedProblem p;
  const auto start = std::chrono::steady_clock::now();
  std::string model_name = s.model;
  if (!s.synthetic.empty()) {
    p.synthetic = make_synthetic(s.synthetic);
    p.data = p.synthetic->data;
    if (model_name.empty()) model_name = p.synthetic->model;
  } else if (!s.data_path.empty()) {
    if (model_name.empty()) throw Error("--model is required with --data");
    const FileFormat format = s.format.empty() ? guess_file_format(s.data_path) : parse_file_format(s.format);
    if (format == FileFormat::kIdx && !s.labels_path.empty()) {
      p.data = load_idx(s.data_path, s.labels_path);
    } else {  // IDX without --labels: the labels file beside the images (MNIST naming)
      LoadOptions lo;
      lo.header = s.header;
      lo.labeled = model_name != "pca";
      p.data = load_dataset(s.data_path, format, lo);
    }
  } else {
    throw Error("give the records with --data FILE or --synthetic SPEC");
  }
  p.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.model = make_model(model_name, p.data.cols(), s.model_options, &p.data);
  p.model->validate(p.data);
  return p;
}

nlohmann::json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

nlohmann::json certificate_json(const Certificate& c) {
  return {{"grad_norm", number(c.grad_norm)}, {"lambda_min", number(c.lambda_min)}, {"sosp_gap", number(c.sosp_gap)}};
}

nlohmann::json summary_json(const Summary& s) {
  nlohmann::json j;
  j["x"] = std::vector<double>(s.x.data(), s.x.data() + s.x.size());
  j["algo"] = s.algorithm;
  j["private"] = std::isfinite(s.epsilon);
  j["epsilon"] = number(s.epsilon);
  j["delta"] = s.delta;
  j["mu"] = number(s.mu);
  j["sigma"] = s.sigma;
  j["sensitivity"] = s.sensitivity;
  j["noise_multiplier"] = s.noise_multiplier;
  j["epsilon_rdp"] = number(s.epsilon_rdp);
  j["zcdp_rho"] = number(s.zcdp_rho);
  j["depth"] = s.depth;
  j["accounting"] = s.accounting;
  j["adjacency"] = s.adjacency;
  j["seed"] = s.seed;
  j["samples_used"] = s.samples_used;
  j["gradient_evaluations"] = s.gradient_evaluations;
  j["steps"] = s.steps;
  j["o1_calls"] = s.o1_calls;
  j["perturbations"] = s.perturbations;
  j["clipped"] = {{"o1", s.clipped_o1}, {"o2", s.clipped_o2}, {"total", s.clipped_o1 + s.clipped_o2}};
  j["phase_lengths"] = s.phase_lengths;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : s.params) params[k] = number(v);
  j["params"] = params;
  j["seconds"] = s.seconds;
  j["termination"] = s.termination;
  j["interrupted"] = s.interrupted;
  if (!s.trajectory.empty()) {
    nlohmann::json t = nlohmann::json::array();
    for (const auto& v : s.trajectory) t.push_back(std::vector<double>(v.data(), v.data() + v.size()));
    j["trajectory"] = t;
  }
  return j;
}

void check_writable(const std::string& path) {
  if (path.empty() || path == "-") return;
  std::ofstream f(path, std::ios::app);
  if (!f) throw Error("--out: cannot write to '" + path + "'");
}

void write_text(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) throw Error("cannot write to '" + tmp + "'");
    f << text;
    if (!f.flush()) throw Error("writing '" + tmp + "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error("cannot replace '" + path + "'");
}

}  // namespace dpsosp::cli
