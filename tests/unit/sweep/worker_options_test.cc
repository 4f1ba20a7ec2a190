#include "sweep/worker_options.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace clustercert::sweep {
namespace {

WorkerOptions EveryFieldSet() {
  WorkerOptions options;
  options.rank = 5;
  options.ranks = 16;
  options.local_rank = 1;
  options.operation = Operation::kReduceScatter;
  options.sweep.min_bytes = 1024;
  options.sweep.max_bytes = int64_t{4} << 30;
  options.sweep.factor = 4;
  options.sweep.warmup_iters = 0;
  options.sweep.iters = 50;
  options.sweep.in_place = false;
  options.memory_cap_bytes = int64_t{70} << 30;
  options.transport = "ibverbs";
  options.bind_ip = "10.0.0.7";
  options.ib_device = "mlx5_2";
  options.ib_port = 2;
  options.gid_index = 3;
  options.cuda_device = 6;
  options.copy_check = true;
  options.print_table = false;
  options.timeout_s = 12.25;
  return options;
}

void ExpectSame(const WorkerOptions& a, const WorkerOptions& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.local_rank, b.local_rank);
  EXPECT_EQ(a.operation, b.operation);
  EXPECT_EQ(a.sweep.min_bytes, b.sweep.min_bytes);
  EXPECT_EQ(a.sweep.max_bytes, b.sweep.max_bytes);
  EXPECT_EQ(a.sweep.factor, b.sweep.factor);
  EXPECT_EQ(a.sweep.warmup_iters, b.sweep.warmup_iters);
  EXPECT_EQ(a.sweep.iters, b.sweep.iters);
  EXPECT_EQ(a.sweep.in_place, b.sweep.in_place);
  EXPECT_EQ(a.memory_cap_bytes, b.memory_cap_bytes);
  EXPECT_EQ(a.transport, b.transport);
  EXPECT_EQ(a.bind_ip, b.bind_ip);
  EXPECT_EQ(a.ib_device, b.ib_device);
  EXPECT_EQ(a.ib_port, b.ib_port);
  EXPECT_EQ(a.gid_index, b.gid_index);
  EXPECT_EQ(a.cuda_device, b.cuda_device);
  EXPECT_EQ(a.copy_check, b.copy_check);
  EXPECT_EQ(a.print_table, b.print_table);
  EXPECT_EQ(a.timeout_s, b.timeout_s);
}

TEST(WorkerOptionsTest, RoundTripsEveryField) {
  const WorkerOptions options = EveryFieldSet();
  std::string error;
  std::optional<WorkerOptions> parsed = ParseWorkerArgs(FormatWorkerArgs(options), error);
  ASSERT_TRUE(parsed.has_value()) << error;
  ExpectSame(*parsed, options);
}

TEST(WorkerOptionsTest, RoundTripsDefaultsAndPrintTable) {
  WorkerOptions options;
  options.print_table = true;
  options.timeout_s = 0.1;
  std::string error;
  std::optional<WorkerOptions> parsed = ParseWorkerArgs(FormatWorkerArgs(options), error);
  ASSERT_TRUE(parsed.has_value()) << error;
  ExpectSame(*parsed, options);
}

TEST(WorkerOptionsTest, OperationIsLeftOutForAllReduceAndChecked) {
  WorkerOptions options;
  const std::vector<std::string> args = FormatWorkerArgs(options);
  EXPECT_EQ(std::find(args.begin(), args.end(), "--operation"), args.end());
  std::string error;
  EXPECT_FALSE(ParseWorkerArgs({"--rank", "0", "--ranks", "2", "--operation", "allreduce"}, error));
  EXPECT_EQ(error,
            "--operation is 'allreduce': it must be one of all_reduce, all_gather, "
            "reduce_scatter, alltoall");
  std::optional<WorkerOptions> parsed =
      ParseWorkerArgs({"--rank", "0", "--ranks", "2", "--operation=alltoall"}, error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->operation, Operation::kAlltoAll);
}

TEST(WorkerOptionsTest, SizesArePlainBytes) {
  const std::vector<std::string> args = FormatWorkerArgs(EveryFieldSet());
  bool found = false;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--sizes") {
      EXPECT_EQ(args[i + 1], "1024:4294967296:4");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(WorkerOptionsTest, AcceptsFlagEqualsValue) {
  std::string error;
  auto parsed = ParseWorkerArgs({"--rank=1", "--ranks=2", "--sizes=8:64:2"}, error);
  ASSERT_TRUE(parsed.has_value()) << error;
  EXPECT_EQ(parsed->rank, 1);
  EXPECT_EQ(parsed->sweep.max_bytes, 64);
}

std::string ErrorFor(const std::vector<std::string>& args) {
  std::string error;
  EXPECT_FALSE(ParseWorkerArgs(args, error).has_value());
  return error;
}

TEST(WorkerOptionsTest, ErrorsNameTheFlagAndTheValue) {
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "2", "--iters", "ten"}),
            "--iters is 'ten': it must be a whole number, 1 or more");
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "2", "--iters", "0"}),
            "--iters is '0': it must be a whole number, 1 or more");
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "2", "--sizes", "8:1G:2"}),
            "--sizes is '8:1G:2': it must be MIN:MAX:FACTOR in plain bytes, e.g. 8:8589934592:2");
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "2", "--sizes", "64:8:2"}),
            "--sizes is '64:8:2': MIN must be 1 or more, MAX at least MIN and FACTOR 2 or more");
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "2", "--transport", "rdma"}),
            "--transport is 'rdma': it must be tcp or ibverbs");
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "2", "--timeout-s", "-3"}),
            "--timeout-s is '-3': it must be a number of seconds above 0");
  EXPECT_NE(ErrorFor({"--rank", "0", "--ranks", "2", "--frobnicate", "1"}).find("'--frobnicate'"),
            std::string::npos);
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks"}), "--ranks needs a value after it");
  EXPECT_EQ(ErrorFor({"--rank", "0"}),
            "--ranks is missing: the worker needs both --rank and --ranks");
  EXPECT_EQ(ErrorFor({"--rank", "2", "--ranks", "2"}),
            "--rank is 2 but --ranks is 2: the rank must be below the number of ranks");
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "2", "--print-table"}),
            "--print-table is given with --ranks 2: the table is for standalone runs only, so "
            "use --ranks 1");
  EXPECT_EQ(ErrorFor({"--rank", "99999999999", "--ranks", "2"}),
            "--rank is '99999999999': it must be a whole number, 0 or more");
}

// Issue 15: the worker took any text as --bind-ip and any size as a count;
// it refuses what the agent refuses, so a worker started by hand is as safe.
TEST(WorkerOptionsTest, ValuesPastTheDocumentedMaximaAreRefused) {
  const std::vector<std::string> base = {"--rank", "0", "--ranks", "2"};
  auto with = [&](std::initializer_list<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more);
    return ErrorFor(args);
  };
  EXPECT_EQ(with({"--bind-ip", "--copy-check"}),
            "bind_ip is '--copy-check': it must be this node's data address as an IP literal "
            "(e.g. 10.0.0.7 or fd00::7), the plan's nodes[].data_ip");
  EXPECT_EQ(with({"--ib-device", "-x"}).substr(0, 19), "ib_device is '-x': ");
  EXPECT_EQ(with({"--iters", "100001"}),
            "collectives.iters is 100001: it must be 1 to 100000 (nccl-tests -n)");
  EXPECT_EQ(with({"--warmup", "1001"}),
            "collectives.warmup_iters is 1001: it must be 0 to 1000 (nccl-tests -w)");
  EXPECT_EQ(with({"--sizes", "8:68719476736:2"}),
            "collectives.sizes.max is 68719476736 bytes: the most is 34359738368 (32G) per "
            "buffer; lower sizes.max");
  EXPECT_EQ(with({"--ib-port", "256"}),
            "ib_port is 256: it must be 1 to 255 (the device's port number)");
  EXPECT_EQ(with({"--gid-index", "256"}),
            "gid_index is 256: it must be 0 to 255 (a row of the port's GID table)");
  EXPECT_EQ(with({"--local-rank", "16"}),
            "local_rank is 16: it must be 0 to 15 (ranks on one node)");
  EXPECT_EQ(with({"--timeout-s", "86401"}),
            "timeout_s is 86401: it must be above 0 and at most 86400 seconds "
            "(collectives.timeout_s)");
  EXPECT_EQ(ErrorFor({"--rank", "0", "--ranks", "65537"}),
            "world_size (--ranks) is 65537: it must be 1 to 65536 (ranks in the whole job)");
}

TEST(WorkerOptionsTest, ValidateWorkerOptionsAcceptsEveryShippedShape) {
  EXPECT_EQ(ValidateWorkerOptions(EveryFieldSet()), "");
  EXPECT_EQ(ValidateWorkerOptions(WorkerOptions{}), "");
  WorkerOptions v6 = EveryFieldSet();
  v6.bind_ip = "fd00::7";
  EXPECT_EQ(ValidateWorkerOptions(v6), "");
}

TEST(WorkerOptionsTest, QuotedValuesAreClippedAndPrintable) {
  const std::string error =
      ErrorFor({"--rank", "0", "--ranks", "2", "--transport", std::string(1 << 20, 'x') + "\n"});
  EXPECT_LT(error.size(), 200u);
  EXPECT_NE(error.find("(1048577 bytes)"), std::string::npos) << error;
}

}  // namespace
}  // namespace clustercert::sweep
