// A model whose per-example gradients come from the caller (caller_model.hpp):
// the library's clipped sums, noise and accounting over the caller's gradients.
#include "dpsosp/caller_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "dpsosp/error.hpp"
#include "engine/clip_rule.hpp"
#include "engine/row_workers.hpp"

namespace dpsosp {
namespace {

// Rows per call of the caller's callback in the clipped sums: at least 256
// (a callback has a fixed cost: a Python call, a vmap), a multiple of the
// engine's block rows, so each row keeps the alignment offset it has in the
// whole batch and the sums are Model's reference form, bit for bit.
Index caller_block_rows(Index d) {
  const Index unit = detail::block_rows(d);
  return unit * ((255 + unit) / unit);
}

// Model's reference form of a clipped sum (model.cpp) over larger blocks:
// block_of(part, block) fills the block's rows, each then clipped and added in order.
template <class BlockOf>
ClippedSum caller_blocks(Index d, const IndexList& idx, double clip, BlockOf block_of) {
  ClippedSum result;
  result.sum = Vec::Zero(static_cast<Eigen::Index>(d));
  const Index rows = caller_block_rows(d);
  RowMatrix block;
  IndexList part;
  for (Index k0 = 0; k0 < static_cast<Index>(idx.size()); k0 += rows) {
    const auto end = idx.begin() + static_cast<std::ptrdiff_t>(std::min<Index>(idx.size(), k0 + rows));
    part.assign(idx.begin() + static_cast<std::ptrdiff_t>(k0), end);
    block_of(part, block);
    for (Eigen::Index r = 0; r < block.rows(); ++r) {
      auto row = block.row(r).transpose();
      if (clip < std::numeric_limits<double>::infinity())
        detail::count_clip(result, detail::clip_given_norm(row, row.norm(), clip));
      result.sum += row;
    }
  }
  return result;
}

class CallerModel final : public Model {
 public:
  explicit CallerModel(CallerGradients g) : g_(std::move(g)) {}
  std::string name() const override { return g_.name; }
  Index dim() const override { return g_.dim; }
  Index features() const override { return 1; }

  void validate(const Dataset& data) const override {
    if (data.cols() != 1 || data.is_sparse())
      throw Error(g_.name + ": its records are their ids (caller_records), one dense column");
    for (Index i = 0; i < data.rows(); ++i) {
      const double id = data.dense_row(i)[0];
      if (!(id >= 0) || id != std::floor(id) || id > 9e15)
        throw Error(g_.name + ": record " + std::to_string(i) + " is not an id (a whole number >= 0)");
    }
  }

  double loss(const Vec& x, const Dataset& data, Index i) const override {
    if (!g_.losses) return std::numeric_limits<double>::quiet_NaN();
    Vec out;
    std::lock_guard<std::mutex> lock(mutex_);
    g_.losses(x, {id(data, i)}, out);
    check_rows(out.size(), 1, "losses");
    return out[0];
  }

  void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    RowMatrix rows;
    batch_gradients(x, data, {i}, rows);
    out = rows.row(0).transpose();
  }

  void batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx, RowMatrix& out) const override {
    std::vector<std::int64_t> ids(idx.size());
    for (std::size_t k = 0; k < idx.size(); ++k) ids[k] = id(data, idx[k]);
    std::lock_guard<std::mutex> lock(mutex_);
    g_.gradients(x, ids, out);
    check_rows(out.rows(), static_cast<Index>(ids.size()), "gradients");
    if (out.cols() != g_.dim)
      throw Error(g_.name + ": the gradients callback gave rows of " + std::to_string(out.cols()) + " entries for " +
                  std::to_string(g_.dim) + " parameters");
  }

  ClippedSum clipped_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip) const override {
    return caller_blocks(g_.dim, idx, clip,
                         [&](const IndexList& part, RowMatrix& block) { batch_gradients(x, data, part, block); });
  }
  ClippedSum clipped_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                    double clip) const override {
    RowMatrix at_prev;
    return caller_blocks(g_.dim, idx, clip, [&](const IndexList& part, RowMatrix& block) {
      batch_gradients(x, data, part, block);
      batch_gradients(x_prev, data, part, at_prev);
      block -= at_prev;
    });
  }
  ClippedSum clipped_consistent_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                               const IndexList& idx, double inner_clip, double clip) const override {
    RowMatrix at_prev;
    return caller_blocks(g_.dim, idx, clip, [&](const IndexList& part, RowMatrix& block) {
      batch_gradients(x, data, part, block);
      batch_gradients(x_prev, data, part, at_prev);
      for (Eigen::Index r = 0; r < block.rows(); ++r) {
        auto g = block.row(r).transpose();
        auto g_prev = at_prev.row(r).transpose();
        clip_to_norm(g, inner_clip);
        clip_to_norm(g_prev, inner_clip);
        g -= g_prev;
      }
    });
  }

  void hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const override {
    if (g_.hvp) {
      Vec r;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        g_.hvp(x, id(data, i), v, r);
      }
      check_rows(r.size(), g_.dim, "hvp");
      out = r;
      return;
    }
    const double norm = v.norm();
    if (norm == 0) {
      out.setZero();
      return;
    }
    const double h = 1e-4 * std::max(1.0, x.norm()) / norm;
    Vec plus(g_.dim), minus(g_.dim);
    gradient(x + h * v, data, i, plus);
    gradient(x - h * v, data, i, minus);
    out = (plus - minus) / (2 * h);
  }

 private:
  static std::int64_t id(const Dataset& data, Index i) { return static_cast<std::int64_t>(data.dense_row(i)[0]); }
  void check_rows(Index got, Index expected, const char* what) const {
    if (got != expected)
      throw Error(g_.name + ": the " + what + " callback gave " + std::to_string(got) + " values for " +
                  std::to_string(expected));
  }

  CallerGradients g_;
  mutable std::mutex mutex_;  // one call at a time, whichever thread asks
};

}  // namespace

std::unique_ptr<Model> make_caller_model(CallerGradients gradients) {
  if (gradients.dim < 1) throw Error(gradients.name + ": dim must be at least 1");
  if (!gradients.gradients) throw Error(gradients.name + ": needs a gradients callback");
  return std::make_unique<CallerModel>(std::move(gradients));
}

Dataset caller_records(Index n) {
  if (n < 1) throw Error("caller_records: n must be at least 1");
  RowMatrix ids(n, 1);
  for (Index i = 0; i < n; ++i) ids(i, 0) = static_cast<double>(i);
  return Dataset(std::move(ids), Vec());
}

}  // namespace dpsosp
