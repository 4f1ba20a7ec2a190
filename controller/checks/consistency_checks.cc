#include "controller/checks/consistency_checks.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "controller/checks/finding_builder.h"

namespace clustercert::controller::checks {
namespace {

// How many holders a message names before it says "and N more".
constexpr size_t kMaxNamed = 8;

// One reported value: the node, for firmware the rail and its PCI address.
struct Sample {
  std::string node;
  std::string device;
  std::string pci;
  std::string value;
};

// The samples of one comparison: e.g. every node's kernel, or every MT4129
// rail's firmware. `noun` names the set in messages ("nodes", "MT4129 rail NICs").
struct Group {
  std::string noun;
  std::string device;  // the finding's device on a pass or skip (the NIC model)
  std::vector<Sample> samples;
  std::vector<std::string> silent;  // who has an inventory but does not report the value
};

// The majority's text for a remedy: "28.39.1002" and "the other 3 nodes".
struct Majority {
  absl::string_view value;
  std::string peers;
};

using RemedyFn = std::string (*)(const Sample& odd, const Majority& majority);

struct Area {
  absl::string_view id;
  Severity severity;
  absl::string_view what;  // "kernel", "firmware", "NVIDIA driver"
  RemedyFn remedy;
  absl::string_view split_remedy;
};

struct Tally {
  std::string value;
  std::vector<std::string> holders;
};

std::string Label(const Sample& sample) {
  return sample.device.empty() ? sample.node : absl::StrCat(sample.node, " ", sample.device);
}

std::string NameList(const std::vector<std::string>& names) {
  if (names.size() <= kMaxNamed) return absl::StrJoin(names, ", ");
  std::vector<std::string> head(names.begin(), names.begin() + kMaxNamed);
  return absl::StrCat(absl::StrJoin(head, ", "), " and ", names.size() - kMaxNamed, " more");
}

// Values by how many hold them, most first; ties in value order so the output is stable.
std::vector<Tally> TallyOf(const std::vector<Sample>& samples) {
  std::map<std::string, std::vector<std::string>> by_value;
  for (const Sample& sample : samples) by_value[sample.value].push_back(Label(sample));
  std::vector<Tally> tallies;
  for (auto& [value, holders] : by_value) tallies.push_back({value, std::move(holders)});
  std::stable_sort(tallies.begin(), tallies.end(), [](const Tally& a, const Tally& b) {
    return a.holders.size() > b.holders.size();
  });
  return tallies;
}

v1::Finding Skipped(const Area& area, absl::string_view device, absl::string_view message) {
  v1::Finding finding = FindingBuilder(area.id, area.severity, "", device).Skipped(message);
  finding.set_message(std::string(message));
  return finding;
}

// A strict majority: each sample that differs from it fails on its own node.
void FailMinority(const Area& area, const Group& group, const Tally& top,
                  std::vector<v1::Finding>& findings) {
  const size_t total = group.samples.size();
  const Majority majority{top.value,
                          absl::StrCat("the other ", top.holders.size(), " ", group.noun)};
  for (const Sample& odd : group.samples) {
    if (odd.value == top.value) continue;
    FindingBuilder builder(area.id, area.severity, odd.node, odd.device);
    findings.push_back(builder.Fail(
        odd.value, top.value,
        absl::StrCat(Label(odd), " runs ", area.what, " ", odd.value, " while ", top.holders.size(),
                     " of the ", total, " ", group.noun, " run ", top.value, "."),
        area.remedy(odd, majority)));
  }
}

// No strict majority: nobody is "the odd one", so every camp is named.
void FailSplit(const Area& area, const Group& group, const std::vector<Tally>& tallies,
               std::vector<v1::Finding>& findings) {
  const std::string expected = absl::StrCat("the same ", area.what, " on all ", group.noun);
  for (const Tally& tally : tallies) {
    std::vector<std::string> others;
    for (const Tally& other : tallies) {
      if (&other != &tally) {
        others.push_back(absl::StrCat(other.value, " on ", other.holders.size()));
      }
    }
    const std::string holders = NameList(tally.holders);
    findings.push_back(
        FindingBuilder(area.id, area.severity, "", holders)
            .Fail(tally.value, expected,
                  absl::StrCat("The ", group.noun, " are split on ", area.what,
                               " with no strict majority: ", tally.value, " on ", holders, " (",
                               tally.holders.size(), " of ", group.samples.size(), "), ",
                               absl::StrJoin(others, ", "), "."),
                  area.split_remedy));
  }
}

void JudgeGroup(const Area& area, const Group& group, std::vector<v1::Finding>& findings) {
  const size_t total = group.samples.size();
  const std::string silent =
      group.silent.empty()
          ? ""
          : absl::StrCat(" (", NameList(group.silent), group.silent.size() == 1 ? " does" : " do",
                         " not report it)");
  if (total < 2) {
    std::string who = total == 0 ? std::string("No node reports")
                                 : absl::StrCat("Only ", Label(group.samples[0]), " reports");
    findings.push_back(Skipped(area, group.device,
                               absl::StrCat(who, " ", area.what, " among the ", group.noun,
                                            ": there is nothing to compare", silent, ".")));
    return;
  }
  const std::vector<Tally> tallies = TallyOf(group.samples);
  const Tally& top = tallies.front();
  if (tallies.size() == 1) {
    findings.push_back(FindingBuilder(area.id, area.severity, "", group.device)
                           .Pass(top.value,
                                 absl::StrCat("the same ", area.what, " on all ", group.noun),
                                 absl::StrCat("All ", total, " ", group.noun, " run ", area.what,
                                              " ", top.value, silent, ".")));
  } else if (top.holders.size() * 2 > total) {
    FailMinority(area, group, top, findings);
  } else {
    FailSplit(area, group, tallies, findings);
  }
}

// Every reachable node's value; nodes without one are listed as silent.
Group NodeGroup(const std::vector<NodeEvidence>& nodes,
                std::string (*value_of)(const v1::Inventory&)) {
  Group group;
  group.noun = "nodes";
  for (const NodeEvidence& evidence : nodes) {
    if (!evidence.reachable || evidence.inventory == nullptr) continue;
    std::string value = value_of(*evidence.inventory);
    if (value.empty()) {
      group.silent.push_back(evidence.node->name);
    } else {
      group.samples.push_back({evidence.node->name, "", "", std::move(value)});
    }
  }
  return group;
}

std::string NicModel(const v1::RdmaDevice& device) {
  return device.hca_type().empty() ? device.model() : device.hca_type();
}

// The plan's rails grouped by NIC model: different models run different firmware lines.
std::vector<Group> FirmwareGroups(const std::vector<NodeEvidence>& nodes) {
  std::map<std::string, Group> by_model;
  for (const NodeEvidence& evidence : nodes) {
    if (!evidence.reachable || evidence.inventory == nullptr) continue;
    for (const std::string& rail : evidence.node->rails) {
      for (const v1::RdmaDevice& device : evidence.inventory->rdma_devices()) {
        if (device.name() != rail) continue;
        const std::string model = NicModel(device);
        Group& group = by_model[model];
        group.device = model;
        group.noun = absl::StrCat(model.empty() ? "unnamed-model" : model, " rail NICs");
        Sample sample{evidence.node->name, device.name(), device.pci_address(), device.fw_ver()};
        if (sample.value.empty()) {
          group.silent.push_back(Label(sample));
        } else {
          group.samples.push_back(std::move(sample));
        }
      }
    }
  }
  std::vector<Group> groups;
  for (auto& [model, group] : by_model) groups.push_back(std::move(group));
  return groups;
}

std::string FirmwareRemedy(const Sample& odd, const Majority& majority) {
  const std::string pci = odd.pci.empty() ? odd.device : odd.pci;
  return absl::StrCat("Flash ", odd.device, " on ", odd.node, " to ", majority.value, " like ",
                      majority.peers, ": mstflint -d ", pci, " -i <image for ", majority.value,
                      "> burn, or mlxfwmanager -d ", pci, " -u; then mlxfwreset -d ", pci,
                      " reset (or reboot) so it runs. Rails on different firmware differ in "
                      "congestion control and PFC behaviour, which shows up as one slow rank.");
}

std::string KernelRemedy(const Sample& odd, const Majority& majority) {
  return absl::StrCat("Boot ", odd.node, " into kernel ", majority.value, " like ", majority.peers,
                      " (install that linux-image package and make it GRUB's default), then "
                      "rebuild the out-of-tree modules for it: MLNX_OFED with "
                      "--add-kernel-support, the NVIDIA driver, nvidia-peermem.");
}

std::string OfedRemedy(const Sample& odd, const Majority& majority) {
  return absl::StrCat("Install ", majority.value, " on ", odd.node, " like ", majority.peers,
                      " (MLNX_OFED: sudo ./mlnxofedinstall --add-kernel-support, then sudo "
                      "/etc/init.d/openibd restart; upstream: the distribution's rdma-core and "
                      "ibverbs-providers packages of that release): nodes on different RDMA "
                      "stacks differ in defaults and fixes, and NCCL behaves differently on them.");
}

std::string GpuDriverRemedy(const Sample& odd, const Majority& majority) {
  return absl::StrCat("Install NVIDIA driver ", majority.value, " on ", odd.node, " like ",
                      majority.peers,
                      " (the same branch and flavour, open or proprietary), reboot or reload the "
                      "nvidia modules and reload nvidia-peermem: ranks on different drivers can "
                      "disagree on CUDA and NCCL features and hang a collective.");
}

std::string CudaRemedy(const Sample& odd, const Majority& majority) {
  return absl::StrCat("Give ", odd.node, " CUDA runtime ", majority.value, " like ", majority.peers,
                      " (the same toolkit or worker image): ranks on different CUDA runtimes can "
                      "take different NCCL code paths.");
}

std::string NcclRemedy(const Sample& odd, const Majority& majority) {
  return absl::StrCat("Install NCCL ", majority.value, " on ", odd.node, " like ", majority.peers,
                      " (libnccl2 of that version, or the same worker image): NCCL ranks of "
                      "different versions can fail at init or hang in the first collective.");
}

std::string KernelOf(const v1::Inventory& inventory) { return inventory.stack().kernel_release(); }

std::string RdmaStackOf(const v1::Inventory& inventory) {
  const v1::Stack& stack = inventory.stack();
  if (!stack.ofed_version().empty()) return stack.ofed_version();
  if (!stack.rdma_core_version().empty())
    return absl::StrCat("rdma-core ", stack.rdma_core_version());
  return "";
}

std::string NvidiaDriverOf(const v1::Inventory& inventory) {
  return inventory.stack().nvidia_driver_version();
}

std::string CudaDriverApiOf(const v1::Inventory& inventory) {
  return inventory.gpu_runtime().driver_version();
}

std::string CudaRuntimeOf(const v1::Inventory& inventory) {
  return inventory.gpu_runtime().runtime_version();
}

std::string NcclOf(const v1::Inventory& inventory) { return inventory.stack().nccl_version(); }

constexpr Area kFirmware{"consistency.nic_firmware", v1::Finding::error, "firmware", FirmwareRemedy,
                         "Pick one firmware release for every NIC of this model (the one NVIDIA's "
                         "release notes match to your MLNX_OFED) and flash it on each: mstflint -d "
                         "<pci> -i <image> burn, or mlxfwmanager -d <pci> -u; then mlxfwreset or "
                         "reboot."};
constexpr Area kKernel{
    "consistency.kernel", v1::Finding::warning, "kernel", KernelRemedy,
    "Pick one kernel release for the cluster, install it on every node and "
    "rebuild the out-of-tree modules for it (MLNX_OFED with --add-kernel-support, "
    "the NVIDIA driver, nvidia-peermem)."};
constexpr Area kOfed{"consistency.ofed", v1::Finding::error, "RDMA stack", OfedRemedy,
                     "Pick one MLNX_OFED (or rdma-core) release for the cluster and install it on "
                     "every node (sudo ./mlnxofedinstall --add-kernel-support, then sudo "
                     "/etc/init.d/openibd restart)."};
constexpr Area kCuda{
    "consistency.cuda", v1::Finding::warning, "CUDA runtime", CudaRemedy,
    "Pick one CUDA runtime for the cluster (one toolkit or worker image) and use it "
    "on every node."};
constexpr Area kNccl{
    "consistency.nccl", v1::Finding::error, "NCCL", NcclRemedy,
    "Pick one NCCL release for the cluster (libnccl2 of one version, or one worker "
    "image) and install it on every node: mixed NCCL versions can hang at init."};

Area GpuDriverArea(bool nvidia_versions) {
  return {"consistency.gpu_driver", v1::Finding::error,
          nvidia_versions ? "NVIDIA driver" : "CUDA driver API", GpuDriverRemedy,
          "Pick one NVIDIA driver release (branch and flavour) for the cluster, install it on "
          "every node and reboot or reload the nvidia modules and nvidia-peermem."};
}

}  // namespace

std::vector<v1::Finding> EvaluateConsistency(const plan::Plan& plan,
                                             const std::vector<NodeEvidence>& nodes) {
  std::vector<v1::Finding> findings;
  if (plan.nodes.size() < 2) {
    const Area gpu_driver = GpuDriverArea(true);
    for (const Area* area : {&kFirmware, &kKernel, &kOfed, &gpu_driver, &kCuda, &kNccl}) {
      findings.push_back(Skipped(*area, "",
                                 absl::StrCat("The plan has one node: there is no other node to "
                                              "compare its ",
                                              area->what, " with.")));
    }
    return findings;
  }
  std::vector<Group> firmware = FirmwareGroups(nodes);
  if (firmware.empty()) firmware.push_back(Group{"rail NICs", "", {}, {}});
  for (const Group& group : firmware) JudgeGroup(kFirmware, group, findings);
  JudgeGroup(kKernel, NodeGroup(nodes, KernelOf), findings);
  JudgeGroup(kOfed, NodeGroup(nodes, RdmaStackOf), findings);
  // Driver release where the agents report it; the CUDA driver API version only
  // when none does, so a mixed fleet of agents never compares one with the other.
  Group drivers = NodeGroup(nodes, NvidiaDriverOf);
  const bool nvidia_versions = !drivers.samples.empty();
  if (!nvidia_versions) drivers = NodeGroup(nodes, CudaDriverApiOf);
  JudgeGroup(GpuDriverArea(nvidia_versions), drivers, findings);
  JudgeGroup(kCuda, NodeGroup(nodes, CudaRuntimeOf), findings);
  JudgeGroup(kNccl, NodeGroup(nodes, NcclOf), findings);
  return findings;
}

v1::NodeVersions NodeVersionsOf(const v1::Inventory& inventory, const plan::Node& node) {
  v1::NodeVersions versions;
  const v1::Stack& stack = inventory.stack();
  versions.set_kernel(stack.kernel_release());
  versions.set_ofed(stack.ofed_version());
  versions.set_rdma_core(stack.rdma_core_version());
  for (const std::string& rail : node.rails) {
    for (const v1::RdmaDevice& device : inventory.rdma_devices()) {
      if (device.name() != rail) continue;
      std::vector<std::string> words = {device.name()};
      if (!NicModel(device).empty()) words.push_back(NicModel(device));
      words.push_back(device.fw_ver().empty() ? "unknown" : device.fw_ver());
      versions.add_nic_firmware(absl::StrJoin(words, " "));
    }
  }
  versions.set_gpu_driver(stack.nvidia_driver_version().empty()
                              ? inventory.gpu_runtime().driver_version()
                              : stack.nvidia_driver_version());
  versions.set_cuda_runtime(inventory.gpu_runtime().runtime_version());
  versions.set_nccl(stack.nccl_version());
  return versions;
}

}  // namespace clustercert::controller::checks
