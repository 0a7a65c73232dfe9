// The BLT factorizations of the prefix-sum workload (include/dpsosp/factorization.hpp,
// docs/matrix-factorization.md).
#include "dpsosp/factorization.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

constexpr double kPi = 3.14159265358979323846;

void check_count(Index count, const char* who) {
  if (count == 0) throw Error(std::string("BltFactorization::") + who + ": count must be at least 1, got 0");
}

}  // namespace

BltFactorization BltFactorization::square_root(Index horizon) {
  if (horizon == 0) throw Error("BltFactorization::square_root: the horizon must be at least 1 step, got 0");
  // c_k = E[cos^(2k) psi] for psi uniform on [0, pi/2]; the moments of order k
  // come from psi of order 1/sqrt(k), so the rule runs in log(psi) down to a
  // twentieth of the smallest scale the horizon needs. The part of [0, psi_min)
  // left out weighs (2/pi) psi_min, below 0.032 / sqrt(horizon), and only
  // shifts the coefficients the exact accounting below measures anyway.
  const int nodes = horizon <= 64 ? 8 : horizon <= 10000 ? 12 : 16;
  const double psi_min = 0.05 / std::sqrt(static_cast<double>(horizon));
  const double lo = std::log(psi_min), hi = std::log(kPi / 2);
  // Gauss-Legendre nodes and weights on [-1, 1] (Golub-Welsch: the eigenvalues
  // of the Jacobi matrix, the weights from the first components).
  Eigen::MatrixXd jacobi = Eigen::MatrixXd::Zero(nodes, nodes);
  for (int i = 1; i < nodes; ++i) {
    const double b = i / std::sqrt(4.0 * i * i - 1.0);
    jacobi(i, i - 1) = jacobi(i - 1, i) = b;
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(jacobi);
  BltFactorization f;
  for (int i = 0; i < nodes; ++i) {
    const double x = eig.eigenvalues()[i];
    const double w = 2.0 * eig.eigenvectors()(0, i) * eig.eigenvectors()(0, i);
    const double v = 0.5 * (hi - lo) * x + 0.5 * (hi + lo);
    const double psi = std::exp(v);
    const double omega = (2.0 / kPi) * 0.5 * (hi - lo) * w * psi;  // dpsi = psi dv
    const double c = std::cos(psi);
    const double theta = c * c;
    // C^{-1} = (1 - x) B's series: r_k = c_k - c_{k-1} = -E[theta^(k-1) (1 - theta)].
    f.theta.push_back(theta);
    f.weight.push_back(-omega * (1.0 - theta));
  }
  f.Validate();
  return f;
}

void BltFactorization::Validate() const {
  if (theta.empty() || theta.size() != weight.size()) {
    std::ostringstream os;
    os << "BltFactorization: theta and weight must have the same size >= 1, got " << theta.size() << " and "
       << weight.size();
    throw Error(os.str());
  }
  for (std::size_t j = 0; j < theta.size(); ++j) {
    if (!(theta[j] > 0 && theta[j] < 1)) {
      std::ostringstream os;
      os.precision(17);
      os << "BltFactorization: theta[" << j << "] must lie in (0, 1), got " << theta[j];
      throw Error(os.str());
    }
    if (!std::isfinite(weight[j])) throw Error("BltFactorization: weight[" + std::to_string(j) + "] is not finite");
  }
}

std::vector<double> BltFactorization::inverse_coefficients(Index count) const {
  check_count(count, "inverse_coefficients");
  std::vector<double> r(count, 0.0);
  r[0] = 1.0;
  std::vector<double> power(theta.size(), 1.0);  // theta_j^(k-1)
  for (Index k = 1; k < count; ++k) {
    double sum = 0;
    for (std::size_t j = 0; j < theta.size(); ++j) {
      sum += weight[j] * power[j];
      power[j] *= theta[j];
    }
    r[k] = sum;
  }
  return r;
}

std::vector<double> BltFactorization::c_coefficients(Index count) const {
  check_count(count, "c_coefficients");
  BltInverseFilter filter(*this, 1);
  std::vector<double> c(count);
  Vec u = Vec::Zero(1);
  for (Index k = 0; k < count; ++k) {
    u[0] = k == 0 ? 1.0 : 0.0;
    c[k] = filter.next(u)[0];
  }
  return c;
}

std::vector<double> BltFactorization::b_coefficients(Index count) const {
  std::vector<double> b = inverse_coefficients(count);
  for (Index k = 1; k < count; ++k) b[k] += b[k - 1];
  return b;
}

double BltFactorization::max_column_norm(Index horizon) const {
  if (horizon == 0) throw Error("BltFactorization::max_column_norm: the horizon must be at least 1 step, got 0");
  BltInverseFilter filter(*this, 1);
  Vec u = Vec::Zero(1);
  double sum = 0;
  for (Index k = 0; k < horizon; ++k) {
    u[0] = k == 0 ? 1.0 : 0.0;
    const double c = filter.next(u)[0];
    sum += c * c;
  }
  return std::sqrt(sum);
}

double BltFactorization::cyclic_participation_norm(Index horizon, Index period) const {
  if (horizon == 0)
    throw Error("BltFactorization::cyclic_participation_norm: the horizon must be at least 1 step, got 0");
  if (period == 0)
    throw Error("BltFactorization::cyclic_participation_norm: the period must be at least 1 step, got 0");
  // sum_e C[j, e period] = sum_e c_{j - e period} = c_j + (the same at j - period).
  std::vector<double> sum = c_coefficients(horizon);
  for (Index j = period; j < horizon; ++j) sum[j] += sum[j - period];
  // Pattern i's sum is this one moved down i rows and cut at the horizon: its
  // squared norm is the sum of the first horizon - i squares, largest at i = 0.
  double squares = 0;
  for (double v : sum) squares += v * v;
  return std::sqrt(squares);
}

std::vector<double> BltFactorization::release_variances(Index count) const {
  std::vector<double> v = b_coefficients(count);
  double sum = 0;
  for (double& x : v) {
    sum += x * x;
    x = sum;
  }
  return v;
}

BltNoiseFilter::BltNoiseFilter(const BltFactorization& f, Index dim) : f_(f) {
  f_.Validate();
  const auto d = static_cast<Eigen::Index>(dim);
  buffers_.assign(f_.buffers(), Vec::Zero(d));
  prefix_ = Vec::Zero(d);
  y_ = Vec::Zero(d);
}

const Vec& BltNoiseFilter::next(const Vec& z) {
  // y_t = z_t + sum_j weight_j s_j, s_j = sum_{k >= 1} theta_j^(k-1) z_{t-k}; then s_j <- theta_j s_j + z_t.
  y_ = z;
  for (std::size_t j = 0; j < buffers_.size(); ++j) {
    y_ += f_.weight[j] * buffers_[j];
    buffers_[j] = f_.theta[j] * buffers_[j] + z;
  }
  prefix_ += y_;
  return prefix_;
}

void BltNoiseFilter::reset() {
  for (Vec& b : buffers_) b.setZero();
  prefix_.setZero();
}

BltInverseFilter::BltInverseFilter(const BltFactorization& f, Index dim) : f_(f) {
  f_.Validate();
  const auto d = static_cast<Eigen::Index>(dim);
  buffers_.assign(f_.buffers(), Vec::Zero(d));
  out_ = Vec::Zero(d);
}

const Vec& BltInverseFilter::next(const Vec& u) {
  // (C u)_t = u_t - sum_j weight_j s_j, s_j over the past outputs; then s_j <- theta_j s_j + (C u)_t.
  out_ = u;
  for (std::size_t j = 0; j < buffers_.size(); ++j) out_ -= f_.weight[j] * buffers_[j];
  for (std::size_t j = 0; j < buffers_.size(); ++j) buffers_[j] = f_.theta[j] * buffers_[j] + out_;
  return out_;
}

void BltInverseFilter::reset() {
  for (Vec& b : buffers_) b.setZero();
}

}  // namespace dpsosp
