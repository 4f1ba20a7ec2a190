// A stand-in for nccl-tests' binaries, for the mpirun launcher's test
// (tests/integration/mpirun_launcher_test.cc): installed in the build tree
// as all_reduce_perf, all_gather_perf, reduce_scatter_perf and alltoall_perf,
// and started by Debian's real OpenMPI mpirun. It needs no GPU and never
// calls MPI.
//
// Every rank writes one line to stderr, in one write(2) so that ranks'
// lines never interleave mid-line:
//   fake-nccl-tests: binary=NAME rank=R size=N args=A|B|C env=NAME=VALUE|...
// with OpenMPI's rank and world size and every NCCL_* variable it received.
// Rank 0 alone prints, on stdout, a table a real nccl-tests run recorded
// (../shared/realworld/nccl-tests/, resolved from the source directory at
// build time: FAKE_NCCL_TESTS_TABLES), as nccl-tests' rank 0 does.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

// The recorded table each binary prints: the new-format all_reduce run of
// two 8-GPU H100 nodes, the old-format one-node A100 tables for the rest.
const std::map<std::string, std::string>& Tables() {
  static const std::map<std::string, std::string> tables = {
      {"all_reduce_perf", "new-format-2node-h100-gcp-a3mega-allreduce.txt"},
      {"all_gather_perf", "old-format-1node-a100-sxm4-40gb-allgather.txt"},
      {"reduce_scatter_perf", "old-format-1node-a100-sxm4-40gb-reducescatter.txt"},
      {"alltoall_perf", "old-format-1node-a100-sxm4-40gb-alltoall.txt"},
  };
  return tables;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string Report(const std::string& binary, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> nccl;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "NCCL_", 5) == 0) nccl.emplace_back(*entry);
  }
  std::sort(nccl.begin(), nccl.end());
  auto join = [](const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : "|") + item;
    return text;
  };
  return "fake-nccl-tests: binary=" + binary + " rank=" + Env("OMPI_COMM_WORLD_RANK") +
         " size=" + Env("OMPI_COMM_WORLD_SIZE") + " args=" + join(args) + " env=" + join(nccl) +
         "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary = argv[0];
  binary = binary.substr(binary.rfind('/') + 1);
  auto table = Tables().find(binary);
  if (table == Tables().end()) {
    std::cerr << "fake-nccl-tests: started as " << binary
              << ", which is none of nccl-tests' binaries it stands in for\n";
    return 2;
  }
  const std::string report = Report(binary, argc, argv);
  if (::write(2, report.data(), report.size()) != static_cast<ssize_t>(report.size())) return 3;
  if (Env("OMPI_COMM_WORLD_RANK") != "0") return 0;
  const std::string path = std::string(FAKE_NCCL_TESTS_TABLES) + "/" + table->second;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "fake-nccl-tests: cannot read the recorded table " << path << "\n";
    return 4;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::cout << text.str() << std::flush;
  return 0;
}
