#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace clustercert::testing {

// The bytes of tests/fixtures/RELATIVE; a missing file fails the test
// that asked (and reads as empty).
inline std::string FixtureBytes(const std::string& relative) {
  std::ifstream file(std::string(CLUSTERCERT_FIXTURES) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(file.good()) << "tests/fixtures/" << relative << " cannot be read";
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

}  // namespace clustercert::testing
