#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/process/command_runner.h"

namespace clustercert::agent::inventory {

// Which FRR the agent asks: the host's default instance, or the one started
// with `-N <pathspace>` (one FRR per network namespace, as in the lab). The
// agent's --frr-pathspace flag fills it, validated as [A-Za-z0-9_-]{1,32}.
struct FrrOptions {
  std::string pathspace;
};

// Reads FRR's BGP state for a routed (BGP unnumbered) fabric: the neighbours
// with their state and prefix counts, the router-id and AS, and the prefixes
// this node originates. Only the three fixed commands below ever reach vtysh
// (argv, no shell), each with a 5 s deadline and at most 512 KiB read.
//
// FRR absent (no vtysh) or not routing (bgpd not running, no `router bgp`)
// is an answer, not an error: frr_present / instance_present stay false and
// `reason` says why. A vtysh that hangs, fails otherwise or prints what is
// not FRR's JSON leaves an Unknown ("neighbors", "originated_prefixes")
// naming the command and what it printed.
class FrrCollector {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(5);
  static constexpr char kSummaryCommand[] = "show bgp vrf default summary json";
  static constexpr char kOriginatedIpv4Command[] =
      "show bgp vrf default ipv4 unicast regexp ^$ json";
  static constexpr char kOriginatedIpv6Command[] =
      "show bgp vrf default ipv6 unicast regexp ^$ json";

  // `runner` must outlive the collector.
  FrrCollector(process::CommandRunner& runner, FrrOptions options);

  v1::BgpState Collect() const;

  // The argv for one of the commands above: vtysh [-N PATHSPACE] -c COMMAND.
  std::vector<std::string> Argv(absl::string_view command) const;

 private:
  // "vtysh -N lab1 -c 'show bgp ...'", for Unknown paths and messages.
  std::string CommandText(absl::string_view command) const;
  // vtysh's stdout when it exited 0. NotFound when vtysh is not installed,
  // FailedPrecondition when bgpd is not running, another code otherwise.
  absl::StatusOr<std::string> Vtysh(absl::string_view command) const;
  // Each fills its part of `state`; false when the summary says FRR is not
  // there to ask further.
  bool FillNeighbors(v1::BgpState& state) const;
  void FillOriginated(v1::BgpState& state, absl::string_view command) const;

  process::CommandRunner& runner_;
  FrrOptions options_;
};

}  // namespace clustercert::agent::inventory
