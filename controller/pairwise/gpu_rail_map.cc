#include "controller/pairwise/gpu_rail_map.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller::pairwise {
namespace {

int RelationRank(const std::string& relation) {
  static constexpr const char* kOrder[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  for (int i = 0; i < 5; ++i) {
    if (relation == kOrder[i]) return i;
  }
  return 5;
}

}  // namespace

std::vector<v1::GpuRail> MapGpusToRails(const v1::Inventory& inventory,
                                        const std::vector<std::string>& rails, int max_gpus) {
  std::vector<v1::GpuRail> map;
  if (rails.empty()) return map;
  for (const v1::Gpu& gpu : inventory.gpu_runtime().gpus()) {
    v1::GpuRail entry;
    entry.set_gpu(absl::StrCat("cuda:", gpu.index()));
    entry.set_gpu_pci(gpu.pci_bus_id());
    entry.set_rail(rails.front());
    entry.set_relation("unknown");
    int best = 6;
    for (const std::string& rail : rails) {
      for (const v1::GpuNicPath& path : inventory.gpu_nic_paths()) {
        if (path.nic() != rail || !absl::EqualsIgnoreCase(path.gpu_pci(), gpu.pci_bus_id())) {
          continue;
        }
        if (RelationRank(path.relation()) < best) {
          best = RelationRank(path.relation());
          entry.set_rail(rail);
          entry.set_relation(path.relation());
        }
      }
    }
    entry.set_tested(max_gpus <= 0 || static_cast<int>(map.size()) < max_gpus);
    map.push_back(std::move(entry));
  }
  return map;
}

std::vector<std::string> GpusOnRail(const std::vector<v1::GpuRail>& map, const std::string& rail) {
  std::vector<std::string> gpus;
  for (const v1::GpuRail& entry : map) {
    if (entry.tested() && entry.rail() == rail) gpus.push_back(entry.gpu());
  }
  return gpus;
}

}  // namespace clustercert::controller::pairwise
