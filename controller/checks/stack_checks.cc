#include "controller/checks/stack_checks.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace clustercert::controller::checks {
namespace {

constexpr char kModulesId[] = "stack.modules";
constexpr char kSrcversionId[] = "stack.srcversion";
constexpr char kOrderId[] = "stack.module_order";

constexpr char kModulesRemedy[] =
    "Load the kernel RDMA stack: sudo modprobe ib_uverbs (userspace verbs, so perftest and NCCL, "
    "need it; it pulls in ib_core) together with the NIC driver (mlx5_core, mlx5_ib; rdma_rxe "
    "and `rdma link add rxe0 type rxe netdev <netdev>` for soft-RoCE); with MLNX_OFED run sudo "
    "/etc/init.d/openibd restart && sudo systemctl enable openibd so it loads at every boot.";

constexpr char kOrderRemedy[] =
    "Load in the seed's order: the RDMA stack first (MLNX_OFED's openibd: mlx5_core, ib_core, "
    "mlx5_ib, ib_uverbs), then the NVIDIA driver, then nvidia_peermem, which is built against "
    "the OFED headers and registers with the RDMA stack that is loaded: sudo modprobe -r "
    "nvidia_peermem && sudo modprobe nvidia_peermem after any reload of the RDMA driver, or "
    "reboot; load it from /etc/modules-load.d/nvidia-peermem.conf, never by hand before openibd.";

// The seed's order as "loaded before" pairs: ib_core and mlx5_core under the
// drivers built on them, and every RDMA module and the NVIDIA driver before
// nvidia_peermem.
constexpr std::pair<const char*, const char*> kLoadedBefore[] = {
    {"ib_core", "mlx5_ib"},        {"ib_core", "ib_uverbs"},        {"ib_core", "rdma_rxe"},
    {"mlx5_core", "mlx5_ib"},      {"ib_core", "nvidia_peermem"},   {"mlx5_core", "nvidia_peermem"},
    {"mlx5_ib", "nvidia_peermem"}, {"ib_uverbs", "nvidia_peermem"}, {"nvidia", "nvidia_peermem"},
};

std::string Normalize(const std::string& name) { return absl::StrReplaceAll(name, {{"-", "_"}}); }

const v1::KernelModule* FindModule(const v1::Stack& stack, const std::string& name) {
  for (const v1::KernelModule& module : stack.modules()) {
    if (Normalize(module.name()) == name) return &module;
  }
  return nullptr;
}

std::string Names(const std::vector<ExpectedModule>& modules) {
  std::vector<std::string> names;
  names.reserve(modules.size());
  for (const auto& module : modules) names.push_back(module.name);
  return absl::StrJoin(names, ", ");
}

// "mlx5_ib (for mlx5_0, mlx5_1)": each missing module and what needs it.
std::string WithReasons(const std::vector<ExpectedModule>& modules) {
  std::vector<std::string> parts;
  parts.reserve(modules.size());
  for (const auto& module : modules) {
    parts.push_back(absl::StrCat(module.name, " (for ", module.reason, ")"));
  }
  return absl::StrJoin(parts, ", ");
}

v1::Finding CheckModules(const CheckContext& context, const std::vector<ExpectedModule>& expected) {
  FindingBuilder builder = context.Builder(kModulesId, v1::Finding::error);
  const v1::Stack& stack = context.inventory().stack();
  std::vector<ExpectedModule> not_loaded, unreported;
  for (const ExpectedModule& module : expected) {
    const v1::KernelModule* found = FindModule(stack, module.name);
    if (found == nullptr) {
      unreported.push_back(module);
    } else if (!found->loaded()) {
      not_loaded.push_back(module);
    }
  }
  const std::string want = absl::StrCat(Names(expected), " loaded");
  if (!not_loaded.empty()) {
    const std::string observed = absl::StrCat(Names(not_loaded), " not loaded");
    return builder.Fail(observed, want,
                        absl::StrCat(builder.subject(), " has ", WithReasons(not_loaded),
                                     " not loaded; its RDMA devices need ", want, "."),
                        kModulesRemedy);
  }
  if (!unreported.empty()) {
    return builder.Unknown(ExplainMissing(stack, {"modules"}),
                           absl::StrCat("state of module ", Names(unreported)), want);
  }
  return builder.Pass(want, want,
                      absl::StrCat(builder.subject(), " has ", Names(expected),
                                   " loaded, as its RDMA devices need."));
}

std::string Shown(const std::string& srcversion) {
  return srcversion.empty() ? "none (an in-tree build)" : srcversion;
}

v1::Finding CheckSrcversion(const CheckContext& context,
                            const std::vector<ExpectedModule>& expected) {
  FindingBuilder builder = context.Builder(kSrcversionId, v1::Finding::error);
  const v1::Stack& stack = context.inventory().stack();
  std::vector<std::string> mismatches, unread, matched;
  std::string first_mismatch;
  for (const ExpectedModule& wanted : expected) {
    const v1::KernelModule* module = FindModule(stack, wanted.name);
    if (module == nullptr || !module->loaded() || module->builtin()) continue;
    if (!module->file_read()) {
      unread.push_back(module->file_source().empty()
                           ? absl::StrCat(wanted.name, ": the node-agent recorded no module file")
                           : module->file_source());
      continue;
    }
    if (module->srcversion() == module->file_srcversion()) {
      matched.push_back(absl::StrCat(wanted.name, " ", Shown(module->srcversion())));
      continue;
    }
    if (first_mismatch.empty()) first_mismatch = wanted.name;
    mismatches.push_back(absl::StrCat(
        wanted.name, " loaded srcversion ", Shown(module->srcversion()), " differs from ",
        module->file_path(), "'s ", Shown(module->file_srcversion())));
  }
  const std::string want = "each loaded module's srcversion equals its installed file's";
  if (!mismatches.empty()) {
    return builder.Fail(
        absl::StrJoin(mismatches, "; "), want,
        absl::StrCat(builder.subject(), ": ", absl::StrJoin(mismatches, "; "),
                     ": a DKMS or OFED rebuild was installed but not loaded."),
        absl::StrCat("Reboot, or reload the driver so the installed build runs: sudo modprobe -r ",
                     first_mismatch == "nvidia_peermem" ? "nvidia_peermem"
                                                        : "nvidia_peermem mlx5_ib mlx5_core",
                     " && sudo modprobe ", first_mismatch,
                     " (with MLNX_OFED: sudo /etc/init.d/openibd restart), then check that "
                     "cat /sys/module/",
                     first_mismatch, "/srcversion and modinfo -F srcversion ", first_mismatch,
                     " agree."));
  }
  if (!unread.empty()) {
    if (HasUnknown(stack, {"modules.file_srcversion"})) {
      return builder.Unknown(ExplainMissing(stack, {"modules.file_srcversion"}),
                             "installed module srcversion", want);
    }
    return builder.Skipped(absl::StrJoin(unread, "; "));
  }
  if (matched.empty()) return builder.Skipped("no expected module is loaded as a module");
  return builder.Pass(absl::StrJoin(matched, ", "), want,
                      absl::StrCat(builder.subject(),
                                   " runs the installed build of every RDMA "
                                   "module (srcversion ",
                                   absl::StrJoin(matched, ", "), ")."));
}

v1::Finding CheckOrder(const CheckContext& context) {
  FindingBuilder builder = context.Builder(kOrderId, v1::Finding::warning);
  const v1::Stack& stack = context.inventory().stack();
  if (HasUnknown(stack, {"modules"})) {
    return builder.Unknown(ExplainMissing(stack, {"modules"}), "module load order",
                           "the seed's order");
  }
  std::map<std::string, uint32_t> rank;
  for (const v1::KernelModule& module : stack.modules()) {
    if (module.has_load_rank()) rank[Normalize(module.name())] = module.load_rank();
  }
  std::vector<std::string> out_of_order;
  int pairs = 0;
  for (const auto& [before, after] : kLoadedBefore) {
    auto first = rank.find(before);
    auto second = rank.find(after);
    if (first == rank.end() || second == rank.end()) continue;
    ++pairs;
    // A smaller rank is a later load: /proc/modules lists the newest first.
    if (first->second < second->second) {
      out_of_order.push_back(absl::StrCat(after, " was loaded before ", before));
    }
  }
  const std::string want =
      "RDMA stack (mlx5_core, ib_core, mlx5_ib, ib_uverbs), then nvidia, then nvidia_peermem";
  if (pairs == 0) {
    return builder.Skipped(
        "fewer than two of the seed's modules have a line in /proc/modules (built in, not "
        "loaded, or an inventory from before load order was recorded)");
  }
  if (!out_of_order.empty()) {
    const std::string observed = absl::StrJoin(out_of_order, "; ");
    return builder.Fail(observed, want,
                        absl::StrCat(builder.subject(), ": ", observed,
                                     " (inferred from /proc/modules, which lists the newest load "
                                     "first): out of the seed's order."),
                        kOrderRemedy);
  }
  std::vector<std::pair<uint32_t, std::string>> loaded;
  loaded.reserve(rank.size());
  for (const auto& [name, r] : rank) loaded.emplace_back(r, name);
  std::sort(loaded.rbegin(), loaded.rend());
  std::vector<std::string> sequence;
  sequence.reserve(loaded.size());
  for (const auto& entry : loaded) sequence.push_back(entry.second);
  const std::string observed = absl::StrJoin(sequence, ", ");
  return builder.Pass(observed, want,
                      absl::StrCat(builder.subject(), " loaded ", observed,
                                   " in the seed's order (inferred from /proc/modules)."));
}

}  // namespace

std::vector<ExpectedModule> ExpectedStackModules(const v1::Inventory& inventory) {
  std::vector<ExpectedModule> expected = {{"ib_core", "the RDMA core"},
                                          {"ib_uverbs", "userspace verbs"}};
  auto add = [&](const std::string& name, const std::string& device) {
    for (auto& module : expected) {
      if (module.name != name) continue;
      absl::StrAppend(&module.reason, ", ", device);
      return;
    }
    expected.push_back({name, device});
  };
  for (const v1::RdmaDevice& device : inventory.rdma_devices()) {
    if (absl::StartsWith(device.name(), "mlx5_")) {
      add("mlx5_core", device.name());
      add("mlx5_ib", device.name());
    } else if (absl::StartsWith(device.name(), "rxe") ||
               (!device.parent_netdev().empty() && !absl::StartsWith(device.name(), "siw"))) {
      add("rdma_rxe", device.name());
    }
  }
  return expected;
}

void AppendModuleChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (!context.is_rdma()) {
    findings.push_back(context.SkippedOnEthernet(kModulesId, v1::Finding::error));
    findings.push_back(context.SkippedOnEthernet(kSrcversionId, v1::Finding::error));
    findings.push_back(context.SkippedOnEthernet(kOrderId, v1::Finding::warning));
    return;
  }
  const std::vector<ExpectedModule> expected = ExpectedStackModules(context.inventory());
  findings.push_back(CheckModules(context, expected));
  findings.push_back(CheckSrcversion(context, expected));
  findings.push_back(CheckOrder(context));
}

}  // namespace clustercert::controller::checks
