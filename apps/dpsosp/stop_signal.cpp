// SIGINT and SIGTERM during `dpsosp run` (stop_signal.hpp).
#include "stop_signal.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace dpsosp::cli {
namespace {

// The first SIGINT or SIGTERM only sets a flag that the optimizer polls once
// per step; the run then ends, the report so far (with the guarantee fixed
// before the run, which covers the shorter run too) is written and the exit status is 128 + the
// signal number (130 for SIGINT). The handler restores the default action of
// both signals (SA_RESETHAND, and sigaction for the other one; both are
// blocked while it runs), so a second SIGINT or SIGTERM ends the process at
// once. It is async-signal-safe: lock-free atomics, a sig_atomic_t store,
// sigaction(2), raise(3) and write(2), with errno saved around them.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");
volatile std::sig_atomic_t g_signal = 0;

// Signals handled so far. Two signals can reach two threads (the OpenMP
// workers take signals too) before either handler has restored the default
// actions; the later handler then does what a second signal must: end the
// process, by the signal's default action.
std::atomic<int> g_signals_seen{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free counter");

extern "C" void on_stop_signal(int signo) {
  const int saved_errno = errno;
  if (g_signals_seen.fetch_add(1) > 0) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(signo, &default_action, nullptr);
    raise(signo);  // pending (blocked while this handler runs), delivered on return
    errno = saved_errno;
    return;
  }
  g_signal = signo;
  g_stop.store(true, std::memory_order_relaxed);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(SIGINT, &default_action, nullptr);
  sigaction(SIGTERM, &default_action, nullptr);
  static const char kMessage[] = "dpsosp: stopping after this step and writing the report (a second signal aborts)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace

struct StopOnSignal::Saved {
  struct sigaction previous_int {};
  struct sigaction previous_term {};
};

StopOnSignal::StopOnSignal() : saved_(std::make_unique<Saved>()) {
  g_stop.store(false);
  g_signals_seen.store(0);
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &action, &saved_->previous_int);
  sigaction(SIGTERM, &action, &saved_->previous_term);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGINT, &saved_->previous_int, nullptr);
  sigaction(SIGTERM, &saved_->previous_term, nullptr);
}

const std::atomic<bool>& stop_flag() { return g_stop; }
bool stop_requested_by_signal() { return g_stop.load(); }
int stop_signal_number() { return g_signal != 0 ? static_cast<int>(g_signal) : SIGINT; }

}  // namespace dpsosp::cli
