// How a data-parallel batch's time splits (docs/scaling.md): the time to
// compute and clip a share's rows, which processes do in parallel, against
// the time to add them to the chain's sum, which the fixed order makes
// serial across processes. One thread; the start of the chained sum marks
// the split.
//
//   build/bench/dpsosp_chain_split
#include <omp.h>

#include <chrono>
#include <cstdio>

#include "dpsosp/dpsosp.hpp"

using namespace dpsosp;
using Clock = std::chrono::steady_clock;

int main() {
  omp_set_num_threads(1);
  const SyntheticProblem p = make_synthetic("gaussian-mixture:n=100000,d=100,seed=1");
  ModelOptions mlp;
  mlp.hidden = 32;
  mlp.classes = 2;
  struct Case {
    const char* model;
    ModelOptions options;
    Index batch;
  };
  std::printf("share unit %zu rows\n", Model::share_unit());
  for (const Case& c : {Case{"logistic", {}, 4096}, Case{"mlp", mlp, 1024}}) {
    const auto model = make_model(c.model, 100, c.options, &p.data);
    const Vec x = Vec::Constant(static_cast<Eigen::Index>(model->dim()), 0.01);
    double compute = 0, add = 0;
    constexpr int kWarm = 5, kReps = 50;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
      IndexList idx(c.batch);
      for (Index k = 0; k < c.batch; ++k) idx[k] = (rep * c.batch + k) % p.data.rows();
      const auto t0 = Clock::now();
      Clock::time_point t1;
      const SumStart start = [&](Vec& s) {
        t1 = Clock::now();
        s = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
      };
      model->chained_gradient_sum(x, p.data, idx, 1.0, start);
      const auto t2 = Clock::now();
      if (rep < kWarm) continue;
      compute += std::chrono::duration<double>(t1 - t0).count();
      add += std::chrono::duration<double>(t2 - t1).count();
    }
    std::printf("%s, d = %zu, b = %zu: compute and clip %.3f ms, chained adds %.3f ms a batch: add share %.2f\n",
                c.model, model->dim(), c.batch, compute / kReps * 1e3, add / kReps * 1e3, add / (add + compute));
  }
}
