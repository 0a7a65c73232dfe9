// Internal: the mechanism table's rows (mechanism.hpp, MechanismInfo) defined
// beside their mechanisms; mechanism.cpp lists them with its own.
#pragma once
#include <vector>

#include "dpsosp/mechanism.hpp"

namespace dpsosp {

std::vector<MechanismInfo> poisson_mechanism_rows();  // poisson.cpp: poisson-gaussian, banded-mf-poisson
MechanismInfo mf_mechanism_row();                     // matrix_factorization.cpp

}  // namespace dpsosp
