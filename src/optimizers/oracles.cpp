// The clipped gradient oracles (paper Algorithm 3, SPEC section 2.2).
//
// Each output is the mean of clipped per-example vectors. The model's fused
// kernel (Model::clipped_gradient_sum / clipped_difference_sum) computes the
// clipped sum: every per-example vector clipped by clip_to_norm, then added in
// record order, with bits that do not depend on the thread count
// (src/engine/clipped_sum.hpp). Here the sum is divided by the batch size.
#include "dpsosp/oracles.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "data/dataset_layout.hpp"
#include "data/record_stream.hpp"
#include "dpsosp/error.hpp"
#include "engine/clip_rule.hpp"
#include "optimizers/process_group.hpp"

namespace dpsosp {

namespace {

OracleOutput mean_of(ClippedSum s, Index rows) {
  OracleOutput out;
  out.batch = rows;
  out.clipped = s.clipped;
  out.nonfinite = s.nonfinite;
  out.value = std::move(s.sum);
  if (rows > 0) out.value /= static_cast<double>(rows);
  return out;
}

void check_dim(const Model& model, const Vec& x, const char* who) {
  if (static_cast<Index>(x.size()) != model.dim()) {
    throw Error(std::string(who) + ": point has " + std::to_string(x.size()) + " entries, the model has dimension " +
                std::to_string(model.dim()));
  }
}

}  // namespace

GradientOracles::GradientOracles(const Model& model, const Dataset& data, SamplePool& pool)
    : model_(model), data_(data), pool_(pool), plan_(detail::DatasetLayout::plan(data)) {
  if (pool.size() != data.rows()) {
    throw Error("GradientOracles: the sample pool has " + std::to_string(pool.size()) + " records, the dataset " +
                std::to_string(data.rows()));
  }
  if (plan_ != nullptr && plan_->stream && !detail::DatasetLayout::reads_order_of(pool, data))
    throw Error("GradientOracles: streamed records are read in the file's order, the pool has another");
  if (detail::DatasetLayout::reads_order_of(pool, data)) stored_ = detail::DatasetLayout::stored_rows(data);
}

ClippedSum GradientOracles::sum_batch(Index b, const IndexList* given, const BatchSum& sum) {
  const detail::BatchPlan* plan = plan_;
  const bool shared = plan != nullptr && plan->group != nullptr;
  const BatchShare share = shared ? batch_share(b, plan->group->rank(), plan->group->size()) : BatchShare{0, b};
  const Dataset* from = &data_;
  IndexList rows;
  std::optional<Dataset> streamed;
  if (given != nullptr && !shared) {  // o1_on: records by index
    return sum(data_, *given, nullptr);
  } else if (given != nullptr) {
    rows.assign(given->begin() + static_cast<std::ptrdiff_t>(share.first),
                given->begin() + static_cast<std::ptrdiff_t>(share.end));
  } else if (plan != nullptr && plan->stream) {
    // The next b records of the file, of which this process reads its share
    // (in place where the stream holds them, data/record_stream.hpp).
    const Index first = detail::DatasetLayout::advance(pool_, b);
    detail::RecordStream& stream = *plan->stream;
    // The stream keeps to the pool: back to the file's start for a new pass
    // (a run of several epochs starts its pool again), and past records the
    // pool handed out elsewhere (the estimate's, clip_estimate.hpp).
    if (stream.position() > first) stream.rewind();
    if (stream.position() < first) stream.skip(first - stream.position());
    stream.skip(share.first);
    detail::RecordStream::Rows got = stream.next(share.size());
    stream.skip(b - share.end);
    streamed = std::move(got.data);
    rows = std::move(got.rows);
    from = &*streamed;
    if (plan->check_rows) plan->check_rows(*streamed, rows, first + share.first);
  } else if (stored_) {
    // Stored row k holds the pool's k-th record: the batch is the next b rows.
    const Index first = detail::DatasetLayout::advance(pool_, b);
    rows.resize(share.size());
    std::iota(rows.begin(), rows.end(), first + share.first);
    from = &*stored_;
  } else if (!shared) {
    rows = pool_.draw(b);
  } else {
    const IndexList all = pool_.draw(b);
    rows.assign(all.begin() + static_cast<std::ptrdiff_t>(share.first),
                all.begin() + static_cast<std::ptrdiff_t>(share.end));
  }
  if (!shared) return sum(*from, rows, nullptr);
  return detail::chain_batch(*plan, b, model_.dim(), [&](const SumStart& start) { return sum(*from, rows, &start); });
}

OracleOutput GradientOracles::o1_on(const Vec& x, const IndexList& records, double clip) {
  check_dim(model_, x, "GradientOracles::o1");
  if (records.empty()) throw Error("GradientOracles::o1: batch size must be at least 1, got 0");
  ClippedSum sum =
      sum_batch(records.size(), &records, [&](const Dataset& from, const IndexList& rows, const SumStart* start) {
        return start ? model_.chained_gradient_sum(x, from, rows, clip, *start)
                     : model_.clipped_gradient_sum(x, from, rows, clip);
      });
  gradient_evaluations_ += records.size();
  return mean_of(std::move(sum), records.size());
}

OracleOutput GradientOracles::o1(const Vec& x, Index b, double clip) {
  if (b == 0) throw Error("GradientOracles::o1: batch size must be at least 1, got 0");
  check_dim(model_, x, "GradientOracles::o1");
  ClippedSum sum = sum_batch(b, nullptr, [&](const Dataset& from, const IndexList& rows, const SumStart* start) {
    return start ? model_.chained_gradient_sum(x, from, rows, clip, *start)
                 : model_.clipped_gradient_sum(x, from, rows, clip);
  });
  gradient_evaluations_ += b;
  return mean_of(std::move(sum), b);
}

OracleOutput GradientOracles::o2(const Vec& x, const Vec& x_prev, Index b, double clip) {
  check_dim(model_, x, "GradientOracles::o2");
  check_dim(model_, x_prev, "GradientOracles::o2");
  if (b == 0) throw Error("GradientOracles::o2: batch size must be at least 1, got 0");
  ClippedSum sum = sum_batch(b, nullptr, [&](const Dataset& from, const IndexList& rows, const SumStart* start) {
    return start ? model_.chained_difference_sum(x, x_prev, from, rows, clip, *start)
                 : model_.clipped_difference_sum(x, x_prev, from, rows, clip);
  });
  gradient_evaluations_ += 2 * b;
  return mean_of(std::move(sum), b);
}

OracleOutput GradientOracles::o2_consistent(const Vec& x, const Vec& x_prev, Index b, double inner_clip, double clip) {
  check_dim(model_, x, "GradientOracles::o2_consistent");
  check_dim(model_, x_prev, "GradientOracles::o2_consistent");
  if (b == 0) throw Error("GradientOracles::o2_consistent: batch size must be at least 1, got 0");
  ClippedSum sum = sum_batch(b, nullptr, [&](const Dataset& from, const IndexList& rows, const SumStart* start) {
    return start ? model_.chained_consistent_difference_sum(x, x_prev, from, rows, inner_clip, clip, *start)
                 : model_.clipped_consistent_difference_sum(x, x_prev, from, rows, inner_clip, clip);
  });
  gradient_evaluations_ += 2 * b;
  return mean_of(std::move(sum), b);
}

}  // namespace dpsosp
