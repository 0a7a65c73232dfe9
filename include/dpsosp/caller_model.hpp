// dpsosp: a model whose per-example gradients come from the caller (bring your
// own model: a C++ functor, a Python callable, a PyTorch module through
// dpsosp.torch; docs/architecture.md "A model of the caller's"). The library
// keeps what privacy rests on: it clips every per-example gradient the caller
// returns by its own rule (clip.hpp), forms the O2 differences, draws the
// noise from its mechanisms with the secret key, accounts, and plans the
// batches; the caller only evaluates gradients of the records it names.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dpsosp/model.hpp"

namespace dpsosp {

/// What a caller's model computes. Records are the caller's, named by their
/// ids 0 .. n - 1 (caller_records(n) is the library's view of them: one
/// feature, the id). A callback is never called by two threads at once.
struct CallerGradients {
  std::string name = "caller";
  Index dim = 0;  ///< the parameter count d
  /// out (resized by the callee to ids.size() x dim) row k = the gradient at
  /// x of record ids[k]'s loss, computed from that record alone (a module that
  /// mixes records, as batch normalization does, breaks the guarantee: the
  /// clip bounds each row, not what one record does to the others).
  std::function<void(const Vec& x, const std::vector<std::int64_t>& ids, RowMatrix& out)> gradients;
  /// Optional: out[k] = the loss of record ids[k] at x (NaN where not given).
  std::function<void(const Vec& x, const std::vector<std::int64_t>& ids, Vec& out)> losses;
  /// Optional: out = the Hessian of record id's loss at x times v (else
  /// central differences of gradients at x +- h v, h = 1e-4 max(1, |x|) / |v|).
  std::function<void(const Vec& x, std::int64_t id, const Vec& v, Vec& out)> hvp;
};

/// The model (name, dim and callbacks as given; features() = 1, the id).
/// Throws Error for dim < 1 or no gradients callback.
std::unique_ptr<Model> make_caller_model(CallerGradients gradients);

/// n records whose one feature is the record's id (0 .. n - 1), no labels:
/// what a caller's model runs on. Throws Error for n < 1.
Dataset caller_records(Index n);

}  // namespace dpsosp
