#include "controller/checks/topology_checks.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::checks {

std::optional<int> RelationRank(absl::string_view relation) {
  static constexpr absl::string_view kOrder[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  for (int rank = 0; rank < 5; ++rank) {
    if (relation == kOrder[rank]) return rank;
  }
  return std::nullopt;
}

namespace {

constexpr int kSysRank = 4;

bool IsPresentRail(const std::vector<const v1::RdmaDevice*>& rails, absl::string_view nic) {
  for (const v1::RdmaDevice* rail : rails) {
    if (rail->name() == nic) return true;
  }
  return false;
}

v1::Finding CheckGpu(const CheckContext& context, const v1::PciFunction& gpu,
                     const std::vector<const v1::RdmaDevice*>& rails) {
  FindingBuilder builder = context.Builder("topology.gpu_nic", v1::Finding::error, gpu.name());
  const plan::Expectations& expect = context.plan().expect;
  // The parser validates the relation; PHB (NCCL's GDR default) if it did not.
  const int max_rank = RelationRank(expect.max_gpu_nic_relation).value_or(2);
  const std::string max_name =
      RelationRank(expect.max_gpu_nic_relation) ? expect.max_gpu_nic_relation : "PHB";
  std::string expected = absl::StrCat(max_name, " or closer");
  if (expect.gpu_nic_same_numa) absl::StrAppend(&expected, ", same NUMA node");

  const v1::GpuNicPath* nearest = nullptr;
  int nearest_rank = kSysRank + 1;
  for (const v1::GpuNicPath& path : context.inventory().gpu_nic_paths()) {
    const bool this_gpu =
        path.gpu() == gpu.name() || (!gpu.address().empty() && path.gpu_pci() == gpu.address());
    if (!this_gpu || !IsPresentRail(rails, path.nic())) continue;
    std::optional<int> rank = RelationRank(path.relation());
    if (rank && *rank < nearest_rank) {
      nearest = &path;
      nearest_rank = *rank;
    }
  }
  if (nearest == nullptr) {
    MissingFact missing =
        HasUnknown(context.inventory(), {"gpu_nic_paths"})
            ? ExplainMissing(context.inventory(), {"gpu_nic_paths"})
            : MissingBecause(absl::StrCat("no PCIe path from ", gpu.name(), " to a rail NIC"));
    return builder.Unknown(missing, "placement relative to the rail NICs", expected);
  }
  std::string observed = absl::StrCat(nearest->relation(), " to ", nearest->nic());
  std::string message =
      absl::StrCat(builder.subject(), "'s nearest rail NIC is ", nearest->nic(), " through ",
                   nearest->relation(), ", plan expects ", expected, ".");
  const bool within = nearest_rank <= max_rank;
  const bool numa_ok = !expect.gpu_nic_same_numa || nearest_rank != kSysRank;
  if (within && numa_ok) return builder.Pass(observed, expected, message);
  return builder.Fail(
      observed, expected, message,
      absl::StrCat(
          "Place the GPU and a rail NIC under the same PCIe switch, or at least on the same NUMA "
          "node (move a card, or list the NIC on ",
          gpu.name(),
          "'s socket in NCCL_IB_HCA), and set NCCL_NET_GDR_LEVEL consistently with the relation "
          "you get (PHB allows GPUDirect up to the host bridge): GPUDirect through SYS goes via "
          "host memory and runs about 5x slower."));
}

}  // namespace

void AppendTopologyChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (auto skipped = context.SkipUnlessGpusAndRails("topology.gpu_nic", v1::Finding::error)) {
    findings.push_back(*std::move(skipped));
    return;
  }
  FindingBuilder node_builder = context.Builder("topology.gpu_nic", v1::Finding::error);
  std::vector<const v1::RdmaDevice*> rails = context.PresentRails();
  std::vector<const v1::PciFunction*> gpus = context.GpuFunctions();
  if (gpus.empty()) {
    // gpu.count reports the missing GPUs; placement cannot be judged without them.
    findings.push_back(node_builder.Unknown(HasUnknown(context.inventory(), {"pci"})
                                                ? ExplainMissing(context.inventory(), {"pci"})
                                                : MissingBecause("no GPU on the PCIe bus"),
                                            "GPU placement", "GPUs near their rail NICs"));
    return;
  }
  for (const v1::PciFunction* gpu : gpus) findings.push_back(CheckGpu(context, *gpu, rails));
}

}  // namespace clustercert::controller::checks
