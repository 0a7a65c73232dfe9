// Clipped per-example gradients per second, per model, batch size and thread
// count: the fused engine (Model::clipped_gradient_sum / clipped_difference_sum)
// against the reference form it replaced in the oracles (a b x d matrix from
// batch_gradients, each row clipped, rows added in order). Both give the same
// bits; only the time differs. Items = per-example gradients (an O2 row is two).
#include <benchmark/benchmark.h>
#include <omp.h>

#include "bench_data.hpp"
#include "engine/work_sharing.hpp"

namespace dpsosp::bench {
namespace {

// The pre-fusion oracle, kept here as the baseline.
ClippedSum reference_sum(const BenchProblem& p, const IndexList& idx, bool difference) {
  static RowMatrix a, b;  // reused across calls, as the oracle's members were
  p.model->batch_gradients(p.x, p.data, idx, a);
  if (difference) {
    p.model->batch_gradients(p.x_prev, p.data, idx, b);
    a -= b;
  }
  ClippedSum out;
  out.sum = Vec::Zero(a.cols());
  const double c = difference ? 0.05 : p.clip;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    if (clip_to_norm(a.row(i).transpose(), c)) ++out.clipped;
  for (Eigen::Index i = 0; i < a.rows(); ++i) out.sum += a.row(i).transpose();
  return out;
}

// kFused reads each batch's records in a random order, as a run does over
// records in their own order; kFusedStored reads consecutive stored rows, as
// a run does over records stored in its sample order (Dataset::stored_rows).
enum class Form { kFused, kFusedStored, kReference };

void BM_Clipped(benchmark::State& state, const char* name, bool difference, Form form) {
  const BenchProblem& p = bench_problem(name);
  const auto b = static_cast<Index>(state.range(0));
  // threads: 1, or 2 with sharing forced, or -2 for up to 2 with the adaptive
  // choice (what a run does).
  const int threads = static_cast<int>(state.range(1));
  const int previous = omp_get_max_threads();
  omp_set_num_threads(threads < 0 ? -threads : threads);
  detail::ThreadChoice::force(threads < 0 ? 0 : (threads == 1 ? 1 : 2));
  Index cursor = 0;
  // O2 clip: M ||x - x_prev|| scale; a fair share clipped.
  const double clip = difference ? 0.05 : p.clip;
  for (auto _ : state) {
    const IndexList idx = form == Form::kFusedStored ? next_stored_batch(p, cursor, b) : next_batch(p, cursor, b);
    ClippedSum s;
    if (form == Form::kReference) {
      s = reference_sum(p, idx, difference);
    } else if (difference) {
      s = p.model->clipped_difference_sum(p.x, p.x_prev, p.data, idx, clip);
    } else {
      s = p.model->clipped_gradient_sum(p.x, p.data, idx, clip);
    }
    benchmark::DoNotOptimize(s.sum.data());
  }
  omp_set_num_threads(previous);
  detail::ThreadChoice::force(0);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b * (difference ? 2 : 1)));
  state.counters["d"] = static_cast<double>(p.model->dim());
}

void batches(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "threads"})->ArgsProduct({{64, 256, 1024, 16384}, {1, 2, -2}})->UseRealTime();
}
void batches_one_thread(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "threads"})->ArgsProduct({{64, 256, 1024}, {1}})->UseRealTime();
}

BENCHMARK_CAPTURE(BM_Clipped, logistic_o1, "logistic", false, Form::kFused)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, logistic_o1_stored_order, "logistic", false, Form::kFusedStored)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, logistic_o1_reference, "logistic", false, Form::kReference)->Apply(batches_one_thread);
BENCHMARK_CAPTURE(BM_Clipped, logistic_o2, "logistic", true, Form::kFused)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, logistic_o2_stored_order, "logistic", true, Form::kFusedStored)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, logistic_o2_reference, "logistic", true, Form::kReference)->Apply(batches_one_thread);
BENCHMARK_CAPTURE(BM_Clipped, phase_retrieval_o1, "phase-retrieval", false, Form::kFused)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, phase_retrieval_o1_reference, "phase-retrieval", false, Form::kReference)
    ->Apply(batches_one_thread);
BENCHMARK_CAPTURE(BM_Clipped, softmax_o1, "softmax", false, Form::kFused)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, softmax_o1_reference, "softmax", false, Form::kReference)->Apply(batches_one_thread);
BENCHMARK_CAPTURE(BM_Clipped, softmax_o2, "softmax", true, Form::kFused)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, softmax_o2_reference, "softmax", true, Form::kReference)->Apply(batches_one_thread);
BENCHMARK_CAPTURE(BM_Clipped, mlp_o1, "mlp", false, Form::kFused)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, mlp_o1_reference, "mlp", false, Form::kReference)->Apply(batches_one_thread);
BENCHMARK_CAPTURE(BM_Clipped, pca_o1, "pca", false, Form::kFused)->Apply(batches);
BENCHMARK_CAPTURE(BM_Clipped, pca_o1_reference, "pca", false, Form::kReference)->Apply(batches_one_thread);

// The finiteness check of a loaded data set (check_finite, before any noise):
// all_finite (types.hpp) against Eigen's allFinite, on a Fashion-MNIST-sized
// matrix (60000 x 785 doubles). Items = values checked.
void BM_AllFinite(benchmark::State& state, bool eigen) {
  static const RowMatrix m = RowMatrix::Random(60000, 785);
  for (auto _ : state) {
    const bool ok = eigen ? m.allFinite() : all_finite(m);
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(m.size()));
}
BENCHMARK_CAPTURE(BM_AllFinite, all_finite, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_AllFinite, eigen_allFinite, true)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dpsosp::bench
