// Tests: a process group of threads in this process (dpsosp::ProcessGroup),
// so that data-parallel runs can be tested without MPI: `size` threads, each
// with its own group member, run the same function; messages go through
// mailboxes in memory, delivered in order, point to point and broadcast apart
// (as MPI keeps collectives apart from point-to-point messages).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "dpsosp/process_group.hpp"

namespace dpsosp::testing {

class ThreadHub {
 public:
  using Message = std::vector<unsigned char>;
  void post(int kind, int from, int to, const void* p, std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto* c = static_cast<const unsigned char*>(p);
    boxes_[{kind, from, to}].emplace_back(c, c + n);
    changed_.notify_all();
  }
  void take(int kind, int from, int to, void* p, std::size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto& box = boxes_[{kind, from, to}];
    // A test that deadlocks fails instead of hanging the suite.
    if (!changed_.wait_for(lock, std::chrono::seconds(60), [&] { return !box.empty(); }))
      throw std::runtime_error("ThreadHub: no message in 60 s (deadlock?)");
    if (box.front().size() != n) throw std::runtime_error("ThreadHub: a message of another size");
    std::memcpy(p, box.front().data(), n);
    box.pop_front();
    ++delivered_;
  }
  std::size_t delivered() const { return delivered_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::tuple<int, int, int>, std::deque<Message>> boxes_;
  std::size_t delivered_ = 0;
};

class ThreadGroup final : public ProcessGroup {
 public:
  ThreadGroup(std::shared_ptr<ThreadHub> hub, int rank, int size) : hub_(std::move(hub)), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int to, const void* bytes, std::size_t count) override { hub_->post(0, rank_, to, bytes, count); }
  void receive(int from, void* bytes, std::size_t count) override { hub_->take(0, from, rank_, bytes, count); }
  void broadcast(int root, void* bytes, std::size_t count) override {
    if (rank_ == root) {
      for (int q = 0; q < size_; ++q)
        if (q != root) hub_->post(1, root, q, bytes, count);
    } else {
      hub_->take(1, root, rank_, bytes, count);
    }
  }

 private:
  std::shared_ptr<ThreadHub> hub_;
  int rank_, size_;
};

/// Runs f(group) on `size` threads, one member each; returns what each
/// returned, by rank, and rethrows the first exception (after all finish).
template <class R>
std::vector<R> run_group(int size, const std::function<R(std::shared_ptr<ProcessGroup>)>& f) {
  auto hub = std::make_shared<ThreadHub>();
  std::vector<R> out(static_cast<std::size_t>(size));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        out[static_cast<std::size_t>(r)] = f(std::make_shared<ThreadGroup>(hub, r, size));
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace dpsosp::testing
