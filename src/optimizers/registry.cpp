// The algorithm table (include/dpsosp/algorithm.hpp, optimizers/registry.hpp)
// and what reads it alone: names, listing, and RunOptions::Validate, which
// refuses, naming the field, every option an algorithm does not read.
#include "optimizers/registry.hpp"

#include <cmath>
#include <mutex>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/options.hpp"

namespace dpsosp {
namespace detail {
namespace {

struct Table {
  std::mutex mutex;
  std::vector<AlgorithmRow> rows;
};

// Built in on first use; register_algorithm appends. Rows are never removed
// or moved once handed out (std::vector of rows read under the lock; a
// reference stays valid because rows are only appended after reserve).
Table& table() {
  static Table* t = [] {
    auto* table = new Table;
    table->rows.reserve(64);
    // The built-in algorithms: the one place that names their ids.
    const std::pair<Algorithm, AlgorithmRow> built_in[] = {
        {Algorithm::kSpiderMfAdaptive, spider_mf_adaptive_row()},  // the default first
        {Algorithm::kSpiderTreeAdaptive, spider_tree_adaptive_row()},
        {Algorithm::kSpiderGaussFixed, spider_gauss_fixed_row()},
        {Algorithm::kSpiderTreePeriodic, spider_tree_periodic_row()},
        {Algorithm::kDpsgd, dpsgd_row()},
        {Algorithm::kSpider, spider_row()},
        {Algorithm::kSgd, sgd_row()},
    };
    for (const auto& [id, row] : built_in) {
      table->rows.push_back(row);
      table->rows.back().info.id = id;
    }
    return table;
  }();
  return *t;
}

}  // namespace

const AlgorithmRow& algorithm_row(Algorithm a) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (const AlgorithmRow& row : t.rows)
    if (row.info.id == a) return row;
  throw Error("algorithm: unknown algorithm id " + std::to_string(static_cast<int>(a)));
}

Algorithm register_algorithm(AlgorithmRow row) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (row.run == nullptr) throw Error("register_algorithm: " + row.info.name + " has no run function");
  for (const AlgorithmRow& r : t.rows)
    if (r.info.name == row.info.name) throw Error("register_algorithm: the name '" + row.info.name + "' is taken");
  if (t.rows.size() == t.rows.capacity()) throw Error("register_algorithm: the table is full");
  int id = 0;
  for (const AlgorithmRow& r : t.rows) id = std::max(id, static_cast<int>(r.info.id) + 1);
  row.info.id = static_cast<Algorithm>(id);
  t.rows.push_back(std::move(row));
  return t.rows.back().info.id;
}

Index batch_count(double v) {
  if (!std::isfinite(v) || v > 9.0e18) throw Error("parameters: a batch size overflowed");
  return std::max<Index>(1, static_cast<Index>(std::ceil(v)));
}

}  // namespace detail

std::vector<AlgorithmInfo> algorithm_table() {
  detail::Table& t = detail::table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<AlgorithmInfo> infos;
  for (const detail::AlgorithmRow& row : t.rows) infos.push_back(row.info);
  return infos;
}

const AlgorithmInfo& algorithm_info(Algorithm a) { return detail::algorithm_row(a).info; }

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithm_table()) names.push_back(info.name);
  return names;
}

Algorithm parse_algorithm(const std::string& name) {
  std::string list;
  for (const AlgorithmInfo& info : algorithm_table()) {
    if (info.name == name) return info.id;
    list += (list.empty() ? "" : ", ") + info.name;
  }
  throw Error("unknown algorithm '" + name + "', expected one of: " + list);
}

std::string algorithm_name(Algorithm a) { return algorithm_info(a).name; }

bool is_private_algorithm(Algorithm a) { return algorithm_info(a).is_private; }

namespace {

constexpr const char* kOverrideNames[] = {"alpha", "kappa", "sigma", "noise_multiplier", "eta", "zeta", "threshold",
                                          "b",     "T",     "Gamma"};

struct KnobName {
  Knob knob;
  const char* field;
};
constexpr KnobName kKnobs[] = {{kKnobBatchSize, "batch_size"},
                               {kKnobPeriod, "period"},
                               {kKnobEpochs, "epochs"},
                               {kKnobLearningRate, "learning_rate"},
                               {kKnobAlphaScale, "alpha_scale"},
                               {kKnobMaxPhaseLength, "max_phase_length"},
                               {kKnobTail, "tail"},
                               {kKnobO2, "o2"},
                               {kKnobAccountant, "accountant"},
                               {kKnobSampling, "sampling"},
                               {kKnobBands, "bands"}};

// The option (options.hpp key) and what follows its name in the message.
[[noreturn]] void refuse(const std::string& key, const std::string& detail) { refuse_option(key, detail); }

// Which runs are Poisson-sampled, in the messages that refuse an option for the others.
std::string poisson_words() {
  return "dpsgd with epochs > 0, spider-mf-adaptive with sampling = poisson, its default sampling";
}

template <class T>
std::string shown(const T& v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}
std::string shown_short(double v) {  // 4 significant digits: a value given as 1e300 reads back as 1e+300
  std::ostringstream os;
  os.precision(4);
  os << v;
  return os.str();
}

}  // namespace

std::string override_names(unsigned bits) {
  std::string list;
  for (unsigned i = 0; i < sizeof kOverrideNames / sizeof kOverrideNames[0]; ++i)
    if (bits & (1u << i)) list += (list.empty() ? "" : ", ") + std::string(kOverrideNames[i]);
  return list;
}

std::string algorithms_reading(Knob knob) {
  std::string list;
  for (const AlgorithmInfo& info : algorithm_table())
    if (info.knobs & knob) list += (list.empty() ? "" : ", ") + info.name;
  return list;
}

unsigned ParameterOverrides::set_bits() const {
  unsigned bits = 0;
  if (alpha) bits |= kSetAlpha;
  if (kappa) bits |= kSetKappa;
  if (sigma) bits |= kSetSigma;
  if (noise_multiplier) bits |= kSetNoiseMultiplier;
  if (eta) bits |= kSetEta;
  if (zeta) bits |= kSetZeta;
  if (threshold) bits |= kSetThreshold;
  if (b) bits |= kSetB;
  if (T) bits |= kSetT;
  if (Gamma) bits |= kSetGamma;
  return bits;
}

bool RunOptions::poisson() const {
  // dpsgd: epochs > 0 is Poisson sampling. spider-mf-adaptive: sampling says
  // how its passes draw records, by default Poisson beyond one pass.
  if (!(algorithm_info(algorithm).knobs & kKnobSampling)) return epochs.value_or(0.0) > 0;
  return sampling_or_default(sampling, epochs.value_or(0.0)) == Sampling::kPoisson;
}

bool RunOptions::composes_prior() const {
  return is_private_run() && poisson() && privacy->noise == NoiseMode::kFloat &&
         accountant.value_or(Accountant::kPld) == Accountant::kPld;
}

bool RunOptions::is_private_run() const { return is_private_algorithm(algorithm) && privacy && privacy->is_private(); }

void RunOptions::Validate() const {
  const AlgorithmInfo& info = algorithm_info(algorithm);
  const std::string& name = info.name;
  constants.Validate();
  // The target.
  if (info.is_private) {
    if (!privacy)
      refuse("epsilon", ": " + name + " is a private algorithm and needs a target: give epsilon (and delta)");
    privacy->Validate();
    // A public ceiling for Poisson-sampled runs: beyond it a guarantee says
    // nothing (e^100 ~ 3e43) and the PLD of so little noise outgrows its bins
    // (eps 1000: 1e7 bins, after 20 s). GDP-accounted runs calibrate any epsilon.
    constexpr double kMaxEpsilon = 100;
    if (privacy->is_private() && privacy->epsilon > kMaxEpsilon && poisson())
      refuse("epsilon", " = " + shown_short(privacy->epsilon) +
                            ": above 100, where a guarantee says nothing and the accountants of Poisson sampling "
                            "cannot calibrate; take epsilon <= 100 (for a non-private run: spider or sgd)");
    if (!privacy->is_private() && !info.allows_infinite_epsilon)
      refuse("epsilon", " = inf: " + name +
                            " is a private algorithm and needs a finite epsilon; for a "
                            "non-private run use spider or sgd");
  } else if (privacy && privacy->is_private()) {
    refuse("epsilon",
           " = " + shown(privacy->epsilon) + ": " + name +
               " is non-private (epsilon = inf); leave epsilon unset (or inf) or choose a private algorithm");
  }
  if (estimate.any() && !is_private_run())
    refuse(estimate.G ? "G" : "M",
           " auto: the constants are estimated privately for private runs only; give G and M for " + name);
  if (privacy && privacy->noise == NoiseMode::kSecure) {
    if (!is_private_run()) refuse("noise", " = secure: a non-private run adds no noise");
    if (poisson())
      refuse("noise", " = secure: Poisson sampling (" + poisson_words() +
                          ") is accounted for continuous Gaussian noise only; use noise = float" +
                          (info.knobs & kKnobSampling ? ", or sampling = order" : " or single-pass dpsgd"));
  }
  // Options the algorithm does not read.
  const bool given[] = {batch_size.has_value(),    period.has_value(),      epochs.has_value(),
                        learning_rate.has_value(), alpha_scale.has_value(), max_phase_length.has_value(),
                        tail.has_value(),          o2.has_value(),          accountant.has_value(),
                        sampling.has_value(),      bands.has_value()};
  for (std::size_t i = 0; i < sizeof kKnobs / sizeof kKnobs[0]; ++i) {
    if (given[i] && !(info.knobs & kKnobs[i].knob))
      refuse(kKnobs[i].field, ": applies to " + algorithms_reading(kKnobs[i].knob) + ", not " + name);
  }
  const unsigned unread = overrides.set_bits() & ~info.overrides;
  if (unread != 0) {
    refuse(
        "overrides." + override_names(unread & (~unread + 1)),
        ": " + name + (info.overrides ? " reads only " + override_names(info.overrides) : std::string(" reads none")));
  }
  if (overrides.sigma && overrides.noise_multiplier)
    refuse("overrides.sigma", " and noise_multiplier: give one (sigma = noise_multiplier * sensitivity)");
  if (!is_private_run() && (overrides.sigma || overrides.noise_multiplier))
    refuse("overrides." + std::string(overrides.sigma ? "sigma" : "noise_multiplier"),
           ": a non-private run adds no noise");
  // Values.
  const auto positive = [](double v) { return v > 0.0 && std::isfinite(v); };
  if (alpha_scale && !positive(*alpha_scale))
    refuse("alpha_scale", " = " + shown(*alpha_scale) + ": must be positive and finite");
  if (batch_size && *batch_size < 1) refuse("batch_size", " = 0: must be at least 1");
  if (period && *period < 1) refuse("period", " = 0: must be at least 1");
  if (max_phase_length && *max_phase_length < 1) refuse("max_phase_length", " = 0: must be at least 1");
  if (epochs && !(*epochs >= 0.0 && std::isfinite(*epochs)))
    refuse("epochs", " = " + shown(*epochs) + ": must be >= 0 and finite");
  if (tail && !(*tail >= 0.0 && *tail < 1.0)) refuse("tail", " = " + shown(*tail) + ": must lie in [0, 1)");
  if (accountant && !poisson())
    refuse("accountant", " = " + accountant_name(*accountant) + ": applies to Poisson-sampled runs only (" +
                             poisson_words() + "); the others are accounted exactly by GDP");
  if (privacy && privacy->adjacency && is_private_run()) {
    const Adjacency a = *privacy->adjacency;
    if (a == Adjacency::kZeroOut && !poisson())
      refuse("adjacency",
             " = zero-out: applies to Poisson-sampled runs (" + poisson_words() +
                 "); passes over the sample order hold for replace-one, and their reports state the zero-out figure "
                 "beside it");
    if (a == Adjacency::kReplaceOne && poisson() && accountant == Accountant::kRdp)
      refuse("accountant",
             " = rdp: accounts Poisson-sampled runs for zero-out only, and this run is for replace-one (the "
             "relation of spider-mf-adaptive unless adjacency names another); give adjacency = zero-out with it, "
             "or accountant = pld");
  }
  if (privacy && privacy->prior_mu > 0 && is_private_run() && !composes_prior())
    refuse("privacy.prior_mu", " = " + shown(privacy->prior_mu) +
                                   ": a prior release is composed into Poisson-sampled "
                                   "runs with float noise under the PLD accountant only");
  if (bands && *bands < 1) refuse("bands", " = 0: must be at least 1");
  if (bands && !poisson())
    refuse("bands", " = " + std::to_string(*bands) +
                        ": applies to spider-mf-adaptive with sampling = poisson (the "
                        "default run's where it can, docs/parameters.md \"sampling\", and with epochs > 1)");
  if (learning_rate && !positive(*learning_rate))
    refuse("learning_rate", " = " + shown(*learning_rate) + ": must be positive and finite");
  for (const auto& [value, field] :
       {std::pair{overrides.alpha, "alpha"}, std::pair{overrides.kappa, "kappa"}, std::pair{overrides.sigma, "sigma"},
        std::pair{overrides.noise_multiplier, "noise_multiplier"}, std::pair{overrides.eta, "eta"},
        std::pair{overrides.zeta, "zeta"}}) {
    if (value && !positive(*value))
      refuse("overrides." + std::string(field), " = " + shown(*value) + ": must be positive and finite");
  }
  if (overrides.threshold && !(*overrides.threshold >= 0.0 && std::isfinite(*overrides.threshold)))
    refuse("overrides.threshold", " = " + shown(*overrides.threshold) + ": must be >= 0 and finite");
  for (const auto& [value, field] :
       {std::pair{overrides.b, "b"}, std::pair{overrides.T, "T"}, std::pair{overrides.Gamma, "Gamma"}}) {
    if (value && *value < 1) refuse("overrides." + std::string(field), " = 0: must be at least 1");
  }
  if (threads < 0) refuse("threads", " = " + std::to_string(threads) + ": must be >= 0 (0 = all cores)");
  if (sample_order && poisson())
    refuse("order", " = " + sample_order_name(*sample_order) + ": Poisson sampling (" + poisson_words() +
                        ") draws records by index, in no order");
  if (process_group &&
      !(process_group->size() >= 1 && process_group->rank() >= 0 && process_group->rank() < process_group->size()))
    refuse("process_group", ": rank " + std::to_string(process_group->rank()) + " of " +
                                std::to_string(process_group->size()) + " processes");
}

std::string sample_order_name(SampleOrder order) { return order == SampleOrder::kFile ? "file" : "seed"; }

std::string sampling_name(Sampling s) { return s == Sampling::kPoisson ? "poisson" : "order"; }

std::string termination_name(Termination t) {
  switch (t) {
    case Termination::kMaxSteps: return "max-steps";
    case Termination::kDataExhausted: return "data-exhausted";
    case Termination::kPlannedSteps: return "planned-steps";
    case Termination::kInterrupted: return "interrupted";
    case Termination::kCallback: return "callback";
  }
  return "unknown";
}

}  // namespace dpsosp
