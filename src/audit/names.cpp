// The audit's tamperings and canaries by name (audit.hpp).
#include <string>

#include "dpsosp/audit.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp::audit {

Tampering parse_tampering(const std::string& name) {
  for (const Tampering t :
       {Tampering::kNone, Tampering::kNoiseDividedBy10, Tampering::kClippingOff, Tampering::kPublishedKey,
        Tampering::kUnclippedO2, Tampering::kExtremeFails, Tampering::kSensitivityHalved, Tampering::kNoiseHalved,
        Tampering::kRateHalved, Tampering::kColumnNormHalved, Tampering::kDepthUnderstated})
    if (name == tampering_name(t)) return t;
  throw Error("audit: unknown tampering '" + name +
              "', expected none, noise-div-10, clip-off, published-key, unclipped-o2, extreme-fails, "
              "sensitivity-half, noise-half, rate-half, column-norm-half or depth-understated");
}

std::string tampering_name(Tampering t) {
  switch (t) {
    case Tampering::kNone: return "none";
    case Tampering::kNoiseDividedBy10: return "noise-div-10";
    case Tampering::kClippingOff: return "clip-off";
    case Tampering::kPublishedKey: return "published-key";
    case Tampering::kUnclippedO2: return "unclipped-o2";
    case Tampering::kExtremeFails: return "extreme-fails";
    case Tampering::kSensitivityHalved: return "sensitivity-half";
    case Tampering::kNoiseHalved: return "noise-half";
    case Tampering::kRateHalved: return "rate-half";
    case Tampering::kColumnNormHalved: return "column-norm-half";
    case Tampering::kDepthUnderstated: return "depth-understated";
  }
  return "unknown";
}

Canary parse_canary(const std::string& name) {
  for (const Canary c : {Canary::kLinear, Canary::kQuadraticO2, Canary::kExtreme})
    if (name == canary_name(c)) return c;
  throw Error("audit: unknown canary '" + name + "', expected linear, quadratic-o2 or extreme");
}

std::string canary_name(Canary c) {
  switch (c) {
    case Canary::kLinear: return "linear";
    case Canary::kQuadraticO2: return "quadratic-o2";
    case Canary::kExtreme: return "extreme";
  }
  return "unknown";
}

}  // namespace dpsosp::audit
