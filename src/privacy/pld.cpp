// PrivacyLossDistribution: the two directions of an add/remove PLD (or the
// one of a symmetric PLD) composed together; the reported delta and eps are
// those of the worse direction, as dp_accounting's PrivacyLossDistribution.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/pld.hpp"
#include "privacy/pld_pmf.hpp"

namespace dpsosp::privacy {
namespace {

[[noreturn]] void refuse(const char* field, double value, const char* rule) {
  std::ostringstream os;
  os.precision(17);
  os << "PldOptions: " << field << " = " << value << ": " << rule;
  throw Error(os.str());
}

}  // namespace

void PldOptions::Validate() const {
  if (!(discretization > 0) || !std::isfinite(discretization))
    refuse("discretization", discretization, "must be finite and > 0");
  if (!(log_mass_truncation < 0) || !std::isfinite(log_mass_truncation))
    refuse("log_mass_truncation", log_mass_truncation, "must be finite and < 0");
  if (!(tail_mass_truncation >= 0 && tail_mass_truncation < 1e-3))
    refuse("tail_mass_truncation", tail_mass_truncation, "must be in [0, 1e-3)");
  if (max_bins < 2) refuse("max_bins", static_cast<double>(max_bins), "must be at least 2");
  if (!(calibration_tolerance > 0 && calibration_tolerance <= 0.01))
    refuse("calibration_tolerance", calibration_tolerance, "must be in (0, 0.01]");
}

PrivacyLossDistribution::PrivacyLossDistribution(const PldOptions& options,
                                                 std::shared_ptr<const detail::PldPmf> remove,
                                                 std::shared_ptr<const detail::PldPmf> add)
    : options_(options), remove_(std::move(remove)), add_(std::move(add)) {
  if (!remove_) throw Error("PrivacyLossDistribution: needs a distribution (internal)");
}

PrivacyLossDistribution PrivacyLossDistribution::identity(const PldOptions& options) {
  options.Validate();
  auto p = std::make_shared<detail::PldPmf>();
  p->interval = options.discretization;
  p->pessimistic = options.pessimistic;
  p->probs = {1.0};
  return PrivacyLossDistribution(options, std::move(p), nullptr);
}

PrivacyLossDistribution PrivacyLossDistribution::compose(const PrivacyLossDistribution& other) const {
  if (options_.discretization != other.options_.discretization || options_.pessimistic != other.options_.pessimistic) {
    std::ostringstream os;
    os.precision(17);
    os << "PrivacyLossDistribution::compose: both need the same discretization and rounding, got "
       << options_.discretization << (options_.pessimistic ? " pessimistic" : " optimistic") << " and "
       << other.options_.discretization << (other.options_.pessimistic ? " pessimistic" : " optimistic");
    throw Error(os.str());
  }
  const double tail = options_.tail_mass_truncation;
  const std::size_t max_bins = options_.max_bins;
  auto remove = std::make_shared<detail::PldPmf>(detail::compose(*remove_, *other.remove_, tail, max_bins));
  if (symmetric() && other.symmetric()) return PrivacyLossDistribution(options_, std::move(remove), nullptr);
  const detail::PldPmf& a = add_ ? *add_ : *remove_;
  const detail::PldPmf& b = other.add_ ? *other.add_ : *other.remove_;
  return PrivacyLossDistribution(options_, std::move(remove),
                                 std::make_shared<detail::PldPmf>(detail::compose(a, b, tail, max_bins)));
}

PrivacyLossDistribution PrivacyLossDistribution::self_compose(std::uint64_t times) const {
  if (times < 1) throw Error("PrivacyLossDistribution::self_compose: times must be >= 1, got 0");
  const double tail = options_.tail_mass_truncation;
  const std::size_t max_bins = options_.max_bins;
  auto remove = std::make_shared<detail::PldPmf>(detail::self_compose(*remove_, times, tail, max_bins));
  if (symmetric()) return PrivacyLossDistribution(options_, std::move(remove), nullptr);
  return PrivacyLossDistribution(options_, std::move(remove),
                                 std::make_shared<detail::PldPmf>(detail::self_compose(*add_, times, tail, max_bins)));
}

double PrivacyLossDistribution::delta(double epsilon) const {
  if (!(epsilon >= 0)) {
    std::ostringstream os;
    os.precision(17);
    os << "PrivacyLossDistribution::delta: epsilon must be >= 0, got " << epsilon;
    throw Error(os.str());
  }
  const double d = detail::delta_for_epsilon(*remove_, epsilon);
  return add_ ? std::max(d, detail::delta_for_epsilon(*add_, epsilon)) : d;
}

double PrivacyLossDistribution::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) {
    std::ostringstream os;
    os.precision(17);
    os << "PrivacyLossDistribution::epsilon: delta must be in (0, 1), got " << delta;
    throw Error(os.str());
  }
  const double e = detail::epsilon_for_delta(*remove_, delta);
  return add_ ? std::max(e, detail::epsilon_for_delta(*add_, delta)) : e;
}

bool PrivacyLossDistribution::dominates(const PrivacyLossDistribution& other) const {
  if (!symmetric() || !other.symmetric())
    throw Error("PrivacyLossDistribution::dominates: compares symmetric distributions (replace-one) only");
  if (options_.discretization != other.options_.discretization || options_.pessimistic != other.options_.pessimistic)
    throw Error("PrivacyLossDistribution::dominates: both need the same discretization and rounding");
  return detail::profile_dominates(*remove_, *other.remove_);
}

std::size_t PrivacyLossDistribution::bins() const {
  return std::max(remove_->probs.size(), add_ ? add_->probs.size() : 0);
}

double PrivacyLossDistribution::infinity_mass() const {
  return std::max(remove_->infinity_mass, add_ ? add_->infinity_mass : 0.0);
}

}  // namespace dpsosp::privacy
