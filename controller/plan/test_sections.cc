#include "controller/plan/test_sections.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/uplink_target.h"
#include "common/worker_env.h"
#include "sweep/worker_options.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kSizeRule =
    "a byte count: a whole number, optionally with a binary suffix K, M or G (8, 64K, 8G)";

// A list of distinct values from `allowed`; nullopt when the list is wrong.
std::optional<std::vector<std::string>> ReadChoiceList(FieldReader& reader, const YamlField& field,
                                                       const std::vector<std::string>& allowed) {
  const std::string rule =
      absl::StrCat("a non-empty list of distinct values from ", absl::StrJoin(allowed, ", "));
  std::optional<std::vector<YamlField>> items = reader.Items(field, rule);
  if (!items.has_value()) return std::nullopt;
  if (items->empty()) {
    reader.Reject(field, rule);
    return std::nullopt;
  }
  std::vector<std::string> values;
  bool ok = true;
  for (const YamlField& item : *items) {
    std::optional<std::string> value = reader.Enum(item, allowed);
    if (!value.has_value()) {
      ok = false;
    } else if (std::find(values.begin(), values.end(), *value) != values.end()) {
      reader.Report(item, absl::StrCat(item.path, " is ", *value, ", already listed in ",
                                       field.path, "; list each value once."));
      ok = false;
    } else {
      values.push_back(*value);
    }
  }
  if (!ok) return std::nullopt;
  return values;
}

// An absolute directory of plain components: letters, digits and
// _ . + - @, no "." or ".." component. mpirun gets it as argv (never a
// shell) and sends it on to the remote nodes, so it stays a plain path.
bool IsPlainAbsoluteDirectory(absl::string_view path) {
  if (path.size() < 2 || path.size() > 1024 || path[0] != '/') return false;
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '+' &&
          c != '-' && c != '@') {
        return false;
      }
    }
  }
  return true;
}

// The directory the pre-format-7 key `nccl_tests_binary` (the all_reduce_perf
// executable, when mpirun ran all_reduce only) names: its directory when it
// is a path, none when it is the bare name (found on PATH as before).
// Another executable cannot say where the other operations' binaries are.
std::optional<std::string> DirectoryOfAllReduceBinary(const std::string& binary) {
  constexpr absl::string_view kName = "all_reduce_perf";
  if (binary == kName) return std::string();
  const size_t slash = binary.rfind('/');
  if (slash == std::string::npos || slash == 0 || binary.substr(slash + 1) != kName) {
    return std::nullopt;
  }
  std::string dir = binary.substr(0, slash);
  if (!IsPlainAbsoluteDirectory(dir)) return std::nullopt;
  return dir;
}

// collectives.nccl_tests_dir. The single-binary key it replaced still reads
// (plans and the plans embedded in older certificates use it) when it names
// all_reduce_perf: the binaries are then looked for beside it.
void ParseNcclTestsDir(MapReader& collectives, Collectives* out) {
  constexpr absl::string_view kDirRule =
      "an absolute directory holding nccl-tests' binaries (all_reduce_perf, all_gather_perf, "
      "...), written with letters, digits and _ . + - @ and no '.' or '..' component, e.g. "
      "/opt/nccl-tests/build (launcher mpirun)";
  FieldReader& reader = *collectives.reader();
  std::optional<YamlField> field = collectives.Get("nccl_tests_dir");
  if (std::optional<YamlField> old = collectives.Get("nccl_tests_binary")) {
    std::optional<std::string> dir;
    if (old->value.IsScalar()) dir = DirectoryOfAllReduceBinary(old->value.Scalar());
    if (field.has_value() || !dir.has_value()) {
      reader.Report(*old,
                    absl::StrCat(old->path,
                                 field.has_value() ? " and collectives.nccl_tests_dir are both set"
                                                   : " must name all_reduce_perf",
                                 ": launcher mpirun runs one nccl-tests binary per "
                                 "operation from one directory; replace it with "
                                 "collectives.nccl_tests_dir set to the directory holding "
                                 "them (e.g. /opt/nccl-tests/build)."));
      return;
    }
    out->nccl_tests_dir = *dir;
  }
  if (!field.has_value()) return;
  if (!field->value.IsScalar() || !IsPlainAbsoluteDirectory(field->value.Scalar())) {
    reader.Reject(*field, kDirRule);
    return;
  }
  out->nccl_tests_dir = field->value.Scalar();
}

void ParseSizes(MapReader& collectives, SizeSweep* sizes) {
  std::optional<MapReader> section = collectives.Map(
      "sizes", "a map with min, max and factor (e.g. {min: 8, max: 8G, factor: 2})");
  if (!section.has_value()) return;
  std::optional<YamlField> min_field = section->Get("min");
  std::optional<YamlField> max_field = section->Get("max");
  // The agent refuses a sweep past sweep::kMaxSweepBytes before it starts
  // a worker; the plan check says so first, at the line.
  const std::string rule = absl::StrCat(kSizeRule, ", at least 1 and at most 32G");
  const bool min_ok = section->ByteSize("min", 1, sweep::kMaxSweepBytes, rule, &sizes->min_bytes);
  const bool max_ok = section->ByteSize("max", 1, sweep::kMaxSweepBytes, rule, &sizes->max_bytes);
  section->Int("factor", 2, sweep::kMaxSweepFactor,
               "an integer from 2 to 1024 (each size is the previous one times factor)",
               &sizes->factor);
  const bool min_fine = min_ok || !min_field.has_value();
  const bool max_fine = max_ok || !max_field.has_value();
  if (min_fine && max_fine && sizes->min_bytes > sizes->max_bytes) {
    const YamlField& at = max_field.has_value() ? *max_field : *min_field;
    const std::string max_text = max_field.has_value() ? max_field->value.Scalar() : "8G";
    const std::string min_text = min_field.has_value() ? min_field->value.Scalar() : "8";
    section->reader()->Report(
        at, absl::StrCat(section->PathOf("min"), " is ", min_text, " but ", section->PathOf("max"),
                         " is ", max_text, max_field.has_value() ? "" : " (the default)",
                         "; min must not be larger than max."));
  }
  section->Finish();
}

bool IsEnvName(const std::string& name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// env: variables the collective workers take (common/worker_env.h: an exact
// allow-list of NCCL, gloo, CUDA and OpenMP variables, none of which names a
// path, a library or a file), each value a scalar.
void ParseEnv(MapReader& collectives, std::map<std::string, std::string>* env) {
  constexpr absl::string_view kEnvRule =
      "a map of environment variables to values (e.g. {NCCL_IB_GID_INDEX: 3})";
  std::optional<YamlField> field = collectives.Get("env");
  if (!field.has_value() || field->value.IsNull()) return;
  FieldReader& reader = *collectives.reader();
  if (!field->value.IsMap()) {
    reader.Reject(*field, kEnvRule);
    return;
  }
  for (auto it = field->value.begin(); it != field->value.end(); ++it) {
    const YamlNode key = it->first;
    const YamlNode value = it->second;
    const SourceLocation key_at = reader.Locate(key.Mark());
    const std::string name = key.IsScalar() ? key.Scalar() : "";
    const std::string path = absl::StrCat(field->path, ".", name);
    if (!IsEnvName(name)) {
      reader.ReportAt(key_at, path,
                      absl::StrCat(field->path, " has the key ", name.empty() ? "(not text)" : name,
                                   "; variable names are letters, digits and '_', not starting "
                                   "with a digit (e.g. NCCL_IB_HCA)."));
      continue;
    }
    if (absl::Status allowed = CheckWorkerEnv(name, ""); !allowed.ok()) {
      reader.ReportAt(key_at, path, absl::StrCat(path, ": ", allowed.message(), "."));
      continue;
    }
    const bool empty = !value.IsDefined() || value.IsNull();
    YamlField entry{value, path, empty ? key_at : reader.Locate(value.Mark())};
    reader.Record(entry);
    if (env->count(name) != 0) {
      reader.Report(entry, absl::StrCat(path,
                                        " is given twice; a key may appear only once in a "
                                        "map."));
      continue;
    }
    std::optional<std::string> text =
        reader.String(entry, "a single value: text or a number (e.g. \"mlx5_0,mlx5_1\" or 3)",
                      /*allow_empty=*/true);
    if (!text.has_value()) continue;
    if (absl::Status allowed = CheckWorkerEnv(name, *text); !allowed.ok()) {
      reader.Report(entry, absl::StrCat(path, ": ", allowed.message(), "."));
      continue;
    }
    (*env)[name] = *text;
  }
}

// A target's keys as written; which apply depends on its type.
struct TargetKeys {
  std::optional<YamlField> node;
  std::optional<YamlField> agent;
  std::optional<YamlField> data_ip;
  std::optional<YamlField> url;
  std::optional<YamlField> address;
};

// A key of another type's target is an error naming the type it belongs to.
void RefuseForeignKeys(FieldReader& reader, MapReader& entry, const TargetKeys& keys,
                       const std::string& type) {
  struct KeyOfType {
    const char* key;
    const char* type;
    const std::optional<YamlField>* field;
  };
  const KeyOfType kKeys[] = {{"node", "agent", &keys.node},
                             {"agent", "agent", &keys.agent},
                             {"data_ip", "agent", &keys.data_ip},
                             {"url", "http", &keys.url},
                             {"address", "tcp", &keys.address}};
  for (const KeyOfType& key : kKeys) {
    if (type.empty() || !key.field->has_value() || type == key.type) continue;
    reader.ReportAt(
        *entry.KeyLocation(key.key), entry.PathOf(key.key),
        absl::StrCat(entry.PathOf(key.key), " does not apply to a target of type ", type, "; ",
                     key.key, " belongs to targets of type ", key.type, "."));
  }
}

// The keys a target of its type cannot do without.
void RequireKeysOfType(FieldReader& reader, MapReader& entry, const YamlField& item,
                       const TargetKeys& keys, const std::string& type) {
  auto require = [&](const char* key, const std::optional<YamlField>& field,
                     absl::string_view needs) {
    if (field.has_value()) return;
    reader.ReportAt(item.at, entry.PathOf(key),
                    absl::StrCat(entry.PathOf(key), " is missing; a target of type ", type,
                                 " needs ", needs, "."));
  };
  if (type == "agent") {
    if (keys.node.has_value() && (keys.agent.has_value() || keys.data_ip.has_value())) {
      reader.ReportAt(*entry.KeyLocation("node"), entry.PathOf("node"),
                      absl::StrCat(entry.PathOf("node"),
                                   " and agent/data_ip both name the sink; give node (a plan "
                                   "node) or agent and data_ip (a node-agent outside the plan's "
                                   "nodes), not both."));
    } else if (!keys.node.has_value()) {
      require("agent", keys.agent,
              "node (a plan node) or agent (host:port of a node-agent, e.g. on a storage host) "
              "with data_ip");
      if (keys.agent.has_value()) {
        require("data_ip", keys.data_ip, "data_ip (the address its flows go to)");
      }
    }
  }
  if (type == "http") require("url", keys.url, "url");
  if (type == "tcp") require("address", keys.address, "address");
}

// An agent target's sink: a plan node, or a node-agent and its data address.
void ParseAgentSink(FieldReader& reader, const TargetKeys& keys, UplinkTarget* target) {
  if (keys.node.has_value()) {
    if (std::optional<std::string> value =
            reader.Name(*keys.node, "the name of a node in the plan's nodes list")) {
      target->node = *value;
    }
  }
  if (keys.agent.has_value()) {
    constexpr absl::string_view kAgentRule =
        "host:port of a node-agent with a port from 1 to 65535 (e.g. 192.168.100.50:7070)";
    if (reader.Endpoint(*keys.agent, kAgentRule).has_value()) {
      target->agent = keys.agent->value.Scalar();
    }
  }
  if (keys.data_ip.has_value()) {
    constexpr absl::string_view kDataIpRule =
        "a literal IPv4 or IPv6 address on the sink's data plane (e.g. 10.10.9.1)";
    if (auto value = reader.IpAddress(*keys.data_ip, kDataIpRule)) target->data_ip = *value;
  }
}

// An http target's URL and a tcp target's address. The agent refuses by the
// same rules (common/uplink_target.h); here they come with the plan's line
// and column.
void ParseUrlOrAddress(FieldReader& reader, const TargetKeys& keys, UplinkTarget* target) {
  if (target->type == "http" && keys.url.has_value()) {
    constexpr absl::string_view kUrlRule =
        "a URL starting with http:// or https://, with no user@, one host (a DNS name or an IP "
        "address) and a port from 1 to 65535 (e.g. http://10.10.9.1:9000/bucket/shard.tar)";
    std::optional<std::string> value = reader.String(*keys.url, kUrlRule);
    if (value.has_value()) {
      if (absl::StatusOr<UplinkUrl> parsed = ParseUplinkUrl(*value); !parsed.ok()) {
        reader.Reject(*keys.url, kUrlRule, Sentence(parsed.status().message()));
      } else {
        target->url = *value;
      }
    }
  }
  if (target->type == "tcp" && keys.address.has_value()) {
    constexpr absl::string_view kAddressRule =
        "a literal IP address and port of a TCP sink, the port from 1 to 65535 (e.g. "
        "10.10.9.1:5201 or [fd00::9]:5201)";
    std::optional<std::string> value = reader.String(*keys.address, kAddressRule);
    if (value.has_value()) {
      if (absl::StatusOr<HostPort> parsed = ParseUplinkTcpAddress(*value); !parsed.ok()) {
        reader.Reject(*keys.address, kAddressRule, Sentence(parsed.status().message()));
      } else {
        target->address = *value;
      }
    }
  }
}

void ParseTarget(FieldReader& reader, const YamlField& item, UplinkTarget* target) {
  MapReader entry(&reader, item);
  std::optional<YamlField> type = entry.Require("type", "one of agent, http, tcp");
  const TargetKeys keys{entry.Get("node"), entry.Get("agent"), entry.Get("data_ip"),
                        entry.Get("url"), entry.Get("address")};
  if (type.has_value()) {
    if (std::optional<std::string> value = reader.Enum(*type, {"agent", "http", "tcp"})) {
      target->type = *value;
    }
  }
  entry.String("name", "a short name for reports (e.g. storage1)", &target->name);
  RefuseForeignKeys(reader, entry, keys, target->type);
  RequireKeysOfType(reader, entry, item, keys, target->type);
  if (target->type == "agent") ParseAgentSink(reader, keys, target);
  ParseUrlOrAddress(reader, keys, target);
  if (target->name.empty()) {
    target->name = !target->node.empty()    ? target->node
                   : !target->agent.empty() ? target->agent
                   : !target->url.empty()   ? target->url
                                            : target->address;
  }
  entry.Finish();
}

void ParseTargets(MapReader& uplink, std::vector<UplinkTarget>* targets) {
  constexpr absl::string_view kTargetsRule =
      "a list of targets, each a map with type (agent, http or tcp) and its node, url or "
      "address";
  std::optional<YamlField> field = uplink.Get("targets");
  if (!field.has_value()) return;
  FieldReader& reader = *uplink.reader();
  std::optional<std::vector<YamlField>> items = reader.Items(*field, kTargetsRule);
  if (!items.has_value()) return;
  for (const YamlField& item : *items) {
    if (!item.value.IsMap()) {
      reader.Reject(item, "a map with type (agent, http or tcp) and its node, url or address");
      continue;
    }
    UplinkTarget target;
    ParseTarget(reader, item, &target);
    targets->push_back(target);
  }
}

void ParseFlows(MapReader& uplink, std::vector<int>* flows) {
  static const std::string kFlowsRule =
      absl::StrCat("a non-empty list of flow counts (at most ", kMaxUplinkFlowCounts,
                   "), each an integer from 1 to ", kMaxUplinkFlows, " (e.g. [1, 8])");
  static const std::string kFlowRule =
      absl::StrCat("an integer from 1 to ", kMaxUplinkFlows,
                   " (parallel flows in one run; the agent opens no more)");
  std::optional<YamlField> field = uplink.Get("flows");
  if (!field.has_value()) return;
  FieldReader& reader = *uplink.reader();
  std::optional<std::vector<YamlField>> items = reader.Items(*field, kFlowsRule);
  if (!items.has_value()) return;
  if (items->empty() || items->size() > static_cast<size_t>(kMaxUplinkFlowCounts)) {
    reader.Reject(*field, kFlowsRule,
                  items->empty() ? "" : absl::StrCat("It has ", items->size(), " entries."));
    return;
  }
  std::vector<int> values;
  for (const YamlField& item : *items) {
    std::optional<int64_t> value = reader.Int(item, 1, kMaxUplinkFlows, kFlowRule);
    if (value.has_value()) values.push_back(static_cast<int>(*value));
  }
  if (values.size() == items->size()) *flows = values;
}

void ParseIncast(MapReader& pairwise, Incast* incast) {
  std::optional<MapReader> section = pairwise.Map(
      "incast", "a map with senders, max_rounds, min_fraction_of_line_rate and min_fairness");
  if (!section.has_value()) return;
  incast->enabled = true;
  section->Int("senders", 2, 64,
               "an integer from 2 to 64 (k: how many nodes write to one receiver at once; a "
               "smaller cluster uses all its other nodes)",
               &incast->senders);
  section->Int("max_rounds", 1, 4096,
               "an integer from 1 to 4096 (receivers tested in turn, in node order; bounds the "
               "run at one duration_s each)",
               &incast->max_rounds);
  section->Number("min_fraction_of_line_rate", NumberRange::PositiveAtMost(1),
                  "a number above 0 and at most 1 (the share of the receiver's line rate the "
                  "senders together must reach; e.g. 0.90)",
                  &incast->min_fraction_of_line_rate);
  section->Number("min_fairness", NumberRange::PositiveAtMost(1),
                  "a number above 0 and at most 1 (the slowest sender's rate over the "
                  "fastest's; e.g. 0.5)",
                  &incast->min_fairness);
  section->Finish();
}

}  // namespace

void ParsePairwiseSection(MapReader& top, Pairwise* pairwise) {
  std::optional<MapReader> section = top.Map(
      "pairwise", "a map with engine, pattern, tests, memory, duration_s and the thresholds");
  if (!section.has_value()) return;
  pairwise->enabled = true;
  FieldReader& reader = *section->reader();
  std::string engine;
  if (section->Enum("engine", {"verbs", "tcp"}, &engine)) {
    pairwise->engine = engine == "verbs" ? PairwiseEngine::kVerbs : PairwiseEngine::kTcp;
  }
  std::string pattern;
  if (section->Enum("pattern", {"all-pairs", "ring", "k-batch", "leaf"}, &pattern)) {
    pairwise->pattern = pattern == "all-pairs" ? PairwisePattern::kAllPairs
                        : pattern == "ring"    ? PairwisePattern::kRing
                        : pattern == "leaf"    ? PairwisePattern::kLeaf
                                               : PairwisePattern::kKBatch;
  }
  section->Int("k", 2, 1024,
               "an integer from 2 to 1024 (for pattern k-batch: each node is paired with the k "
               "nodes after it around the ring)",
               &pairwise->k);
  section->Duration("budget_minutes", NumberRange::PositiveAtMost(10080),
                    "a positive number of minutes, at most 10080 (the controller then picks the "
                    "pattern that fits: all-pairs, else k-batch with the largest k, else ring)",
                    absl::Minutes(1), &pairwise->budget);
  if (std::optional<YamlField> tests = section->Get("tests")) {
    if (auto values = ReadChoiceList(
            reader, *tests,
            {"write_bw", "send_bw", "read_bw", "write_lat", "send_lat", "read_lat"})) {
      pairwise->tests = *values;
    }
  }
  if (std::optional<YamlField> memory = section->Get("memory")) {
    if (auto values = ReadChoiceList(reader, *memory, {"host", "cuda"})) {
      pairwise->memory = *values;
    }
  }
  section->Duration("duration_s", NumberRange::PositiveAtMost(3600),
                    "a positive number of seconds, at most 3600 (per test; e.g. 10)",
                    absl::Seconds(1), &pairwise->duration);
  section->Duration("no_progress_s", NumberRange::PositiveAtMost(3600),
                    "a positive number of seconds, at most 3600 (a cell that moves no data for "
                    "this long fails as no progress; e.g. 10)",
                    absl::Seconds(1), &pairwise->no_progress);
  section->ByteSize("message_bytes", 1, int64_t{64} << 20,
                    absl::StrCat(kSizeRule, ", from 1 to 64M (perftest's -s; e.g. 8M)"),
                    &pairwise->message_bytes);
  section->Int("streams", 1, 64,
               "an integer from 1 to 64 (parallel QPs for verbs, TCP connections for tcp, per "
               "bandwidth test)",
               &pairwise->streams);
  section->Int("pairs_at_once", 1, 65536,
               "an integer from 1 to 65536 (at most this many pairs of a round run at the same "
               "time; 1 measures each pair alone)",
               &pairwise->pairs_at_once);
  section->Bool("bidirectional", &pairwise->bidirectional);
  std::string directions;
  if (section->Enum("directions", {"both", "one"}, &directions)) {
    pairwise->both_directions = directions == "both";
  }
  section->Int("cuda_gpus", 0, 64,
               "an integer from 0 to 64 (cuda memory: GPUs per node to test, each with the rail "
               "nearest it; 0 means every GPU)",
               &pairwise->cuda_gpus);
  section->Number("min_fraction_of_line_rate", NumberRange::PositiveAtMost(1),
                  "a number above 0 and at most 1 (the share of link_rate_gbps a pair must "
                  "reach; e.g. 0.80)",
                  &pairwise->min_fraction_of_line_rate);
  section->Number("max_latency_us", NumberRange::Positive(),
                  "a positive number of microseconds (e.g. 5 for RoCE through one switch)",
                  &pairwise->max_latency_us);
  section->Number("max_retries_per_gb", NumberRange::NonNegative(),
                  "a number of at least 0 (retransmission or out-of-sequence counter rises per GB "
                  "a pair moves before its cell warns; e.g. 1)",
                  &pairwise->max_retries_per_gb);
  section->Number("max_raw_ber", NumberRange::PositiveAtMost(1),
                  "a number above 0 and at most 1 (the raw, pre-FEC bit error rate a receiving "
                  "port may show under load before its cell fails; e.g. 2.4e-4)",
                  &pairwise->max_raw_ber);
  ParseIncast(*section, &pairwise->incast);
  section->Finish();
}

void ParseCollectivesSection(MapReader& top, Collectives* collectives) {
  std::optional<MapReader> section =
      top.Map("collectives", "a map with backend, sizes, ranks_per_node, min_busbw_gbytes and env");
  if (!section.has_value()) return;
  collectives->enabled = true;
  std::string backend;
  if (section->Enum("backend", {"nccl", "gloo"}, &backend)) {
    collectives->backend = backend == "nccl" ? CollectiveBackend::kNccl : CollectiveBackend::kGloo;
  }
  ParseSizes(*section, &collectives->sizes);
  // At most sweep::kMaxRanksPerNode, as the agent enforces.
  section->Int("ranks_per_node", 0, sweep::kMaxRanksPerNode,
               "an integer from 0 to 16 (ranks on each node; 0 means one per GPU; nccl never "
               "gets more than the node's GPUs)",
               &collectives->ranks_per_node);
  section->Number("min_busbw_gbytes", NumberRange::NonNegative(),
                  "a number of GB/s, 0 or more (the allreduce busbw floor at large sizes; 0 "
                  "lets it follow the rails: min_fraction_of_fabric x rails x link rate / 8)",
                  &collectives->min_busbw_gbytes);
  section->Number("min_fraction_of_fabric", NumberRange::PositiveAtMost(1),
                  "a number above 0 and at most 1 (the share of the rails' line rate / 8 the "
                  "busbw between nodes must reach when min_busbw_gbytes is not set; e.g. 0.8)",
                  &collectives->min_fraction_of_fabric);
  std::string one_node;
  if (section->Enum("one_node", {"every-node", "first-node"}, &one_node)) {
    collectives->one_node_every_node = one_node == "every-node";
  }
  section->Number("min_fraction_of_median", NumberRange::PositiveAtMost(1),
                  "a number above 0 and at most 1 (a node's 1-node busbw below this share of "
                  "the nodes' median fails; e.g. 0.8)",
                  &collectives->min_fraction_of_median);
  ParseEnv(*section, &collectives->env);
  std::string launcher;
  if (section->Enum("launcher", {"agents", "mpirun"}, &launcher)) {
    collectives->launcher =
        launcher == "agents" ? CollectiveLauncher::kAgents : CollectiveLauncher::kMpirun;
  }
  std::string transport;
  if (section->Enum("transport", {"auto", "tcp", "ibverbs"}, &transport)) {
    collectives->transport = transport == "auto"  ? GlooTransport::kAuto
                             : transport == "tcp" ? GlooTransport::kTcp
                                                  : GlooTransport::kIbverbs;
  }
  section->Int("warmup_iters", 0, sweep::kMaxWarmupIters,
               "an integer from 0 to 1000 (untimed operations per size; nccl-tests -w)",
               &collectives->warmup_iters);
  section->Int("iters", 1, sweep::kMaxIters,
               "an integer from 1 to 100000 (timed operations per size; nccl-tests -n)",
               &collectives->iters);
  section->Duration("timeout_s", NumberRange::PositiveAtMost(sweep::kMaxTimeoutS),
                    "a positive number of seconds, at most 86400 (per scope; ranks still running "
                    "then are killed)",
                    absl::Seconds(1), &collectives->timeout);
  if (std::optional<YamlField> scopes = section->Get("scopes")) {
    if (auto values =
            ReadChoiceList(*section->reader(), *scopes, {"1-node", "2-node", "all-nodes"})) {
      collectives->scopes = *values;
    }
  }
  if (std::optional<YamlField> operations = section->Get("operations")) {
    if (auto values = ReadChoiceList(*section->reader(), *operations,
                                     {"all_reduce", "all_gather", "reduce_scatter", "alltoall"})) {
      collectives->operations = *values;
    }
  }
  section->String("hostfile", "a path to an OpenMPI hostfile (launcher mpirun)",
                  &collectives->hostfile);
  ParseNcclTestsDir(*section, collectives);
  section->Finish();
}

void ParseUplinkSection(MapReader& top, Uplink* uplink) {
  std::optional<MapReader> section =
      top.Map("uplink", "a map with capacity_gbps, workload, targets and flows");
  if (!section.has_value()) return;
  uplink->enabled = true;
  section->Number("capacity_gbps", NumberRange::Positive(),
                  "a positive number of Gb/s (the cluster's uplink to storage/ingest, e.g. 25)",
                  &uplink->capacity_gbps);
  if (std::optional<MapReader> workload =
          section->Map("workload",
                       "a map with profile or ingest_gbytes_per_gpu or cluster_ingest_gbps, "
                       "gpus_per_node and checkpoint_gbytes")) {
    workload->Enum("profile", {"image-video", "llm-pretrain", "fine-tune"},
                   &uplink->workload.profile);
    workload->Int("gpus_per_node", 0, 64,
                  "an integer from 0 to 64 (0: each node's gpus from the nodes list)",
                  &uplink->workload.gpus_per_node);
    workload->Number("ingest_gbytes_per_gpu", NumberRange::NonNegative(),
                     "a number of GB/s, 0 or more (data each GPU reads while training; about 1 "
                     "for image/video models)",
                     &uplink->workload.ingest_gbytes_per_gpu);
    workload->Number("cluster_ingest_gbps", NumberRange::NonNegative(),
                     "a number of Gb/s, 0 or more (the whole cluster's read rate, e.g. 4 for LLM "
                     "pre-training on tokens)",
                     &uplink->workload.cluster_ingest_gbps);
    workload->Number("checkpoint_gbytes", NumberRange::NonNegative(),
                     "a number of GB, 0 or more (the size of one checkpoint)",
                     &uplink->workload.checkpoint_gbytes);
    workload->Finish();
  }
  ParseTargets(*section, &uplink->targets);
  ParseFlows(*section, &uplink->flows);
  static const std::string kDurationRule =
      absl::StrCat("a positive number of seconds, at most ", kMaxUplinkDurationS,
                   " (per node, target and flow count; the agent runs no longer; e.g. 5)");
  section->Duration("duration_s", NumberRange::PositiveAtMost(kMaxUplinkDurationS), kDurationRule,
                    absl::Seconds(1), &uplink->duration);
  section->Finish();
}

}  // namespace clustercert::controller::plan
