// dpsosp: the algorithms, as a table. One row per algorithm says its name,
// whether it is private, which options it reads and its mechanism; parsing,
// listing, option checks (RunOptions::Validate), the CLI, the Python module
// and the audit read it (docs/architecture.md).
#pragma once
#include <string>
#include <vector>

#include "dpsosp/mechanism.hpp"

namespace dpsosp {

/// An algorithm's identity: the built-in ones below, and ids that
/// detail::register_algorithm hands out for others.
enum class Algorithm : int {
  kSpiderTreeAdaptive,  ///< Liu & Talwar: tree noise, adaptive O2 batches (the paper's algorithm)
  kSpiderGaussFixed,    ///< Ganesh et al. 2023: Gaussian noise per release, fixed batches
  kSpiderTreePeriodic,  ///< Arora et al. 2023: O1 every q steps, tree noise, no perturbation
  kDpsgd,               ///< clipped per-example gradients plus Gaussian noise
  kSpider,              ///< non-private SpiderBoost reference
  kSgd,                 ///< non-private SGD reference
  kSpiderMfAdaptive,    ///< matrix-factorization noise, consistent O2, tail average (the default)
};

/// The options of RunOptions that only some algorithms read.
enum Knob : unsigned {
  kKnobBatchSize = 1u << 0,       ///< RunOptions::batch_size
  kKnobPeriod = 1u << 1,          ///< RunOptions::period
  kKnobEpochs = 1u << 2,          ///< RunOptions::epochs
  kKnobLearningRate = 1u << 3,    ///< RunOptions::learning_rate
  kKnobAlphaScale = 1u << 4,      ///< RunOptions::alpha_scale
  kKnobMaxPhaseLength = 1u << 5,  ///< RunOptions::max_phase_length
  kKnobTail = 1u << 6,            ///< RunOptions::tail
  kKnobO2 = 1u << 7,              ///< RunOptions::o2
  kKnobAccountant = 1u << 8,      ///< RunOptions::accountant
  kKnobSampling = 1u << 9,        ///< RunOptions::sampling
  kKnobBands = 1u << 10,          ///< RunOptions::bands
};

/// The entries of ParameterOverrides (params.hpp), as bits.
enum OverrideBit : unsigned {
  kSetAlpha = 1u << 0,
  kSetKappa = 1u << 1,
  kSetSigma = 1u << 2,
  kSetNoiseMultiplier = 1u << 3,
  kSetEta = 1u << 4,
  kSetZeta = 1u << 5,
  kSetThreshold = 1u << 6,
  kSetB = 1u << 7,
  kSetT = 1u << 8,
  kSetGamma = 1u << 9,
};

/// One row of the table.
struct AlgorithmInfo {
  Algorithm id;
  std::string name;         ///< the --algo / algo= name
  std::string description;  ///< one line, for help texts
  bool is_private = true;
  /// A private algorithm that also runs as its non-private reference with
  /// epsilon = inf (spider-tree-adaptive, whose eps = inf run is spider's).
  bool allows_infinite_epsilon = false;
  MechanismKind mechanism = MechanismKind::kNone;
  unsigned knobs = 0;      ///< Knob bits it reads
  unsigned overrides = 0;  ///< OverrideBit bits it reads
};

/// Every algorithm, built-in ones first, in a stable order.
std::vector<AlgorithmInfo> algorithm_table();
const AlgorithmInfo& algorithm_info(Algorithm a);
/// By name; throws Error listing the names when unknown.
Algorithm parse_algorithm(const std::string& name);
std::string algorithm_name(Algorithm a);
std::vector<std::string> algorithm_names();
bool is_private_algorithm(Algorithm a);
/// "alpha, kappa, ..." for the override bits, in ParameterOverrides order.
std::string override_names(unsigned bits);
/// The names of the algorithms that read `knob`, comma-separated.
std::string algorithms_reading(Knob knob);

}  // namespace dpsosp
