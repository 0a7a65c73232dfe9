// dpsosp: the umbrella header.
#pragma once
#include "dpsosp/certify.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/oracles.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/privacy.hpp"
#include "dpsosp/synthetic.hpp"
#include "dpsosp/tree.hpp"
#include "dpsosp/types.hpp"
