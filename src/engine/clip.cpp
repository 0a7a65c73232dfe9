// clip_to_norm (clip.hpp): the engine's rule (clip_rule.hpp) on one vector.
#include "dpsosp/clip.hpp"

#include <limits>

#include "engine/clip_rule.hpp"

namespace dpsosp {

bool clip_to_norm(Eigen::Ref<Vec> v, double c) {
  if (!(c < std::numeric_limits<double>::infinity())) return false;
  return detail::clip_given_norm(v, v.norm(), c) != detail::kKept;
}

}  // namespace dpsosp
