#include "controller/uplink/uplink_sizing.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustercert::controller::uplink {
namespace {

struct Profile {
  const char* name;
  double gbytes_per_gpu;  // per-GPU read rate, or 0
  double cluster_gbps;    // cluster-wide read rate, or 0
  const char* basis;
};

constexpr Profile kProfiles[] = {
    {"image-video", 1.0, 0, "image/video models read about 1 GB/s per GPU"},
    {"llm-pretrain", 0, 4.0,
     "LLM pre-training on tokenised text reads 1-4 Gb/s for the whole cluster (tokens are dense "
     "and a batch lasts a long time); sized here for 4"},
    {"fine-tune", 0, 40.0,
     "a fine-tune that reloads checkpoints often bursts to about 40 Gb/s for a few seconds, then "
     "drops to almost nothing"},
};

const Profile* FindProfile(const std::string& name) {
  for (const Profile& profile : kProfiles) {
    if (name == profile.name) return &profile;
  }
  return nullptr;
}

std::string Num(double value) { return absl::StrFormat("%.4g", value); }

}  // namespace

int CountedGpus(const plan::Plan& plan) {
  const int per_node = plan.uplink.workload.gpus_per_node;
  if (per_node > 0) return per_node * static_cast<int>(plan.nodes.size());
  int gpus = 0;
  for (const plan::Node& node : plan.nodes) gpus += node.gpus;
  return gpus;
}

double TransferSeconds(double gbytes, double gbps) { return gbps > 0 ? gbytes * 8 / gbps : 0; }

namespace {

// The workload's dataset read rate, per GPU or for the whole cluster.
struct ReadRate {
  double per_gpu = 0;
  double cluster_gbps = 0;
  std::string basis;  // the profile's reason for its figure; "" when given as numbers

  bool known() const { return per_gpu > 0 || cluster_gbps > 0; }
};

// A named profile replaces the workload's own figures; records which.
ReadRate ResolveReadRate(const plan::UplinkWorkload& workload, v1::UplinkSizing& sizing) {
  ReadRate rate{workload.ingest_gbytes_per_gpu, workload.cluster_ingest_gbps, ""};
  if (const Profile* profile = FindProfile(workload.profile)) {
    sizing.set_profile(profile->name);
    rate.per_gpu = profile->gbytes_per_gpu;
    rate.cluster_gbps = profile->cluster_gbps;
    rate.basis = profile->basis;
  } else if (rate.known()) {
    sizing.set_profile("custom");
  }
  return rate;
}

// The required rate and the arithmetic that shows where it comes from.
void SetRequiredRate(const ReadRate& rate, const plan::UplinkWorkload& workload,
                     v1::UplinkSizing& sizing) {
  sizing.set_ingest_gbytes_per_gpu(rate.per_gpu);
  if (rate.per_gpu > 0) {
    const double gbytes = sizing.gpus() * rate.per_gpu;
    sizing.set_required_gbytes_s(gbytes);
    sizing.set_required_gbps(gbytes * 8);
    const std::string gpus_term =
        workload.gpus_per_node > 0
            ? absl::StrCat(sizing.nodes(), " nodes x ", workload.gpus_per_node, " GPUs")
            : absl::StrCat(sizing.gpus(), " GPUs");
    sizing.set_arithmetic(absl::StrCat(gpus_term, " x ", Num(rate.per_gpu), " GB/s = ", Num(gbytes),
                                       " GB/s = ", Num(gbytes * 8), " Gb/s"));
  } else if (rate.cluster_gbps > 0) {
    sizing.set_required_gbps(rate.cluster_gbps);
    sizing.set_required_gbytes_s(rate.cluster_gbps / 8);
    sizing.set_arithmetic(absl::StrCat("cluster read rate ", Num(rate.cluster_gbps),
                                       " Gb/s = ", Num(rate.cluster_gbps / 8), " GB/s"));
  }
  if (!rate.basis.empty()) {
    sizing.set_arithmetic(absl::StrCat(sizing.arithmetic(), " (", sizing.profile(), ")"));
    sizing.set_basis(absl::StrCat(rate.basis, "."));
  }
}

// Headroom and verdict against the uplink's capacity, checkpoint time and the
// fabric's total rate for comparison.
void SetCapacityFigures(const plan::Plan& plan, bool has_rate, v1::UplinkSizing& sizing) {
  const double capacity = plan.uplink.capacity_gbps;
  const double required = sizing.required_gbps();
  if (capacity > 0 && has_rate) {
    sizing.set_headroom_gbps(capacity - required);
    sizing.set_utilisation(required / capacity);
    sizing.set_verdict(required <= capacity ? v1::UplinkSizing::fits
                                            : v1::UplinkSizing::undersized);
  }
  if (capacity > 0 && plan.uplink.workload.checkpoint_gbytes > 0) {
    sizing.set_checkpoint_seconds(
        TransferSeconds(plan.uplink.workload.checkpoint_gbytes, capacity));
  }
  int rails = 0;
  for (const plan::Node& node : plan.nodes) rails += std::max<int>(1, node.rails.size());
  sizing.set_fabric_gbps(rails * plan.fabric.link_rate_gbps);
}

void AddAdvice(const plan::Plan& plan, v1::UplinkSizing& sizing) {
  const double capacity = plan.uplink.capacity_gbps;
  const double required = sizing.required_gbps();
  if (sizing.verdict() == v1::UplinkSizing::undersized) {
    sizing.add_advice(
        absl::StrCat("The uplink carries ", Num(capacity), " Gb/s but the dataset read rate needs ",
                     Num(required), " Gb/s (", sizing.arithmetic(),
                     "): size the uplink to the read rate (", Num(required / capacity),
                     "x this one), or stage the dataset on local NVMe before training."));
  }
  // The seed's common mistake: an uplink as fast as the fabric when the read
  // rate is a fraction of it.
  const double per_node_fabric = plan.fabric.link_rate_gbps;
  if (sizing.verdict() == v1::UplinkSizing::fits && per_node_fabric > 0 &&
      capacity >= per_node_fabric && capacity >= 4 * required) {
    sizing.add_advice(absl::StrCat(
        "The uplink (", Num(capacity), " Gb/s) is sized like the fabric (", Num(per_node_fabric),
        " Gb/s per rail) while the dataset read rate needs ", Num(required),
        " Gb/s: the right target is the read rate, not the fabric; 4-node clusters have trained "
        "for weeks on LLM token data through a 25 GbE uplink."));
  }
  if (sizing.checkpoint_seconds() > 0) {
    sizing.add_advice(absl::StrCat(
        "One ", Num(plan.uplink.workload.checkpoint_gbytes), " GB checkpoint takes ",
        absl::StrFormat("%.0f", sizing.checkpoint_seconds()), " s at ", Num(capacity),
        " Gb/s (a 70B model's weights are about 140 GB, a checkpoint twice that): plan for the "
        "larger figure."));
  }
}

}  // namespace

v1::UplinkSizing SizeUplink(const plan::Plan& plan) {
  const plan::UplinkWorkload& workload = plan.uplink.workload;
  v1::UplinkSizing sizing;
  sizing.set_capacity_gbps(plan.uplink.capacity_gbps);
  sizing.set_nodes(static_cast<int>(plan.nodes.size()));
  sizing.set_gpus(CountedGpus(plan));
  sizing.set_checkpoint_gbytes(workload.checkpoint_gbytes);
  const ReadRate rate = ResolveReadRate(workload, sizing);
  SetRequiredRate(rate, workload, sizing);
  SetCapacityFigures(plan, rate.known(), sizing);
  AddAdvice(plan, sizing);
  return sizing;
}

double NodeNeedGbps(const plan::Plan& plan, const v1::UplinkSizing& sizing,
                    const plan::Node& node) {
  if (sizing.ingest_gbytes_per_gpu() > 0) {
    const int gpus =
        plan.uplink.workload.gpus_per_node > 0 ? plan.uplink.workload.gpus_per_node : node.gpus;
    return gpus * sizing.ingest_gbytes_per_gpu() * 8;
  }
  if (sizing.required_gbps() > 0 && sizing.nodes() > 0) {
    return sizing.required_gbps() / sizing.nodes();
  }
  return 0;
}

}  // namespace clustercert::controller::uplink
