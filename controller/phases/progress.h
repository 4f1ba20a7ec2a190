#pragma once

#include <cstdio>
#include <mutex>
#include <string>

namespace clustercert::controller {

// Progress lines for long work ("[connect] node1 ok ..."), written to stderr
// so stdout stays clean for --json. Thread-safe: callbacks report from
// client threads.
class Progress {
 public:
  explicit Progress(std::FILE* out = stderr, bool quiet = false) : out_(out), quiet_(quiet) {}
  void Line(const std::string& phase, const std::string& text);
  // Text written as it is (a table such as nccl-tests'), lines ending in '\n'.
  void Block(const std::string& text);

 private:
  std::FILE* out_;
  bool quiet_;
  std::mutex mutex_;
};

}  // namespace clustercert::controller
