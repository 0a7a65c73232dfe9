// dpsosp: synthetic problems, some with a known population objective.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "dpsosp/data.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// The population objective F(x) = E_z f(x; z) in closed form.
class Population {
 public:
  virtual ~Population() = default;
  virtual Index dim() const = 0;
  virtual double value(const Vec& x) const = 0;
  virtual Vec gradient(const Vec& x) const = 0;
  virtual Vec hvp(const Vec& x, const Vec& v) const = 0;
  /// Dense Hessian (d x d); fine for the small d of known-population problems.
  virtual Eigen::MatrixXd hessian(const Vec& x) const;
};

/// A generated dataset, the model it is meant for, and (when known) its population.
struct SyntheticProblem {
  std::string name;   ///< phase-retrieval, pca, gaussian-mixture
  std::string model;  ///< the model the data are for
  Dataset data;
  std::shared_ptr<const Population> population;  ///< null when not known in closed form
  Vec x_star;                                    ///< a population minimiser, when known
  Vec saddle;                                    ///< a strict saddle of F, when known
  std::map<std::string, double> params;          ///< every key with its value (defaults filled in)
};

/// "NAME:key=value,..." with NAME in phase-retrieval, pca, gaussian-mixture.
/// Common keys n, d, seed; phase-retrieval: noise (std of additive label noise, 0);
/// pca: rank (r of the model, 1), spectrum as top=..,gap=.. (see synthetic.cpp);
/// gaussian-mixture: mu (mean separation, 1).
/// Throws Error naming the bad key or value.
/// With sample_order_seed, the records are generated straight into that
/// seed's sample order: the same records, placed as
/// Dataset::store_in_sample_order(seed) would place them, at no extra cost,
/// for single-pass runs with that seed. Only speed depends on it; more than
/// 2^32 - 1 records stay in record order.
SyntheticProblem make_synthetic(const std::string& spec, std::optional<std::uint64_t> sample_order_seed = std::nullopt);

/// Known populations, usable directly.
/// Phase retrieval with a ~ N(0, I_d), y = (a.x*)^2 (+ noise).
std::shared_ptr<const Population> phase_retrieval_population(const Vec& x_star, double noise_std = 0.0);
/// PCA / matrix factorisation f(U; z) = ||U U^T - z z^T||_F^2 / 4, z ~ N(0, diag(spectrum)).
std::shared_ptr<const Population> pca_population(const Vec& spectrum, Index rank);

}  // namespace dpsosp
