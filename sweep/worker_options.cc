#include "sweep/worker_options.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <limits>

#include "sweep/numbers.h"

namespace clustercert::sweep {
namespace {

// A value as an error quotes it: printable bytes only and at most 80 of them,
// since the value may come from a caller on the network.
std::string Quoted(const std::string& value) {
  constexpr size_t kMaxQuoted = 80;
  std::string text = "'";
  for (char c : value.substr(0, kMaxQuoted)) text.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  text.push_back('\'');
  if (value.size() > kMaxQuoted) text += " (" + std::to_string(value.size()) + " bytes)";
  return text;
}

bool IsIpLiteral(const std::string& text) {
  unsigned char address[16];
  return ::inet_pton(AF_INET, text.c_str(), address) == 1 ||
         ::inet_pton(AF_INET6, text.c_str(), address) == 1;
}

// mlx5_0, rxe0, ibp12s0: letters, digits, '_', '.', '-', not starting with '-'.
bool IsDeviceName(const std::string& text) {
  if (text.empty() || text.size() > kMaxIbDeviceNameBytes || text[0] == '-') return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string OutOfRange(const char* name, long long value, long long low, long long high,
                       const char* what) {
  return std::string(name) + " is " + std::to_string(value) + ": it must be " +
         std::to_string(low) + " to " + std::to_string(high) + " (" + what + ")";
}

// MIN:MAX:FACTOR, plain bytes (no K/M/G: the agent expands the plan's units).
bool ParseSizes(const std::string& text, SweepSpec& sweep, std::string& error) {
  const size_t first_colon = text.find(':');
  const size_t second_colon =
      first_colon == std::string::npos ? std::string::npos : text.find(':', first_colon + 1);
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;
  int factor = 0;
  if (second_colon == std::string::npos || !ParseWhole(text.substr(0, first_colon), min_bytes) ||
      !ParseWhole(text.substr(first_colon + 1, second_colon - first_colon - 1), max_bytes) ||
      !ParseWhole(text.substr(second_colon + 1), factor)) {
    error = "--sizes is " + Quoted(text) +
            ": it must be MIN:MAX:FACTOR in plain bytes, e.g. 8:8589934592:2";
    return false;
  }
  if (min_bytes < 1 || max_bytes < min_bytes || factor < 2) {
    error = "--sizes is " + Quoted(text) +
            ": MIN must be 1 or more, MAX at least MIN and FACTOR 2 or more";
    return false;
  }
  sweep.min_bytes = min_bytes;
  sweep.max_bytes = max_bytes;
  sweep.factor = factor;
  return true;
}

}  // namespace

std::string ValidateWorkerOptions(const WorkerOptions& options) {
  if (options.ranks < 1 || options.ranks > kMaxWorldSize) {
    return OutOfRange("world_size (--ranks)", options.ranks, 1, kMaxWorldSize,
                      "ranks in the whole job");
  }
  if (options.rank < 0 || options.rank >= options.ranks) {
    return OutOfRange("rank", options.rank, 0, options.ranks - 1, "below world_size");
  }
  if (options.local_rank < 0 || options.local_rank >= kMaxRanksPerNode) {
    return OutOfRange("local_rank", options.local_rank, 0, kMaxRanksPerNode - 1,
                      "ranks on one node");
  }
  if (std::string problem = ValidateSweepSpec(options.sweep); !problem.empty()) return problem;
  if (options.sweep.max_bytes > kMaxSweepBytes) {
    return "collectives.sizes.max is " + std::to_string(options.sweep.max_bytes) +
           " bytes: the most is " + std::to_string(kMaxSweepBytes) +
           " (32G) per buffer; lower sizes.max";
  }
  if (options.sweep.factor > kMaxSweepFactor) {
    return OutOfRange("collectives.sizes.factor", options.sweep.factor, 2, kMaxSweepFactor,
                      "nccl-tests -f");
  }
  if (options.sweep.warmup_iters > kMaxWarmupIters) {
    return OutOfRange("collectives.warmup_iters", options.sweep.warmup_iters, 0, kMaxWarmupIters,
                      "nccl-tests -w");
  }
  if (options.sweep.iters > kMaxIters) {
    return OutOfRange("collectives.iters", options.sweep.iters, 1, kMaxIters, "nccl-tests -n");
  }
  if (options.memory_cap_bytes < 0 || options.memory_cap_bytes > kMaxMemoryCapBytes) {
    return OutOfRange("memory_cap_bytes", options.memory_cap_bytes, 0, kMaxMemoryCapBytes,
                      "0 is the backend's own limit");
  }
  if (options.transport != "tcp" && options.transport != "ibverbs") {
    return "transport is " + Quoted(options.transport) + ": it must be tcp or ibverbs";
  }
  if (!options.bind_ip.empty() && !IsIpLiteral(options.bind_ip)) {
    return "bind_ip is " + Quoted(options.bind_ip) +
           ": it must be this node's data address as an IP literal (e.g. 10.0.0.7 or fd00::7), "
           "the plan's nodes[].data_ip";
  }
  if (!options.ib_device.empty() && !IsDeviceName(options.ib_device)) {
    return "ib_device is " + Quoted(options.ib_device) +
           ": it must be an RDMA device name as ibv_devices lists it (e.g. mlx5_0): letters, "
           "digits, '_', '.' and '-', not starting with '-', at most 64 characters";
  }
  if (options.ib_port < 1 || options.ib_port > kMaxIbPort) {
    return OutOfRange("ib_port", options.ib_port, 1, kMaxIbPort, "the device's port number");
  }
  if (options.gid_index < 0 || options.gid_index > kMaxGidIndex) {
    return OutOfRange("gid_index", options.gid_index, 0, kMaxGidIndex,
                      "a row of the port's GID table");
  }
  if (options.cuda_device < -1 || options.cuda_device > kMaxCudaDevice) {
    return OutOfRange("cuda_device", options.cuda_device, -1, kMaxCudaDevice,
                      "a CUDA ordinal, -1 for the local rank");
  }
  if (!(options.timeout_s > 0 && options.timeout_s <= kMaxTimeoutS)) {
    return "timeout_s is " + ShortestText(options.timeout_s) +
           ": it must be above 0 and at most 86400 seconds (collectives.timeout_s)";
  }
  return "";
}

std::vector<std::string> FormatWorkerArgs(const WorkerOptions& options) {
  std::vector<std::string> args = {
      "--rank",
      std::to_string(options.rank),
      "--ranks",
      std::to_string(options.ranks),
      "--local-rank",
      std::to_string(options.local_rank),
      "--sizes",
      std::to_string(options.sweep.min_bytes) + ":" + std::to_string(options.sweep.max_bytes) +
          ":" + std::to_string(options.sweep.factor),
      "--warmup",
      std::to_string(options.sweep.warmup_iters),
      "--iters",
      std::to_string(options.sweep.iters),
      "--memory-cap",
      std::to_string(options.memory_cap_bytes),
      "--transport",
      options.transport,
      "--ib-port",
      std::to_string(options.ib_port),
      "--gid-index",
      std::to_string(options.gid_index),
      "--cuda-device",
      std::to_string(options.cuda_device),
      "--timeout-s",
      ShortestText(options.timeout_s),
  };
  if (!options.sweep.in_place) args.push_back("--no-in-place");
  // Empty strings are the defaults; leaving them out keeps argv free of
  // empty arguments that would show as gaps in ps and logs.
  if (!options.bind_ip.empty()) {
    args.push_back("--bind-ip");
    args.push_back(options.bind_ip);
  }
  if (!options.ib_device.empty()) {
    args.push_back("--ib-device");
    args.push_back(options.ib_device);
  }
  // Only when not the default, so an all_reduce job still starts a worker
  // built before operations existed.
  if (options.operation != Operation::kAllReduce) {
    args.emplace_back("--operation");
    args.emplace_back(OperationName(options.operation));
  }
  if (options.copy_check) args.push_back("--copy-check");
  if (options.print_table) args.push_back("--print-table");
  return args;
}

namespace {

bool IsValueFlag(const std::string& flag) {
  static const char* const kValueFlags[] = {
      "--rank",    "--ranks",      "--local-rank",  "--sizes",     "--warmup",
      "--iters",   "--memory-cap", "--transport",   "--bind-ip",   "--ib-device",
      "--ib-port", "--gid-index",  "--cuda-device", "--timeout-s", "--operation"};
  for (const char* name : kValueFlags) {
    if (flag == name) return true;
  }
  return false;
}

// One value flag into `options`; false, with `error` saying why, for a bad value.
bool ApplyValueFlag(const std::string& flag, const std::string& value, WorkerOptions& options,
                    std::string& error) {
  auto whole_at_least = [&](auto& target, long long minimum, const char* what) {
    if (!ParseWhole(value, target) || target < minimum) {
      error = flag + " is " + Quoted(value) + ": it must be " + what;
      return false;
    }
    return true;
  };
  if (flag == "--rank") return whole_at_least(options.rank, 0, "a whole number, 0 or more");
  if (flag == "--ranks") return whole_at_least(options.ranks, 1, "a whole number, 1 or more");
  if (flag == "--local-rank") {
    return whole_at_least(options.local_rank, 0, "a whole number, 0 or more");
  }
  if (flag == "--sizes") return ParseSizes(value, options.sweep, error);
  if (flag == "--warmup") {
    return whole_at_least(options.sweep.warmup_iters, 0, "a whole number, 0 or more");
  }
  if (flag == "--iters") return whole_at_least(options.sweep.iters, 1, "a whole number, 1 or more");
  if (flag == "--memory-cap") {
    return whole_at_least(options.memory_cap_bytes, 0, "a byte count, 0 (no cap) or more");
  }
  if (flag == "--transport") {
    if (value != "tcp" && value != "ibverbs") {
      error = "--transport is " + Quoted(value) + ": it must be tcp or ibverbs";
      return false;
    }
    options.transport = value;
    return true;
  }
  if (flag == "--operation") {
    const std::optional<Operation> operation = ParseOperation(value);
    if (!operation) {
      error = "--operation is " + Quoted(value) + ": it must be one of " + OperationNamesText();
      return false;
    }
    options.operation = *operation;
    return true;
  }
  if (flag == "--bind-ip") {
    options.bind_ip = value;
    return true;
  }
  if (flag == "--ib-device") {
    options.ib_device = value;
    return true;
  }
  if (flag == "--ib-port") return whole_at_least(options.ib_port, 1, "a port number, 1 or more");
  if (flag == "--gid-index") return whole_at_least(options.gid_index, 0, "a GID index, 0 or more");
  if (flag == "--cuda-device") {
    return whole_at_least(options.cuda_device, -1,
                          "a CUDA device ordinal, or -1 for the local rank");
  }
  if (flag == "--timeout-s") {
    if (!ParseFinite(value, options.timeout_s) || options.timeout_s <= 0) {
      error = "--timeout-s is " + Quoted(value) + ": it must be a number of seconds above 0";
      return false;
    }
  }
  return true;
}

// What the flags must say together, once all are read.
bool CheckTogether(const WorkerOptions& options, bool saw_rank, bool saw_ranks,
                   std::string& error) {
  if (!saw_rank || !saw_ranks) {
    error = std::string(saw_rank ? "--ranks" : "--rank") +
            " is missing: the worker needs both --rank and --ranks";
    return false;
  }
  if (options.rank >= options.ranks) {
    error = "--rank is " + std::to_string(options.rank) + " but --ranks is " +
            std::to_string(options.ranks) + ": the rank must be below the number of ranks";
    return false;
  }
  if (options.print_table && options.ranks != 1) {
    error = "--print-table is given with --ranks " + std::to_string(options.ranks) +
            ": the table is for standalone runs only, so use --ranks 1";
    return false;
  }
  if (std::string problem = ValidateWorkerOptions(options); !problem.empty()) {
    error = std::move(problem);
    return false;
  }
  return true;
}

}  // namespace

std::optional<WorkerOptions> ParseWorkerArgs(const std::vector<std::string>& args,
                                             std::string& error) {
  WorkerOptions options;
  bool saw_rank = false;
  bool saw_ranks = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (const size_t equals = flag.find('=');
        flag.rfind("--", 0) == 0 && equals != std::string::npos) {
      inline_value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    }

    // Switches take no value.
    if (flag == "--no-in-place" || flag == "--copy-check" || flag == "--print-table") {
      if (inline_value) {
        error = flag + " takes no value, got " + Quoted(*inline_value) + ": drop the value";
        return std::nullopt;
      }
      if (flag == "--no-in-place") options.sweep.in_place = false;
      if (flag == "--copy-check") options.copy_check = true;
      if (flag == "--print-table") options.print_table = true;
      continue;
    }
    if (!IsValueFlag(flag)) {
      error = Quoted(args[i]) +
              " is not a collective worker flag: the agent and the worker come from different "
              "builds, so install both from the same release";
      return std::nullopt;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      error = flag + " needs a value after it";
      return std::nullopt;
    }
    if (!ApplyValueFlag(flag, value, options, error)) return std::nullopt;
    saw_rank = saw_rank || flag == "--rank";
    saw_ranks = saw_ranks || flag == "--ranks";
  }
  if (!CheckTogether(options, saw_rank, saw_ranks, error)) return std::nullopt;
  return options;
}

}  // namespace clustercert::sweep
