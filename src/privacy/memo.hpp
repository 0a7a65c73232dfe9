// A process-wide memo of accountant results (internal): the audit and the
// tests build many runs with the same figures, and a PLD or an RDP curve over
// 156 orders takes milliseconds to tens of milliseconds. The functions are
// pure, so a hit returns the same bits as a recomputation.
#pragma once
#include <map>
#include <mutex>

namespace dpsosp::privacy::detail {

template <class Key, class F>
double memoized(const Key& key, F compute) {
  static std::mutex mutex;
  static std::map<Key, double> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const double value = compute();  // outside the lock: it may take a while
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 4096) cache.clear();
  cache.emplace(key, value);
  return value;
}

}  // namespace dpsosp::privacy::detail
