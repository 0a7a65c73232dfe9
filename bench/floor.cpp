// dpsosp_floor: the memory-stream floor of a single-pass method on a dataset.
//
//   dpsosp_floor --synthetic SPEC [--repeats R] [--threads T] [--dpsgd-batch B] [--spider S]
//                [--noise-key-file F]
//
// Builds the same records as `dpsosp run --synthetic SPEC --seed 1` (stored in
// seed 1's sample order, as that command stores them) and times one pass
// of X v over them (every record read once, in storage order): Eigen's GEMV on
// one thread, and a row-blocked pass on T threads (OpenMP). The floor is the
// faster of the two, best of R repeats. With --dpsgd-batch B it then runs the
// library's single-pass DP-SGD (logistic model, batch B) on the same records
// and reports the process's peak resident memory against the data's size: the
// library's own memory, without the CLI. Prints JSON.
//
// It also times the same pass with the records visited in a random order (a
// SamplePool permutation, T threads, each prefetching the records a few rows
// ahead as the optimizers do): the floor of any method that must read its
// records in a random order, as a single-pass private optimizer does. And a
// pass in the same order that only reads one double from every cache line of
// each record, prefetching 32 records ahead (adding up what it reads, no
// other arithmetic): what the memory system alone gives in that order. On the development
// machine the two differ by far more than the dot product's arithmetic
// (docs/performance.md, "Where the time goes").
//
// With --spider S it then runs spider-tree-adaptive S times on the same
// records, in this process, with what `dpsosp run` does by default (logistic
// model, epsilon 1, delta 1e-6, seed 1, T threads), and reports each run's
// seconds and work: the optimizer measured as the floor is, best of S runs
// over records the process has already read, without the one-time costs of a
// fresh process that `dpsosp run` pays inside its timer. Then S runs more on
// the same records generated again in their own order (as `dpsosp run` keeps
// a --data file's), which the run reads in a random order
// (spider_own_order_seconds; the same work, checked). The runs' noise key is
// --noise-key-file's (default: the key of tests/data/noise.key); compare.py
// passes the CLI the same file, so that both do the same work.
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "dpsosp/dpsosp.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int usage() {
  std::fprintf(stderr,
               "usage: dpsosp_floor --synthetic SPEC [--repeats R] [--threads T] [--dpsgd-batch B] [--spider S] "
               "[--noise-key-file F]\n");
  return 2;
}

long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The best of `repeats` passes over the records of x in the order perm, on
// `threads` threads each taking a contiguous part of the order and
// prefetching every line of the record `ahead` places on: out[k] =
// visit(record perm[k], d). Adds the outputs to checksum.
template <class Visit>
double best_random_pass(const dpsosp::RowMatrix& x, const dpsosp::IndexList& perm, int threads, int repeats,
                        Eigen::Index ahead, dpsosp::Vec& out, double& checksum, Visit visit) {
  const Eigen::Index n = x.rows(), d = x.cols();
  const Eigen::Index row_bytes = d * static_cast<Eigen::Index>(sizeof(double));
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const auto t = static_cast<Eigen::Index>(omp_get_thread_num());
      const auto nt = static_cast<Eigen::Index>(omp_get_num_threads());
      const Eigen::Index begin = n * t / nt, end = n * (t + 1) / nt;
      for (Eigen::Index k = begin; k < end; ++k) {
        if (k + ahead < end) {
          const char* p = reinterpret_cast<const char*>(x.row(static_cast<Eigen::Index>(perm[k + ahead])).data());
          for (Eigen::Index b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b, 0, 2);
        }
        out[k] = visit(x.row(static_cast<Eigen::Index>(perm[k])).data(), d);
      }
    }
    best = std::min(best, seconds_since(start));
    checksum += out.sum();
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec;
  int repeats = 5;
  int threads = omp_get_max_threads();
  long dpsgd_batch = 0;
  int spider_runs = 0;
  std::string noise_key_file;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    if (arg == "--synthetic") {
      spec = argv[++i];
    } else if (arg == "--repeats") {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--threads") {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--dpsgd-batch") {
      dpsgd_batch = std::max(0L, std::atol(argv[++i]));
    } else if (arg == "--spider") {
      spider_runs = std::max(0, std::atoi(argv[++i]));
    } else if (arg == "--noise-key-file") {
      noise_key_file = argv[++i];
    } else {
      return usage();
    }
  }
  if (spec.empty()) return usage();
  try {
    auto start = std::chrono::steady_clock::now();
    // Stored in seed 1's sample order, as `dpsosp run --seed 1` stores them
    // for its single-pass runs; a pass over all of them does not care.
    const dpsosp::SyntheticProblem problem = dpsosp::make_synthetic(spec, std::uint64_t{1});
    const double load_seconds = seconds_since(start);
    const dpsosp::RowMatrix& x = problem.data.dense();
    const Eigen::Index n = x.rows(), d = x.cols();
    const dpsosp::Vec v = dpsosp::Vec::Constant(d, 1.0 / std::sqrt(static_cast<double>(d)));
    dpsosp::Vec out(n);
    double checksum = 0, best_gemv = 1e300, best_parallel = 1e300;
    for (int r = 0; r < repeats; ++r) {
      start = std::chrono::steady_clock::now();
      out.noalias() = x * v;
      best_gemv = std::min(best_gemv, seconds_since(start));
      checksum += out.sum();

      start = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
      for (Eigen::Index i = 0; i < n; ++i) out[i] = x.row(i).dot(v);
      best_parallel = std::min(best_parallel, seconds_since(start));
      checksum += out.sum();
    }
    const double best = std::min(best_gemv, best_parallel);
    // Random order: out[k] = <x_{perm k}, v>.
    dpsosp::SamplePool pool(static_cast<dpsosp::Index>(n), 1);
    const dpsosp::IndexList perm = pool.draw(static_cast<dpsosp::Index>(n));
    const double best_gather = best_random_pass(
        x, perm, threads, repeats, 8, out, checksum,
        [&v](const double* row, Eigen::Index d_) { return Eigen::Map<const dpsosp::Vec>(row, d_).dot(v); });
    // Random order, reads only: one double of each line of each record.
    const double best_touch =
        best_random_pass(x, perm, threads, repeats, 32, out, checksum, [](const double* row, Eigen::Index d_) {
          double sum = 0;
          for (Eigen::Index j = 0; j < d_; j += 8) sum += row[j];
          return sum;
        });
    const long rss_data_kb = peak_rss_kb();
    long rss_run_kb = 0;
    double run_seconds = 0;
    const auto model = dpsosp::make_model("logistic", static_cast<dpsosp::Index>(d));
    // What `dpsosp run --model logistic --epsilon 1 --delta 1e-6 --seed 1
    // --threads T` sets (compare.py checks that the work matches the CLI's).
    // The key of tests/data/noise.key unless --noise-key-file names another.
    const dpsosp::NoiseKey noise_key = noise_key_file.empty()
                                           ? dpsosp::NoiseKey::from_hex("5f3c0a9d2e7b41c68a1d0f93b7e2c455")
                                           : dpsosp::NoiseKey::from_file(noise_key_file);
    const auto run_options = [threads, &noise_key](dpsosp::Algorithm algorithm) {
      dpsosp::RunOptions o;
      o.algorithm = algorithm;
      o.privacy = dpsosp::PrivacyTarget{1, 1e-6};
      o.seed = 1;
      o.noise_key = noise_key;
      o.threads = threads;
      return o;
    };
    if (dpsgd_batch > 0) {
      dpsosp::RunOptions o = run_options(dpsosp::Algorithm::kDpsgd);
      o.batch_size = static_cast<dpsosp::Index>(dpsgd_batch);
      run_seconds = dpsosp::minimize(*model, problem.data, dpsosp::Vec::Zero(d), o).diagnostics.seconds;
      rss_run_kb = peak_rss_kb();
    }
    std::string spider = "[]", spider_own = "[]";
    long long spider_gradients = 0, spider_samples = 0, spider_steps = 0;
    if (spider_runs > 0) {
      const dpsosp::RunOptions o = run_options(dpsosp::Algorithm::kSpiderTreeAdaptive);
      // Runs on `data`; their seconds as a JSON list. Every run must do the same work.
      const auto runs = [&](const dpsosp::Dataset& data) {
        std::string list = "[";
        for (int r = 0; r < spider_runs; ++r) {
          const dpsosp::Summary run = dpsosp::minimize(*model, data, dpsosp::Vec::Zero(d), o);
          char seconds[32];
          std::snprintf(seconds, sizeof seconds, "%s%.6f", r > 0 ? ", " : "", run.diagnostics.seconds);
          list += seconds;
          if (spider_steps != 0 && (static_cast<long long>(run.steps) != spider_steps ||
                                    static_cast<long long>(run.diagnostics.gradient_evaluations) != spider_gradients))
            throw dpsosp::Error("spider-tree-adaptive did other work on the records in their own order");
          spider_gradients = static_cast<long long>(run.diagnostics.gradient_evaluations);
          spider_samples = static_cast<long long>(run.samples_used);
          spider_steps = static_cast<long long>(run.steps);
        }
        return list + "]";
      };
      spider = runs(problem.data);
      // The same records kept in their own order, as `dpsosp run --data` keeps
      // a file's: the run reads them in a random order (the same results).
      const dpsosp::SyntheticProblem own = dpsosp::make_synthetic(spec);
      spider_own = runs(own.data);
    }
    std::printf(
        "{\"synthetic\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"bytes\": %lld, \"load_seconds\": %.6f, "
        "\"gemv_seconds\": %.6f, \"parallel_seconds\": %.6f, \"threads\": %d, \"seconds\": %.6f, "
        "\"rows_per_second\": %.1f, \"bytes_per_second\": %.1f, \"repeats\": %d, \"checksum\": %.6g, "
        "\"peak_rss_kb_after_data\": %ld, \"dpsgd_batch\": %ld, \"dpsgd_seconds\": %.6f, \"peak_rss_kb_after_dpsgd\": "
        "%ld, "
        "\"gather_seconds\": %.6f, \"gather_rows_per_second\": %.1f, \"touch_seconds\": %.6f, "
        "\"touch_rows_per_second\": %.1f, \"spider_seconds\": %s, \"spider_own_order_seconds\": %s, "
        "\"spider_gradient_evaluations\": %lld, \"spider_samples_used\": %lld, \"spider_steps\": %lld}\n",
        spec.c_str(), static_cast<long long>(n), static_cast<long long>(d),
        static_cast<long long>(n * d * static_cast<Eigen::Index>(sizeof(double))), load_seconds, best_gemv,
        best_parallel, threads, best, static_cast<double>(n) / best, static_cast<double>(n * d) * sizeof(double) / best,
        repeats, checksum, rss_data_kb, dpsgd_batch, run_seconds, rss_run_kb, best_gather,
        static_cast<double>(n) / best_gather, best_touch, static_cast<double>(n) / best_touch, spider.c_str(),
        spider_own.c_str(), spider_gradients, spider_samples, spider_steps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dpsosp_floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
