// Tests: shared fixtures: a scratch directory per test, and readable names for
// tests parameterized by an algorithm.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "dpsosp/algorithm.hpp"

namespace dpsosp::testing {

/// A fresh directory per test (the process id and the test's names keep
/// parallel runs apart), removed afterwards; write() puts a file in it.
class ScratchDirTest : public ::testing::Test {
 protected:
  explicit ScratchDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

/// The parameter's name for INSTANTIATE_TEST_SUITE_P: the algorithm's, '-' as '_'.
struct AlgorithmTestName {
  std::string operator()(const ::testing::TestParamInfo<Algorithm>& info) const {
    std::string name = algorithm_name(info.param);
    for (char& c : name)
      if (c == '-') c = '_';
    return name;
  }
};

}  // namespace dpsosp::testing
