// Tests: the message of the dpsosp::Error a call throws.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "dpsosp/error.hpp"

namespace dpsosp::testing {

/// What f throws as dpsosp::Error; a test failure (and "") when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected dpsosp::Error";
  return "";
}

}  // namespace dpsosp::testing

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)
