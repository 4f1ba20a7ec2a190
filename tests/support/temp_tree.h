#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace clustercert::testing {

// A throwaway host tree under the system temp directory, removed with the
// object: tests write just the sysfs/procfs files a case needs.
class TempTree {
 public:
  explicit TempTree(const std::string& prefix = "clustercert_tree") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    root_ = ::mkdtemp(pattern.data());
  }
  ~TempTree() { std::filesystem::remove_all(root_); }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  void Write(const std::string& path, const std::string& text) const {
    std::filesystem::path file = root_ / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace clustercert::testing
