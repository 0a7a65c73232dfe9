// RunRequest (options.hpp): what a user gave, by the option table's rules,
// into RunOptions, with every refusal in the front end's words.
#include <algorithm>
#include <cmath>
#include <limits>

#include "dpsosp/algorithm.hpp"
#include "dpsosp/options.hpp"

namespace dpsosp {

namespace {

// A value in a message: quoted as typed on the command line; in Python a
// number as its repr, a string quoted.
std::string shown(const std::string& text, FrontEnd front_end) {
  double number = 0;
  const NumberStatus status = parse_strict_double(text, number);
  if (front_end == FrontEnd::kPython && (status == NumberStatus::kOk || status == NumberStatus::kNonFinite))
    return text;
  return quote_token(text);
}

}  // namespace

double parse_option_real(const std::string& text, const std::string& word, ValueRule rule, FrontEnd front_end,
                         bool or_auto) {
  double v = 0;
  const NumberStatus status = parse_strict_double(text, v);
  if ((status == NumberStatus::kOk || status == NumberStatus::kNonFinite) && satisfies(v, rule)) return v;
  std::string message =
      word + ": expected " + value_rule_text(rule) + (or_auto ? ", or auto" : "") + ", got " + shown(text, front_end);
  if (status == NumberStatus::kOutOfRange) message += " (out of the range of a double)";
  throw Error(message);
}

std::uint64_t parse_option_count(const std::string& text, const std::string& word, std::uint64_t min, std::uint64_t max,
                                 FrontEnd front_end) {
  std::uint64_t v = 0;
  if (parse_strict_uint(text, v) && v >= min && v <= max) return v;
  throw Error(word + ": expected " + count_rule_text(min, max) + ", got " + shown(text, front_end));
}

RunRequest::RunRequest(const OptionValues& values, const std::map<std::string, std::string>& overrides,
                       FrontEnd front_end, bool streamed)
    : front_end_(front_end) {
  for (const auto& [key, text] : values) {
    const OptionSpec& spec = run_option(key);  // an unknown key is the front end's mistake
    if (spec.model_or_data) throw Error(spec.key + ": read by the model or the data, not by RunRequest");
    given_.insert(key);
  }
  const auto text = [&](const std::string& key) {
    const auto it = values.find(key);
    return it != values.end() ? it->second : run_option(key).default_text;
  };
  const auto real = [&](const std::string& key) {
    return parse_option_real(text(key), word(key), run_option(key).value_rule, front_end);
  };
  const auto count = [&](const std::string& key) {
    const OptionSpec& s = run_option(key);
    return parse_option_count(text(key), word(key), s.min, s.max, front_end);
  };
  const auto choice = [&](const std::string& key) {
    const std::string t = text(key);
    for (const std::string& c : run_option(key).choices)
      if (t == c) return t;
    throw Error(word(key) + ": expected " + option_rule_text(run_option(key)) + ", got " + shown(t, front_end));
  };
  const auto flag = [&](const std::string& key) {
    const std::string t = text(key);
    if (t != "" && t != "true" && t != "false") throw Error(word(key) + ": expected true or false, got " + t);
    return t == "true";
  };
  RunOptions& o = options;
  o.algorithm = parse_algorithm(text("algo"));
  const AlgorithmInfo& info = algorithm_info(o.algorithm);
  // The target: epsilon (default 1) for a private algorithm; a non-private
  // one takes none unless given (and then Validate refuses a finite one).
  const double epsilon = real("epsilon");
  delta = real("delta");
  const std::string noise = choice("noise");
  if (info.is_private || given("epsilon")) o.privacy = PrivacyTarget{epsilon, delta};
  if (noise == "secure") {
    if (!o.privacy) throw Error(word("noise") + " secure: " + info.name + " is non-private and adds no noise");
    o.privacy->noise = NoiseMode::kSecure;
  }
  // G and M: a value, or auto (a private estimate, clip_estimate.hpp), the
  // default of a private run; a non-private run takes 1 when not given.
  const auto constant = [&](const std::string& key, bool& estimate) {
    const std::string t = text(key);
    if (t != "auto") return parse_option_real(t, word(key), ValueRule::kPositive, front_end, true);
    if (info.is_private && !(o.privacy && !o.privacy->is_private())) {
      estimate = true;
    } else if (given(key)) {
      throw Error(word(key) +
                  " auto: the constants are estimated privately for private runs only; give a value "
                  "for " +
                  info.name);
    }
    return 1.0;
  };
  o.constants.G = constant("G", o.estimate.G);
  o.constants.M = constant("M", o.estimate.M);
  o.constants.rho = real("rho");
  o.constants.B = real("B");
  if (given("alpha_scale")) o.alpha_scale = real("alpha_scale");
  if (given("batch_size")) o.batch_size = static_cast<Index>(count("batch_size"));
  if (given("period")) o.period = static_cast<Index>(count("period"));
  o.max_steps = static_cast<Index>(count("max_steps"));
  if (given("max_phase_length")) {
    const auto L = static_cast<Index>(count("max_phase_length"));
    if (L > 0)
      o.max_phase_length = L;  // 0: automatic
    else if (!(info.knobs & kKnobMaxPhaseLength))
      throw Error(word("max_phase_length") + ": applies to " + algorithms_reading(kKnobMaxPhaseLength) + ", not " +
                  info.name);
  }
  if (given("epochs")) {
    o.epochs = real("epochs");
    if (*o.epochs > 1e9)
      throw Error(word("epochs") + ": expected at most 1e9 epochs, got " + shown(text("epochs"), front_end));
  }
  if (given("accountant")) o.accountant = accountant_info(choice("accountant")).run;
  if (given("sampling")) o.sampling = choice("sampling") == "poisson" ? Sampling::kPoisson : Sampling::kOrder;
  if (given("adjacency")) {
    const std::string a = choice("adjacency");
    if (!o.privacy) throw Error(word("adjacency") + ": applies to private runs");
    o.privacy->adjacency = a == "zero-out" ? Adjacency::kZeroOut : Adjacency::kReplaceOne;
  }
  if (given("bands")) o.bands = static_cast<Index>(count("bands"));
  if (given("learning_rate")) o.learning_rate = real("learning_rate");
  if (given("tail")) o.tail = real("tail");
  if (given("o2")) {
    const std::string t = text("o2");
    if (t != "on" && t != "off") throw Error(word("o2") + ": expected on or off, got " + shown(t, front_end));
    if (!(info.knobs & kKnobO2))
      throw Error(word("o2") + ": applies to " + algorithms_reading(kKnobO2) + ", not " + info.name);
    o.o2 = t == "on";
  }
  o.threads = static_cast<int>(count("threads"));
  o.record_trajectory = flag("trajectory");
  release_only = flag("release_only");
  for (const auto& [name, value] : overrides) {
    const std::string key = "overrides." + name;
    const std::string w = word(key);
    ParameterOverrides& p = o.overrides;
    if (name == "b" || name == "T" || name == "Gamma") {
      const auto v = static_cast<Index>(parse_option_count(value, w, 1, std::uint64_t{1} << 53, front_end));
      (name == "b" ? p.b : name == "T" ? p.T : p.Gamma) = v;
      continue;
    }
    std::optional<double>* slot = name == "alpha"              ? &p.alpha
                                  : name == "kappa"            ? &p.kappa
                                  : name == "sigma"            ? &p.sigma
                                  : name == "noise_multiplier" ? &p.noise_multiplier
                                  : name == "eta"              ? &p.eta
                                  : name == "zeta"             ? &p.zeta
                                  : name == "threshold"        ? &p.threshold
                                                               : nullptr;
    if (slot == nullptr)
      throw Error(option_word("overrides", front_end) + ": unknown parameter " + shown(name, front_end) + " (" +
                  override_names(~0u) + ")");
    *slot = parse_option_real(value, w, ValueRule::kPositive, front_end);
  }
  if (given("seed")) o.seed = count("seed");
  if (given("order")) {
    const std::string order = choice("order");
    if (streamed && order != "file")
      throw Error(word("order") + " " + order + ": a streamed run reads the records in the file's order (" +
                  setting("order", "file") + ")");
    o.sample_order = order == "file" ? SampleOrder::kFile : SampleOrder::kSeed;
  }
  choose_default_sampling(o, streamed);  // the one default of both front ends
  if (streamed && o.poisson())
    throw Error(word("stream") + ": a streamed run reads the file in order; " +
                (info.knobs & kKnobSampling
                     ? setting("sampling", "poisson") + " (the default with " + word("epochs") +
                           " above 1) draws records by index; give " + setting("sampling", "order")
                     : word("epochs") + " (Poisson dpsgd) draws records by index"));
  // What applies to which algorithm is the library's rule.
  try {
    o.Validate();
  } catch (const OptionError& e) {
    throw Error(option_error_words(e, front_end));
  }
  if (given("noise_key_file") && !o.is_private_run())
    throw Error(word("noise_key_file") + ": a non-private run draws no privacy noise");
  scale = choice("scale");
  if (const std::string t = text("scale_share"); t != "auto")
    scale_share = parse_option_real(t, word("scale_share"), ValueRule::kOpenUnit, front_end, true);
  normalize = flag("normalize");
}

ScalingOptions RunRequest::scaling(const std::string& model, Index features, bool table, bool streamed,
                                   std::vector<Interval> bounds, std::optional<Interval> y_bounds,
                                   const std::vector<bool>& one_hot) const {
  ScalingOptions so;
  if (std::find(one_hot.begin(), one_hot.end(), true) != one_hot.end()) {
    if (static_cast<Index>(one_hot.size()) != features)
      throw Error("scaling: one-hot flags for " + std::to_string(one_hot.size()) + " features, the records have " +
                  std::to_string(features));
    so.public_boxes.resize(one_hot.size());
    for (std::size_t j = 0; j < one_hot.size(); ++j)
      if (one_hot[j]) so.public_boxes[j] = Interval{0, 1};
  }
  const ModelInfo& info = model_info(model);
  so.target = info.regression;
  so.bounds = std::move(bounds);
  so.y_bounds = y_bounds;
  so.share = scale_share.value_or(so.share);
  so.automatic_share = !scale_share;
  so.normalize = normalize;
  if (scale == "private" && (streamed || !info.scales_by_default))
    throw Error(word("scale") +
                " private: applies to loaded records of the logistic, sigmoid, softmax, mlp, linear "
                "and cauchy models");
  so.estimate_features = scale == "private" || (scale == "auto" && table && info.scales_by_default);
  so.automatic = scale == "auto";
  so.estimate_target = so.estimate_features && so.target;
  if (streamed && so.any())
    throw Error(word("stream") + ": the records are read once, as they are; " + word("bounds") + ", " +
                word("y_bounds") + " and " + word("normalize") + " apply to loaded records");
  try {
    so.Validate(features);
  } catch (const OptionError& e) {
    throw Error(option_error_words(e, front_end_));
  }
  return so;
}

void RunRequest::check_records(Index n) const {
  try {
    options.Validate(n);
  } catch (const OptionError& e) {
    if (e.key() == "delta" && !given("delta")) {
      throw Error(word("delta") + " (the default, " + run_option("delta").default_text + ") is not below 1/n for the " +
                  std::to_string(n) + " records: give a smaller " + word("delta") + ", well below 1/n");
    }
    throw Error(option_error_words(e, front_end_));
  }
}

}  // namespace dpsosp
