// The option table (options.hpp): every option of a run once, with its words.
// The help is written for both front ends: options are named by their keys
// (learning_rate), which `dpsosp run --help` shows as flags.
#include <limits>

#include "dpsosp/algorithm.hpp"
#include "dpsosp/options.hpp"

namespace dpsosp {
namespace {

constexpr std::uint64_t kAnyCount = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kBatchMax = std::uint64_t{1} << 53;  // exact in a double, far above any batch

OptionSpec real(std::string key, std::string flag, std::string field, std::string def, ValueRule rule, unsigned knob,
                std::string help) {
  OptionSpec s;
  s.key = std::move(key), s.flag = std::move(flag), s.field = std::move(field), s.kind = OptionKind::kReal;
  s.default_text = std::move(def), s.value_rule = rule, s.knob = knob, s.help = std::move(help);
  return s;
}

OptionSpec count(std::string key, std::string flag, std::string field, std::string def, std::uint64_t min,
                 std::uint64_t max, unsigned knob, std::string help) {
  OptionSpec s;
  s.key = std::move(key), s.flag = std::move(flag), s.field = std::move(field), s.kind = OptionKind::kCount;
  s.default_text = std::move(def), s.min = min, s.max = max, s.knob = knob, s.help = std::move(help);
  return s;
}

OptionSpec choice(std::string key, std::string flag, std::string field, std::string def,
                  std::vector<std::string> choices, unsigned knob, std::string help) {
  OptionSpec s;
  s.key = std::move(key), s.flag = std::move(flag), s.field = std::move(field), s.kind = OptionKind::kChoice;
  s.default_text = std::move(def), s.choices = std::move(choices), s.knob = knob, s.help = std::move(help);
  return s;
}

OptionSpec other(std::string key, std::string flag, std::string field, OptionKind kind, std::string def, unsigned knob,
                 std::string help, bool model_or_data = false) {
  OptionSpec s;
  s.key = std::move(key), s.flag = std::move(flag), s.field = std::move(field), s.kind = kind;
  s.default_text = std::move(def), s.knob = knob, s.help = std::move(help), s.model_or_data = model_or_data;
  return s;
}

// A number by `rule`, or auto (the default).
OptionSpec constant(std::string key, std::string flag, std::string field, ValueRule rule, std::string help) {
  OptionSpec s =
      other(std::move(key), std::move(flag), std::move(field), OptionKind::kConstant, "auto", 0, std::move(help));
  s.value_rule = rule;
  return s;
}

std::vector<OptionSpec> build_table() {
  std::vector<std::string> algorithms;
  for (const AlgorithmInfo& info : algorithm_table()) algorithms.push_back(info.name);
  std::vector<std::string> accountants;  // those a run can choose (the accountant table's rows with one)
  for (const AccountantInfo& a : accountant_table())
    if (a.run) accountants.push_back(a.name);
  const std::uint64_t kThreads = 1024;
  return {
      choice("algo", "--algo", "algorithm", "spider-mf-adaptive", algorithms, 0,
             "The algorithm (docs/parameters.md has each one's rules)"),
      real("epsilon", "--epsilon", "privacy.epsilon", "1", ValueRule::kPositiveOrInf, 0,
           "Privacy budget epsilon (> 0, at most 100 for Poisson-sampled runs such as the default; inf: "
           "non-private); a private algorithm's default is 1, a non-private one takes none"),
      real("delta", "--delta", "privacy.delta", "1e-6", ValueRule::kOpenUnit, 0,
           "Privacy parameter delta in (0, 1), well below 1/n (a delta not below 1/n is refused)"),
      choice("noise", "--noise", "privacy.noise", "float", {"float", "secure"}, 0,
             "float: Gaussian noise in floating point (exact GDP); secure: every release on a grid plus exact "
             "discrete Gaussian noise (closes the floating-point attacks; about 7% more noise, zCDP accounting)"),
      choice("adjacency", "--adjacency", "privacy.adjacency", "", {"replace-one", "zero-out"}, 0,
             "The relation epsilon is for (default: replace-one; dpsgd with epochs: zero-out, as Opacus). "
             "Poisson-sampled runs take either (zero-out: Opacus's relation, same passes, less noise); passes "
             "over the order: replace-one only"),
      count("seed", "--seed", "seed", "", 0, kAnyCount, 0,
            "Seed of the public randomness: sample order and saddle perturbations (default: drawn from the OS; "
            "reported)"),
      other("noise_key_file", "--noise-key-file", "noise_key", OptionKind::kText, "", 0,
            "File of the secret key of the privacy noise (32 hex digits, from dpsosp keygen), for a reproducible "
            "run; keep it as secret as the data (default: a fresh key from the OS, kept nowhere)"),
      constant(
          "G", "--G", "constants.G", ValueRule::kPositive,
          "Lipschitz constant: the per-example gradient clip (> 0), or auto: the private median (a regression where "
          "the noise is small: a higher quantile, up to 0.9) of the per-example gradient norms at x0 on the first "
          "min(20000, max(min(500, n/10), n/50)) records, which "
          "the run then leaves unused (Poisson runs under PLD on fewer than 25000 records: on eight times as many, "
          "which the run keeps, its counts composed into the run's PLD) (private runs; non-private: 1)"),
      constant("M", "--M", "constants.M", ValueRule::kPositive,
               "Smoothness: the O2 clip is M ||x_t - x_{t-1}||, the step 1/M (> 0), or auto: the private median of "
               "the per-example gradient-difference ratios at x0 (private runs; non-private: 1)"),
      real("rho", "--rho", "constants.rho", "1", ValueRule::kPositive, 0, "Hessian-Lipschitz constant (> 0)"),
      real("B", "--B", "constants.B", "1", ValueRule::kPositive, 0, "Bound on F(x0) - inf F (> 0)"),
      real("alpha_scale", "--alpha-scale", "alpha_scale", "1", ValueRule::kPositive, kKnobAlphaScale,
           "SPIDER algorithms: multiplies the theory's alpha"),
      count("batch_size", "--batch-size", "batch_size", "", 1, kBatchMax, kKnobBatchSize,
            "The fixed batch (at most n): spider-mf-adaptive's O1 batch (the expected batch with sampling = "
            "poisson), the O2 batch of spider-gauss-fixed, spider-tree-periodic and spider, dpsgd's and sgd's "
            "batch (default: the algorithm's rule)"),
      count("period", "--period", "period", "", 1, kBatchMax, kKnobPeriod,
            "spider-tree-periodic: an O1 every q >= 1 steps (default: from the theory)"),
      real("epochs", "--epochs", "epochs", "", ValueRule::kNonNegative, kKnobEpochs,
           "spider-mf-adaptive: passes (0 or 1: one), drawn as sampling says; unset: the default run's, 3 up to "
           "100000 records, then floor(300000 / n), at least 1; a classifier on a scaled table more where the "
           "noise is small, up to 30 (docs/parameters.md). dpsgd: > 0 selects multi-epoch Poisson sampling; "
           "0 or unset: one pass"),
      choice("sampling", "--sampling", "sampling", "", {"poisson", "order"}, kKnobSampling,
             "spider-mf-adaptive: poisson (cyclic Poisson sampling with the banded square-root factorization, "
             "amplified; the default where the run can, docs/parameters.md; replace-one unless adjacency says "
             "otherwise) or order (whole passes over the sample order, replace-one; streams)"),
      count("bands", "--bands", "bands", "", 1, kBatchMax, kKnobBands,
            "spider-mf-adaptive with sampling = poisson: the bands, groups the steps cycle through (default: "
            "automatic, docs/parameters.md)"),
      choice("accountant", "--accountant", "accountant", "", accountants, kKnobAccountant,
             "Poisson-sampled runs (dpsgd with epochs, spider-mf-adaptive with sampling = poisson): pld "
             "(privacy-loss distribution, the default: less noise for the same target) or rdp; calibrates the "
             "noise and states the guarantee"),
      real("learning_rate", "--learning-rate", "learning_rate", "", ValueRule::kPositive, kKnobLearningRate,
           "Step size > 0 (default 1/M)"),
      real("tail", "--tail", "tail", "", ValueRule::kNonNegative, kKnobTail,
           "spider-mf-adaptive: the result is the mean of the iterates over the last tail of the records, in "
           "[0, 1) (0: the last iterate; default 0.25)"),
      other("o2", "--o2", "o2", OptionKind::kSwitch, "off", kKnobO2,
            "spider-mf-adaptive: on for phases of O1 and consistent O2 steps, off for O1 steps only "
            "(docs/parameters.md)"),
      count("max_steps", "--max-steps", "max_steps", "0", 0, kAnyCount, 0,
            "Stop after this many steps (0: until the records run out)"),
      count("max_phase_length", "--max-phase-length", "max_phase_length", "0", 0, kAnyCount, kKnobMaxPhaseLength,
            "SPIDER algorithms: L_max, the longest phase (0: automatic, docs/parameters.md)"),
      other("overrides", "--set", "overrides", OptionKind::kOverrides, "", 0,
            "Set a computed parameter (docs/parameters.md): alpha, kappa, sigma, noise_multiplier, eta, zeta, "
            "threshold, b, T, Gamma; each algorithm reads those of its row"),
      count("threads", "--threads", "threads", "0", 0, kThreads, 0,
            "Threads, 0 (all cores) to 1024; never changes the results"),
      choice("order", "--order", "sample_order", "", {"seed", "file"}, 0,
             "Single-pass order: seed (the default: a random order fixed by seed) or file (the records' own "
             "order, public; a streamed run's)"),
      other("trajectory", "--trajectory", "record_trajectory", OptionKind::kFlag, "", 0,
            "Include every iterate in the report"),
      other("release_only", "--release-only", "", OptionKind::kFlag, "", 0,
            "Leave out the diagnostics (clipped counts, timings, evaluation): the report holds only what the "
            "privacy guarantee covers"),
      other("stream", "--stream", "", OptionKind::kFlag, "", 0,
            "Read a record file (dpsosp convert) once, front to back, a few batches in memory at a time: the "
            "single-pass order is the file's (public, fixed before the run); every record is checked as it is "
            "read, and a bad one ends the run with no report",
            true),
      choice("scale", "--scale", "ScalingOptions", "auto", {"auto", "private", "none"}, 0,
             "auto: features (and a regression's target) without bounds are scaled by a private estimate for "
             "loaded tables (CSV, LibSVM, arrays; not IDX or record files) of logistic, sigmoid, softmax, mlp, "
             "linear and cauchy; private: always; none: the records as they are (docs/own-table.md)"),
      constant("scale_share", "--scale-share", "ScalingOptions::share", ValueRule::kOpenUnit,
               "The share of the budget (of mu^2) the private scale estimate takes, in (0, 1), or auto: 0.25, or, "
               "where no regression target is estimated, less (down to 0.1) where its counts would stand far out "
               "of their noise, more (up to 0.4) where a small table's would not stand out (public: n, the columns, "
               "the target; docs/own-table.md)"),
      other("normalize", "--normalize", "ScalingOptions::normalize", OptionKind::kFlag, "", 0,
            "Scale each record (after the box) to norm 1 (a public transform)"),
      other("bounds", "--bounds", "ScalingOptions::bounds", OptionKind::kBounds, "", 0,
            "Public feature bounds, one (lo, hi) for every feature or one per feature (CLI: LO:HI, "
            "LO:HI,LO:HI,... or a file of LO,HI lines or JSON); records are clipped into the box and mapped onto "
            "[-1, 1], at no cost to the budget",
            true),
      other("y_bounds", "--y-bounds", "ScalingOptions::y_bounds", OptionKind::kBounds, "", 0,
            "linear, cauchy: public target bounds (lo, hi)", true),
      other("fit_intercept", "--fit-intercept", "ModelOptions::fit_intercept", OptionKind::kSwitch, "", 0,
            "A bias in each margin (default: on for logistic, sigmoid, softmax, linear and cauchy; CLI: "
            "--no-fit-intercept turns it off)",
            true),
      other("classes", "--classes", "ModelOptions::classes", OptionKind::kText, "", 0,
            "softmax, mlp: the class count K (labels 0 .. K-1), or the public class names (logistic, sigmoid: "
            "2), each label mapped to its index; a private run needs it declared",
            true),
      other("hidden", "--hidden", "ModelOptions::hidden", OptionKind::kCount, "32", 0, "mlp: hidden units", true),
      other("rank", "--rank", "ModelOptions::rank", OptionKind::kCount, "1", 0, "pca: the rank r", true),
  };
}

}  // namespace

const std::vector<OptionSpec>& run_option_table() {
  static const std::vector<OptionSpec> table = build_table();
  return table;
}

const OptionSpec& run_option(const std::string& key) {
  for (const OptionSpec& s : run_option_table())
    if (s.key == key) return s;
  throw Error("unknown option '" + key + "'");
}

std::string option_word(const std::string& key, FrontEnd front_end) {
  if (key.rfind("overrides.", 0) == 0) return front_end == FrontEnd::kCli ? "--set " + key.substr(10) : key;
  for (const OptionSpec& s : run_option_table())
    if (s.key == key) return front_end == FrontEnd::kCli ? s.flag : s.key;
  return key;
}

std::string option_rule_text(const OptionSpec& s) {
  switch (s.kind) {
    case OptionKind::kReal: return value_rule_text(s.value_rule);
    case OptionKind::kCount: return count_rule_text(s.min, s.max);
    case OptionKind::kChoice: {
      std::string list;
      for (std::size_t i = 0; i < s.choices.size(); ++i)
        list += (i == 0 ? "" : i + 1 == s.choices.size() ? " or " : ", ") + s.choices[i];
      return list;
    }
    case OptionKind::kSwitch: return "on or off";
    case OptionKind::kFlag: return "a flag";
    case OptionKind::kConstant: return value_rule_text(s.value_rule) + ", or auto";
    case OptionKind::kText: return "text";
    case OptionKind::kOverrides: return "name=value";
    case OptionKind::kBounds: return "intervals LO:HI";
  }
  return "";
}

void refuse_option(const std::string& key, const std::string& detail) {
  // A RunOptions field by its path (privacy.delta); others by their keys.
  std::string field = key;
  for (const OptionSpec& s : run_option_table())
    if (s.key == key && !s.field.empty() && s.field.find("::") == std::string::npos) field = s.field;
  throw OptionError(key, detail, "RunOptions: " + field);
}

std::string option_error_words(const OptionError& e, FrontEnd front_end) {
  return option_word(e.key(), front_end) + e.detail();
}

}  // namespace dpsosp
