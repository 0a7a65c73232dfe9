// dpsosp: a batch's clipped sum chained over a process group (share_chain.hpp).
#include "optimizers/process_group.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/error.hpp"

namespace dpsosp {

BatchShare batch_share(Index b, int rank, int size) {
  const auto unit = Model::share_unit();
  const Index units = (b + unit - 1) / unit;
  const auto p = static_cast<Index>(size);
  const auto r = static_cast<Index>(rank);
  BatchShare s;
  // units * (r + 1) cannot overflow: units <= 2^53 / unit and size is small.
  s.first = std::min(b, unit * (units * r / p));
  s.end = std::min(b, unit * (units * (r + 1) / p));
  return s;
}

namespace detail {
namespace {

// Word after word into one 64-bit digest (FNV-1a over the bytes).
struct Digest {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  template <class T>
  void add(const T& v) {
    bytes(&v, sizeof v);
  }
  template <class T>
  void add(const std::optional<T>& v) {
    add(v.has_value());
    if (v) add(*v);
  }
};

// What must be the same on every process for the runs to be one run: the
// records' fingerprint, the start point and the options that shape the run.
std::uint64_t run_digest(const RunOptions& o, const Vec& x0, std::uint64_t records) {
  Digest d;
  d.add(records);
  d.add(static_cast<std::uint64_t>(x0.size()));
  d.bytes(x0.data(), static_cast<std::size_t>(x0.size()) * sizeof(double));
  d.add(static_cast<int>(o.algorithm));
  d.add(o.privacy.has_value());
  if (o.privacy) {
    d.add(o.privacy->epsilon);
    d.add(o.privacy->delta);
    d.add(static_cast<int>(o.privacy->noise));
  }
  d.add(o.constants.G), d.add(o.constants.M), d.add(o.constants.rho), d.add(o.constants.B);
  d.add(o.alpha_scale), d.add(o.batch_size), d.add(o.period), d.add(o.epochs), d.add(o.learning_rate);
  d.add(o.max_phase_length), d.add(o.max_steps), d.add(o.sample_order_or_default());
  const ParameterOverrides& v = o.overrides;
  d.add(v.alpha), d.add(v.kappa), d.add(v.sigma), d.add(v.noise_multiplier), d.add(v.eta), d.add(v.zeta);
  d.add(v.threshold), d.add(v.b), d.add(v.T), d.add(v.Gamma);
  d.add(o.seed);
  d.add(o.estimate.G), d.add(o.estimate.M), d.add(o.tail), d.add(o.o2), d.add(o.accountant);
  return d.h;
}

// A process's verdict, a fixed-size message.
struct Verdict {
  std::uint8_t ok = 1;
  std::uint64_t digest = 0;
  std::int32_t process = -1;  // the outcome's: the process the message is about
  char message[1024] = {};
  void say(const std::string& text) {
    std::memset(message, 0, sizeof message);
    std::memcpy(message, text.data(), std::min(text.size(), sizeof message - 1));
  }
};

}  // namespace

void agreed_checks(ProcessGroup* group, const RunOptions& options, const Vec& x0,
                   const std::function<std::uint64_t()>& checks) {
  if (group == nullptr) {
    checks();
    return;
  }
  Verdict mine;
  try {
    mine.digest = run_digest(options, x0, checks());
  } catch (const std::exception& e) {
    mine.ok = 0;
    mine.say(e.what());
  }
  const int rank = group->rank(), size = group->size();
  const auto who = [&](int q) { return "process " + std::to_string(q) + " of " + std::to_string(size) + ": "; };
  Verdict outcome;
  if (rank != 0) {
    group->send(0, &mine, sizeof mine);
  } else {
    outcome = mine;
    outcome.process = mine.ok ? -1 : 0;
    if (!mine.ok) outcome.say(who(0) + mine.message);
    for (int q = 1; q < size; ++q) {
      Verdict theirs;
      group->receive(q, &theirs, sizeof theirs);
      theirs.message[sizeof theirs.message - 1] = '\0';
      if (!outcome.ok) continue;  // the first failure is the one reported
      if (!theirs.ok) {
        outcome.ok = 0;
        outcome.process = q;
        outcome.say(who(q) + theirs.message);
      } else if (theirs.digest != mine.digest) {
        outcome.ok = 0;
        outcome.process = q;
        outcome.say(who(q) +
                    "its records, start point or options differ from process 0's (every process must "
                    "be given the same ones)");
      }
    }
  }
  group->broadcast(0, &outcome, sizeof outcome);
  outcome.message[sizeof outcome.message - 1] = '\0';
  if (!outcome.ok) throw Error(outcome.message);
}

void share_keys(ProcessGroup& group, std::uint64_t& seed, std::array<std::uint8_t, 16>& key, bool& supplied) {
  unsigned char message[8 + 16 + 1];
  std::memcpy(message, &seed, 8);
  std::memcpy(message + 8, key.data(), 16);
  message[24] = supplied ? 1 : 0;
  group.broadcast(0, message, sizeof message);
  std::memcpy(&seed, message, 8);
  std::memcpy(key.data(), message + 8, 16);
  supplied = message[24] != 0;
  std::memset(message, 0, sizeof message);
}

ClippedSum chain_batch(const BatchPlan& plan, Index b, Index d,
                       const std::function<ClippedSum(const SumStart&)>& share_sum) {
  ProcessGroup& group = *plan.group;
  const int rank = group.rank(), size = group.size();
  // The processes with rows in this batch, in rank order: this one's
  // neighbours in the chain and its last link (the broadcast's root).
  int previous = -1, next = -1, last = -1;
  for (int q = 0; q < size; ++q) {
    if (batch_share(b, q, size).size() == 0) continue;
    if (q < rank) previous = q;
    if (q > rank && next < 0) next = q;
    last = q;
  }
  const std::size_t words = static_cast<std::size_t>(d) + 3;  // the sum, clipped, nonfinite, stop
  std::vector<double> message(words, 0.0);
  const bool local_stop = plan.local_stop != nullptr && plan.local_stop->load();
  ClippedSum out;
  if (batch_share(b, rank, size).size() > 0) {
    double before[3] = {0, 0, 0};
    int starts = 0;
    const SumStart start = [&](Vec& sum) {
      ++starts;
      sum = Vec::Zero(static_cast<Eigen::Index>(d));
      if (previous < 0) return;
      group.receive(previous, message.data(), words * sizeof(double));
      std::memcpy(sum.data(), message.data(), static_cast<std::size_t>(d) * sizeof(double));
      std::memcpy(before, message.data() + d, sizeof before);
    };
    out = share_sum(start);
    if (starts != 1)
      throw Error("data-parallel run: the model's chained sum took its start " + std::to_string(starts) +
                  " times, expected once (Model::chained_gradient_sum)");
    std::memcpy(message.data(), out.sum.data(), static_cast<std::size_t>(d) * sizeof(double));
    message[d] = before[0] + static_cast<double>(out.clipped);
    message[d + 1] = before[1] + static_cast<double>(out.nonfinite);
    message[d + 2] = (before[2] != 0 || local_stop) ? 1.0 : 0.0;
    if (next >= 0) group.send(next, message.data(), words * sizeof(double));
  }
  group.broadcast(last, message.data(), words * sizeof(double));
  out.sum = Eigen::Map<const Vec>(message.data(), static_cast<Eigen::Index>(d));
  out.clipped = static_cast<Index>(message[d]);
  out.nonfinite = static_cast<Index>(message[d + 1]);
  if (message[d + 2] != 0 && plan.agreed_stop != nullptr) plan.agreed_stop->store(true);
  return out;
}

}  // namespace detail
}  // namespace dpsosp
