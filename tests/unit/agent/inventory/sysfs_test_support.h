#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "clustercert/v1/inventory.pb.h"
#include "google/protobuf/repeated_field.h"

namespace clustercert::agent::inventory::testing {

// The root of the fixture host `name` under tests/fixtures/sysfs.
inline std::filesystem::path FixtureRoot(const std::string& name) {
  return std::filesystem::path(CLUSTERCERT_FIXTURES) / "sysfs" / name;
}

// The Unknown entry for `field`, or null.
inline const v1::Unknown* FindUnknown(
    const google::protobuf::RepeatedPtrField<v1::Unknown>& unknowns, const std::string& field) {
  for (const auto& unknown : unknowns) {
    if (unknown.field() == field) return &unknown;
  }
  return nullptr;
}

// A private copy of a fixture host (symlinks kept as symlinks) that a test
// may damage; removed when the object goes away.
class TempSysfsTree {
 public:
  explicit TempSysfsTree(const std::string& fixture) {
    static std::atomic<int> counter{0};
    root_ = std::filesystem::temp_directory_path() /
            ("inventory_sysfs_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(root_);
    std::filesystem::copy(
        FixtureRoot(fixture), root_,
        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  }
  ~TempSysfsTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempSysfsTree(const TempSysfsTree&) = delete;
  TempSysfsTree& operator=(const TempSysfsTree&) = delete;

  const std::filesystem::path& root() const { return root_; }

  // Overwrites the file at host path `path` (resolving symlinks in the copy
  // the way the kernel tree would) with `content` verbatim.
  void Write(const std::string& path, const std::string& content) const {
    std::ofstream(Real(path), std::ios::trunc) << content;
  }

  void Remove(const std::string& path) const { std::filesystem::remove(Real(path)); }

 private:
  std::filesystem::path Real(const std::string& path) const {
    auto host = root_ / path.substr(1);
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(host, ec);
    return ec ? host : canonical;
  }

  std::filesystem::path root_;
};

}  // namespace clustercert::agent::inventory::testing
