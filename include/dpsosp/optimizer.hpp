// dpsosp: one entry point for every optimizer (SPEC sections 2 and 4).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/algorithm.hpp"
#include "dpsosp/clip_estimate.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/mechanism.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/process_group.hpp"
#include "dpsosp/record_file.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// Why a run ended.
enum class Termination {
  kMaxSteps,       ///< RunOptions::max_steps reached
  kDataExhausted,  ///< the unused records cannot fill the next batch (single pass)
  kPlannedSteps,   ///< the planned steps of Poisson dpsgd are done
  kInterrupted,    ///< RunOptions::stop_flag was set (a signal)
  kCallback,       ///< RunOptions::on_step returned false
};
/// "max-steps", "data-exhausted", "planned-steps", "interrupted", "callback".
std::string termination_name(Termination t);

/// What the callback sees after each step: the released iterate and what the
/// step did (all of it a function of the release and public sizes).
struct Iteration {
  Index step = 0;           ///< steps done, this one included
  const Vec* x = nullptr;   ///< the iterate after the step
  bool o1 = false;          ///< the step called O1 (a new phase)
  Index batch = 0;          ///< records this step drew
  double release_norm = 0;  ///< ||released estimate|| (SPIDER), ||noisy gradient|| (SGD)
  bool perturbed = false;   ///< a saddle perturbation was added
  /// The steps the run plans, fixed before it (spider-mf-adaptive's horizon,
  /// Poisson's planned steps); 0 when it ends where its records run out.
  Index planned_steps = 0;
};

/// The order in which a single-pass run uses its records, each once.
enum class SampleOrder {
  kSeed,  ///< a random order fixed by the seed (the default for records in memory)
  kFile,  ///< the records' own order 0, 1, 2, ...: public, fixed before the run (a streamed run's order)
};
/// "seed", "file".
std::string sample_order_name(SampleOrder order);

/// How to run. Options that only some algorithms read are optional: setting
/// one that the chosen algorithm does not read is an error (Validate), never
/// silently ignored. The algorithm table (algorithm.hpp) says which reads what.
struct RunOptions {
  Algorithm algorithm = Algorithm::kSpiderMfAdaptive;
  /// The target of a private algorithm (required); a non-private one takes
  /// none, or epsilon = inf. spider-tree-adaptive with epsilon = inf runs as
  /// the non-private reference.
  std::optional<PrivacyTarget> privacy;
  ProblemConstants constants;
  /// Private runs: estimate G and/or M privately first (--G auto / --M auto,
  /// clip_estimate.hpp) on the first records of the sample order, which the run
  /// then leaves unused (Poisson runs under PLD: shared with the run, the
  /// counts composed into its PLD); the estimates replace constants.G / M.
  ConstantsEstimateOptions estimate;
  /// SPIDER algorithms: multiplies the theory's alpha (default 1).
  std::optional<double> alpha_scale;
  ParameterOverrides overrides;
  /// The fixed batch: O2 batch of spider-gauss-fixed and spider-tree-periodic,
  /// O2 batch of the non-private spider (default adaptive), batch of dpsgd and
  /// sgd (default 256).
  std::optional<Index> batch_size;
  /// spider-tree-periodic: O1 every q steps (default from the theory).
  std::optional<Index> period;
  /// dpsgd: epochs > 0 selects multi-epoch Poisson sampling (PLD or RDP
  /// accounting, add/remove-one, so zero-out with n public); 0 or unset =
  /// single pass over disjoint batches (exact GDP, replace-one).
  /// spider-mf-adaptive: passes over the records; 0 or 1 = one pass, unset =
  /// one pass, or default_passes(n) where choose_default_sampling chose the
  /// default (below). With more, `sampling` says how.
  std::optional<double> epochs;
  /// Set by choose_default_sampling where epochs is unset: spider-mf-adaptive
  /// makes default_passes(n) Poisson passes (n the records, public), or
  /// default_epochs where it is set.
  bool default_passes = false;
  /// The passes of such a default run where a public rule other than
  /// default_passes(n) chose them: a classifier on a scaled table,
  /// classifier_passes (set by the scaled path, never by a front end).
  std::optional<double> default_epochs;
  /// spider-mf-adaptive: how its passes draw records (params.hpp, Sampling):
  /// poisson (the default when epochs > 1: cyclic Poisson sampling with the
  /// banded square-root factorization, amplified, zero-out, accounted by
  /// `accountant`; epochs may be any number > 0) or order (whole passes over
  /// the sample order, replace-one, exact GDP).
  std::optional<Sampling> sampling;
  /// spider-mf-adaptive with sampling = poisson: the bands (default: the
  /// automatic rule, docs/parameters.md).
  std::optional<Index> bands;
  /// Poisson-sampled runs (dpsgd with epochs > 0, spider-mf-adaptive with
  /// sampling = poisson): the accountant that calibrates the noise and states
  /// the guarantee (default PLD: the same target with less noise than RDP).
  std::optional<Accountant> accountant;
  /// Step size of sgd / dpsgd (default 1/M).
  std::optional<double> learning_rate;
  /// L_max of the tree phases of the SPIDER algorithms (default automatic,
  /// docs/parameters.md).
  std::optional<Index> max_phase_length;
  /// spider-mf-adaptive: the output is the mean of the iterates over the last
  /// `tail` of the records, in [0, 1) (0: the last iterate; default 0.25).
  std::optional<double> tail;
  /// spider-mf-adaptive: whether phases take O2 steps (default off: O1 steps
  /// only, which did better in every configuration measured, docs/parameters.md).
  std::optional<bool> o2;
  /// Seed of the public random streams: the single-pass sample order and the
  /// saddle perturbations (privacy holds for any fixed order, and the
  /// perturbation is post-processing). Unset = drawn from the OS; reported.
  std::optional<std::uint64_t> seed;
  /// Secret key of the privacy noise and of Poisson sampling (SPEC section 8).
  /// Unset = 128 fresh bits from the OS for this run, kept nowhere. Set it
  /// (NoiseKey::from_file) only for a reproducible run whose key you keep as
  /// secret as the data: the same (seed, noise_key) gives the same bits.
  std::optional<NoiseKey> noise_key;
  /// The single-pass order; unset = kSeed, or kFile for a streamed run (the
  /// only order it can read). Poisson dpsgd draws records by index: none.
  std::optional<SampleOrder> sample_order;
  /// Data-parallel runs (process_group.hpp): this process's group; null = one
  /// process. Every process of the group runs with the same options.
  std::shared_ptr<ProcessGroup> process_group;
  Index max_steps = 0;  ///< 0 = until the data run out
  int threads = 0;      ///< 0 = all cores; never changes results
  bool record_trajectory = false;
  /// Set by a signal handler to stop early; the summary then says interrupted.
  const std::atomic<bool>* stop_flag = nullptr;
  /// Called before every step with the record of the step just done (step 0:
  /// the start, x0); return false to stop.
  std::function<bool(const Iteration&)> on_step;

  /// Throws Error "RunOptions: FIELD = VALUE: RULE" (the field as named here)
  /// for a value out of range, a target a private algorithm lacks or a
  /// non-private one has, and an option or override the algorithm does not read.
  void Validate() const;
  /// Validate(), and the rules that need the number of records: batch_size and
  /// overrides.b at most n, Poisson dpsgd at most 1e10 steps. The CLI and
  /// Python check these before a run; minimize does not (a fixed O2 batch
  /// above n is a run of O1 steps alone, which the audit's small setups use).
  void Validate(Index records) const;
  // The values a run uses (defaults filled in).
  double alpha_scale_or_default() const { return alpha_scale.value_or(1.0); }
  bool is_private_run() const;  ///< the algorithm is private and epsilon is finite
  /// Poisson-sampled: dpsgd with epochs > 0, spider-mf-adaptive with sampling
  /// = poisson (given, or by default with epochs > 1).
  bool poisson() const;
  /// A private Poisson-sampled run with float noise under the PLD accountant:
  /// the runs that compose a prior Gaussian release (PrivacyTarget::prior_mu:
  /// the scale estimate, a shared G/M estimate) into their own PLD.
  bool composes_prior() const;
  /// The batch of dpsgd and sgd on n records: batch_size, or by default n/10
  /// clamped to [1, 256] (ten batches at least, so small data get steps).
  Index sgd_batch_size(Index n) const;
  /// Whether records are drawn in the seed's sample order, each once a pass
  /// (every run but the Poisson-sampled ones).
  bool single_pass() const { return !poisson(); }
  SampleOrder sample_order_or_default() const { return sample_order.value_or(SampleOrder::kSeed); }
};

/// The front ends' default sampling (the CLI's `dpsosp run` and Python's
/// `dpsosp.run` call it before loading the records; docs/parameters.md
/// "sampling"): a private single pass of spider-mf-adaptive with float noise,
/// its records in memory (one process or several), and none of the options that need
/// the sample order set (sampling, sample_order, accountant, o2,
/// max_phase_length, overrides.sigma or noise_multiplier; bands given keep
/// it, fixing the banded pass's bands), samples by Poisson at a replace-one
/// target: the same guarantee as the pass over the sample order, with the
/// amplification by sampling (one pass of the banded factorization,
/// docs/privacy-accounting.md section 9). A zero-out target given (Opacus's
/// relation) is kept: the same Poisson passes calibrated to it. Sets sampling
/// (and privacy->adjacency where unset) and returns true; otherwise changes
/// nothing.
/// Where epochs is unset it also sets default_passes: the run makes
/// default_passes(n) passes.
bool choose_default_sampling(RunOptions& options, bool streamed);

/// The default run's passes over n records (public): 3 up to 100,000 records,
/// then floor(300,000 / n), at least 1, so that a default run reads about
/// 300,000 records at most beyond its first pass. Measured in
/// docs/results-peers.md ("The default's passes"): on Fashion-MNIST subsets
/// (n 2000 to 60000, replace-one, eps 1 to 8) three passes beat one by 1.0 to
/// 4.1 points; five or ten lost at eps 1 and n = 2000 (the replace-one noise
/// multiplier grows with them).
Index default_passes(Index n);

/// A classifier's default passes over n records of model dimension d at the
/// target's GDP parameter mu (public): default_passes(n) where the noise ratio
/// r = sqrt(d) / (n mu) is at least 0.1; below it more, base 0.1 / r, at most
/// 30 and at most as many as take base * 1000 / T steps (T the base passes'
/// Poisson steps at the default batch), rounded, never fewer than base. Where
/// the noise is small a linear classifier's few default steps had not converged
/// (statsmodels' modechoice at the majority class even at eps 30); where the
/// steps are many already (large n) the passes stay (docs/parameters.md,
/// "A classifier's passes").
Index classifier_passes(Index n, Index d, double mu);

/// The rules a front end checks a numeric option by, and their words, so that
/// the CLI (--epsilon) and Python (epsilon=) refuse a value alike:
/// "OPTION: expected RULE, got VALUE" (check_value).
enum class ValueRule {
  kFinite,         ///< any finite number
  kPositive,       ///< finite, > 0
  kNonNegative,    ///< finite, >= 0
  kPositiveOrInf,  ///< > 0, +inf allowed
  kOpenUnit,       ///< in (0, 1)
  kHalfOpenUnit,   ///< in (0, 1]
};
/// "a finite number > 0", ...
std::string value_rule_text(ValueRule rule);
bool satisfies(double value, ValueRule rule);
/// "an integer in [MIN, MAX]" ("an integer >= MIN" when MAX is the largest
/// 64-bit value): the rule of a count option (--batch-size, batch_size=).
std::string count_rule_text(std::uint64_t min, std::uint64_t max);
/// Throws Error "OPTION: expected RULE, got SHOWN" unless value satisfies rule
/// (SHOWN: the value as the user gave it, e.g. "'-1'" on a command line).
void check_value(const std::string& option, double value, ValueRule rule, const std::string& shown);

/// The words a report gives a guarantee (the CLI's and Python's `guarantee`):
/// "(EPS, DELTA)-DP for ADJACENCY adjacency, fixed before the run"; empty for a
/// non-private record.
std::string guarantee_text(const PrivacyRecord& record);
/// What a private run's guarantee still assumes (the report's `caveats`):
/// floating-point noise (Mironov 2012), or the secure mode's exact-arithmetic
/// bound and timing; empty for a non-private record.
std::vector<std::string> privacy_caveats(const PrivacyRecord& record);

/// What a run computed from the private data that its (eps, delta) guarantee
/// does not cover (SPEC section 8): exact counts and timings. A report keeps
/// them apart from the release (`diagnostics`); publish them only where the
/// data need no protection.
struct Diagnostics {
  /// Per-example gradients (O1) and gradient differences (O2) that clipping
  /// changed, the non-finite ones included.
  Index clipped_o1 = 0, clipped_o2 = 0;
  /// The per-example gradients (O1) and differences (O2) computed, clipped or
  /// not: clipped_o1 / checked_o1 is the fraction that clipping changed.
  Index checked_o1 = 0, checked_o2 = 0;
  /// Of those, the vectors with a NaN or infinite entry (an overflow inside
  /// the model), which contributed zero.
  Index nonfinite_o1 = 0, nonfinite_o2 = 0;
  /// Per-example gradients computed (also where the release leaves the count
  /// out, as for Poisson sampling, whose batch sizes are secret).
  Index gradient_evaluations = 0;
  double seconds = 0;  ///< wall time of the optimization
  /// Of seconds, the accountant's: the run's parameter rules, the noise
  /// calibration and the stated guarantee (public quantities only).
  double accounting_seconds = 0;
  /// A scaled run (scaling.hpp): the share of the records outside each
  /// feature's box, clipped into it (empty where the features are not mapped),
  /// and the target's (-1 where it is not scaled). A large share on a skewed
  /// column says the box cut its tail: declare bounds.
  std::vector<double> outside_box;
  double target_outside_box = -1;
};

/// What a run released, what it guarantees, and apart from both its diagnostics.
/// Every field but `diagnostics` is covered by the privacy guarantee: the
/// iterates, and what is computed from them and from public quantities.
struct Summary {
  Vec x;                        ///< the last iterate
  std::vector<Vec> trajectory;  ///< every iterate, when requested
  std::string algorithm;
  std::uint64_t seed = 0;  ///< the public seed (sample order, perturbations)
  /// The single-pass order the records were used in ("seed" or "file");
  /// empty for Poisson dpsgd, which draws them by index.
  std::string sample_order;
  int processes = 1;  ///< the processes that shared each batch (ProcessGroup)
  /// Where the secret noise key came from: "generated" (fresh from the OS,
  /// kept nowhere) or "supplied" (RunOptions::noise_key). Never the key.
  std::string noise_key_source;
  /// The guarantee, fixed before the run (mechanism kNone for the references).
  PrivacyRecord privacy;
  /// The private estimate of G / M, when RunOptions::estimate asked for one;
  /// its records (the first `reserved_records` of the sample order) are not
  /// the optimizer's. The constants the run used are `constants`.
  std::optional<ConstantsEstimate> estimate;
  Index reserved_records = 0;
  ProblemConstants constants;
  // Work, all of it a function of the released iterates and public sizes.
  Index samples_used = 0, steps = 0, o1_calls = 0, perturbations = 0;
  /// Per-example gradients computed; unset where the count is not public
  /// (Poisson sampling: Diagnostics::gradient_evaluations has it).
  std::optional<Index> gradient_evaluations;
  std::vector<std::uint64_t> phase_lengths;
  std::map<std::string, double> params;  ///< the parameters the run used, by name (the report's table)
  Termination termination = Termination::kMaxSteps;
  bool interrupted() const { return termination == Termination::kInterrupted; }
  /// What a user should know about the run (too few steps, most records
  /// unused), one line each; computed from the fields above and n alone, so
  /// covered by the guarantee like them.
  std::vector<std::string> warnings;
  Diagnostics diagnostics;  ///< not covered by the guarantee
};

/// Runs the chosen algorithm from x0 on the records of `data`. Throws Error
/// when the run could not take one step (too few records for its first batch).
Summary minimize(const Model& model, const Dataset& data, const Vec& x0, const RunOptions& options);
/// A streamed run: the records of a record file (record_file.hpp) read once,
/// front to back, in the file's order (SampleOrder::kFile), with read-ahead
/// on a second thread; a few batches in memory at a time. The same bits as
/// minimize on load_record_file(path) with sample_order = kFile. Every record
/// is checked as it is first read, and those the run did not read after it:
/// a file with a NaN, an infinity or a record the model refuses throws Error
/// naming a bad record and returns no summary, as a loaded run refuses it
/// before it starts (a run of several processes checks every record in a
/// pass before it starts). Single-pass algorithms only.
Summary minimize(const Model& model, const RecordFile& records, const Vec& x0, const RunOptions& options);

}  // namespace dpsosp
