// Shared by the .npy tests: hand-made .npy files and a fixture reading bad ones.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "epctx/tensor_io.h"
#include "tools/tools_test_helpers.h"

namespace epctx::npy_testing {

// A .npy file of format `major` (1: 2-byte header length, 2 and 3: 4-byte) with the given header
// text, padded to a multiple of 64 bytes with spaces and a newline as NumPy does, then `data`.
inline std::string NpyFile(const std::string& header, const std::string& data, int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t len_size = major == 1 ? 2 : 4;
  const size_t prelude = 8 + len_size;
  const size_t total = (prelude + header.size() + 1 + 63) / 64 * 64;
  std::string padded = header;
  padded.resize(total - prelude - 1, ' ');
  padded += '\n';
  for (size_t i = 0; i < len_size; ++i) out += static_cast<char>((padded.size() >> (8 * i)) & 0xff);
  return out + padded + data;
}

// Writes bytes to a file and reads them back as .npy, for the exact error.
class NpyErrorFixture : public ::testing::Test {
 protected:
  // The error reading `bytes` gives ("" if the read succeeded), whose code must be
  // `expected_code`.
  std::string ErrorFor(const std::string& bytes, StatusCode expected_code) {
    tools_testing::WriteStringToFile(path_, bytes);
    auto t = ReadNpy(path_);
    if (t.ok()) return "";
    EXPECT_EQ(t.status().code(), expected_code) << t.status().ToString();
    return t.status().message();
  }

  tools_testing::TempDir dir_;
  std::string path_ = dir_ / "bad.npy";
  std::string p_ = "'" + path_ + "': ";  // every message starts with the file
};

}  // namespace epctx::npy_testing
