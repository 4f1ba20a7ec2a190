#include "controller/pairwise/phase/cell_run.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/counter_deltas.h"
#include "controller/pairwise/phase/counter_reads.h"
#include "controller/pairwise/phase/matrix_judgement.h"

namespace clustercert::controller {
namespace {

constexpr absl::Duration kRunSlack = absl::Seconds(30);
constexpr absl::Duration kProgressCallTimeout = absl::Seconds(1);
constexpr uint64_t kLatencyMessageBytes = 2;  // perftest's latency default
constexpr uint64_t kLatencyIterations = 1000;

const char* EngineName(const plan::Plan& plan) {
  return plan.pairwise.engine == plan::PairwiseEngine::kVerbs ? "verbs" : "tcp";
}

}  // namespace

bool ProgressFromClient(plan::PairwiseEngine engine, const std::string& test) {
  return engine == plan::PairwiseEngine::kVerbs &&
         (absl::StartsWith(test, "write_") || absl::StartsWith(test, "read_"));
}

v1::PairResult CellIdentity(const plan::Plan& plan, const CellJob& job) {
  const TestItem& item = job.item;
  v1::PairResult result;
  result.set_test(item.test);
  result.set_engine(EngineName(plan));
  result.set_memory(item.memory);
  if (item.memory != "host") {
    result.set_gpu(MemoryFor(job.client, item, "client"));
    result.set_server_gpu(MemoryFor(job.server, item, "server"));
  }
  result.set_client(job.client.state->node.name);
  result.set_server(job.server.state->node.name);
  result.set_rail(job.client.device);
  result.set_round(job.round);
  result.set_unit(IsBandwidthTest(item.test) ? "Gb/s" : "us");
  result.set_retest_of(job.retest_of);
  const PlannedClass planned = PlannedClassFor(plan);
  if (planned.traffic_class) result.set_traffic_class(*planned.traffic_class);
  if (planned.service_level) result.set_service_level(*planned.service_level);
  return result;
}

CellRun::CellRun(CallLoop& loop, const plan::Plan& plan, Progress& progress, CellJob job,
                 std::function<void(v1::PairResult)> finished)
    : loop_(loop),
      plan_(plan),
      progress_(progress),
      job_(std::move(job)),
      finished_(std::move(finished)),
      result_(CellIdentity(plan_, job_)) {
  test_id_ = absl::StrCat(result_.client(), " -> ", result_.server());
  if (!result_.rail().empty()) absl::StrAppend(&test_id_, " ", result_.rail());
  absl::StrAppend(&test_id_, " ", job_.item.test, " ", job_.item.memory);
}

void CellRun::Start() {
  if (std::string why = Unrunnable(); !why.empty()) return Finish(why);
  ReadCounters(&client_before_, &server_before_, [self = shared_from_this()] { self->RunTest(); });
}

// Why the cell cannot run at all, or "".
std::string CellRun::Unrunnable() const {
  for (const Side* side : {&job_.client, &job_.server}) {
    const plan::Node& node = side->state->node;
    if (!side->state->reachable) return absl::StrCat(node.name, " is unreachable");
    if (result_.engine() == "tcp" && node.data_ip.empty()) {
      return absl::StrCat(node.name,
                          " has no data_ip in the plan: the tcp engine runs over the data plane");
    }
  }
  return "";
}

v1::PeerTestSpec CellRun::Spec(const Side& side, const char* role) const {
  const TestItem& item = job_.item;
  v1::PeerTestSpec spec;
  spec.set_engine(EngineName(plan_));
  spec.set_test(item.test);
  spec.set_role(role);
  spec.set_device(side.device);
  spec.set_port(1);
  spec.set_gid_index(plan_.fabric.roce.gid_index);
  spec.set_memory(MemoryFor(side, item, role));
  spec.set_data_ip(side.state->node.data_ip);
  spec.set_queue_depth(128);
  spec.set_streams(1);
  spec.set_no_progress_s(absl::ToDoubleSeconds(plan_.pairwise.no_progress));
  ApplyPlannedClass(PlannedClassFor(plan_), spec);
  if (IsBandwidthTest(item.test)) {
    spec.set_streams(static_cast<uint32_t>(plan_.pairwise.streams));
    spec.set_bidirectional(plan_.pairwise.bidirectional);
    spec.set_message_bytes(plan_.pairwise.message_bytes);
    spec.set_duration_s(absl::ToDoubleSeconds(plan_.pairwise.duration));
  } else {
    spec.set_message_bytes(kLatencyMessageBytes);
    spec.set_iterations(kLatencyIterations);
  }
  return spec;
}

// Bandwidth tests run for pairwise.duration_s; latency tests run
// kLatencyIterations ping-pongs, which at the plan's worst allowed latency
// take iterations x 2 x max_latency_us (120 s in the soft-RoCE lab), so their
// deadline grows with that rather than failing a slow but passing path.
absl::Duration CellRun::RunTimeout() const {
  absl::Duration run = plan_.pairwise.duration;
  if (!IsBandwidthTest(job_.item.test)) {
    run = std::max(run, absl::Microseconds(plan_.pairwise.max_latency_us) * 2 *
                            static_cast<double>(kLatencyIterations));
  }
  return run + kRunSlack;
}

void CellRun::ReadCounters(v1::PortCounters* client_out, v1::PortCounters* server_out,
                           std::function<void()> then) {
  ReadCountersOf(loop_, {{&job_.client, client_out}, {&job_.server, server_out}}, std::move(then));
}

void CellRun::RunTest() {
  const BrokeredSide server{job_.server.state->client.get(), job_.server.state->node.name,
                            Spec(job_.server, "server")};
  const BrokeredSide client{job_.client.state->client.get(), job_.client.state->node.name,
                            Spec(job_.client, "client")};
  BrokerEvents events;
  if (IsBandwidthTest(job_.item.test)) {
    const bool from_client = ProgressFromClient(plan_.pairwise.engine, job_.item.test);
    events.running = [self = shared_from_this(), from_client](const std::string& client_id,
                                                              const std::string& server_id) {
      self->counting_ = from_client ? &self->job_.client : &self->job_.server;
      self->counting_endpoint_ = from_client ? client_id : server_id;
    };
    events.runs_answered = [self = shared_from_this()] { self->counting_endpoint_.clear(); };
  }
  events.finished = [self = shared_from_this()](BrokeredRun run) {
    self->TestFinished(std::move(run));
  };
  BrokerDeadlines deadlines;
  deadlines.call = plan_.agents.call_timeout;
  deadlines.run = RunTimeout();
  deadlines.busy_wait = job_.busy_wait;
  keep_alive_ = StartBrokeredTest(loop_, server, client, test_id_, deadlines, std::move(events));
}

void CellRun::KeepAlive() {
  if (keep_alive_) keep_alive_();
}

void CellRun::PollProgress() {
  KeepAlive();
  if (counting_endpoint_.empty() || poll_out_) return;
  v1::GetEndpointProgressRequest request;
  request.set_endpoint_id(counting_endpoint_);
  poll_out_ = true;
  counting_->state->client->GetEndpointProgress(
      request, kProgressCallTimeout,
      loop_.Bind<v1::GetEndpointProgressResponse>(
          [self = shared_from_this()](absl::StatusOr<v1::GetEndpointProgressResponse> answer) {
            self->poll_out_ = false;
            if (answer.ok() && answer->progress().running() && !self->counting_endpoint_.empty()) {
              self->ShowProgress(answer->progress());
            }
          }));
}

void CellRun::ShowProgress(const v1::PeerTestProgress& now) {
  const double seconds = now.seconds() - last_seconds_;
  if (seconds > 0 && now.bytes() >= last_bytes_) {
    progress_.Line(
        "pairwise",
        absl::StrCat(job_.label, test_id_, ": ",
                     absl::StrFormat("%.2f", (now.bytes() - last_bytes_) * 8 / seconds / 1e9),
                     " Gb/s now (", absl::StrFormat("%.0f", now.seconds()), " s)"));
  }
  last_bytes_ = now.bytes();
  last_seconds_ = now.seconds();
}

void CellRun::TestFinished(BrokeredRun run) {
  if (run.has_client_result) *result_.mutable_client_result() = std::move(run.client_result);
  if (run.has_server_result) *result_.mutable_server_result() = std::move(run.server_result);
  // A run that failed or stalled returned no result: each end's path MTU as
  // measured at connect stands in, so mtu.path judges the cell on evidence.
  if (!result_.client_result().has_path_mtu() && run.client_path_mtu) {
    *result_.mutable_client_result()->mutable_path_mtu() = std::move(*run.client_path_mtu);
  }
  if (!result_.server_result().has_path_mtu() && run.server_path_mtu) {
    *result_.mutable_server_result()->mutable_path_mtu() = std::move(*run.server_path_mtu);
  }
  result_.set_control_plane(run.control_plane);
  ReadCounters(&client_after_, &server_after_, [self = shared_from_this(), error = run.error] {
    self->RecordCounters(self->job_.client, self->client_before_, self->client_after_,
                         self->result_.mutable_client_counters());
    self->RecordCounters(self->job_.server, self->server_before_, self->server_after_,
                         self->result_.mutable_server_counters());
    if (error.empty()) self->RecordBer();
    self->Finish(error);
  });
}

// Keeps the deltas that moved and turns the worrying ones into sentences.
void CellRun::RecordCounters(const Side& side, const v1::PortCounters& before,
                             const v1::PortCounters& after,
                             google::protobuf::RepeatedPtrField<v1::CounterDelta>* out) {
  std::vector<v1::CounterDelta> moved;
  for (auto& delta : counters::DiffCounters(before, after)) {
    if (delta.delta() != 0 || !delta.note().empty()) moved.push_back(delta);
  }
  counters::ConcernContext context;
  context.device = side.device;
  context.port = side.device.empty() ? 0 : 1;
  context.rdma_priority =
      plan_.fabric.type == plan::FabricType::kRoce ? plan_.fabric.roce.pfc_priority : -1;
  for (const auto& concern : counters::CounterConcerns(moved, context)) {
    result_.add_counter_concerns(absl::StrCat(side.state->node.name, " ", concern));
  }
  for (auto& delta : moved) *out->Add() = std::move(delta);
}

// Each receiving end's LinkBer over a bandwidth cell's traffic: the server
// for write_bw and send_bw, the client for read_bw (it reads the server's
// memory), both with pairwise.bidirectional. Its time is what that end
// measured (the sender's when the receiver reported none).
void CellRun::RecordBer() {
  if (!IsBandwidthTest(job_.item.test)) return;
  const bool bidirectional = plan_.pairwise.bidirectional;
  const bool client_receives = bidirectional || job_.item.test == "read_bw";
  const bool server_receives = bidirectional || job_.item.test != "read_bw";
  const double client_seconds = result_.client_result().bandwidth().seconds();
  const double server_seconds = result_.server_result().bandwidth().seconds();
  if (server_receives) {
    *result_.add_ber() = pairwise::MeasureLinkBer(
        ReceivingPortOf(job_.server, &server_before_, &server_after_,
                        server_seconds > 0 ? server_seconds : client_seconds));
  }
  if (client_receives) {
    *result_.add_ber() = pairwise::MeasureLinkBer(
        ReceivingPortOf(job_.client, &client_before_, &client_after_,
                        client_seconds > 0 ? client_seconds : server_seconds));
  }
}

pairwise::ReceivingPort CellRun::ReceivingPortOf(const Side& side, const v1::PortCounters* before,
                                                 const v1::PortCounters* after,
                                                 double seconds) const {
  pairwise::ReceivingPort port;
  port.node = side.state->node.name;
  // On fabric.type ethernet (and the tcp engine) the rail is the data netdev.
  port.rail = side.device.empty() ? side.netdev : side.device;
  port.netdev = side.netdev;
  port.infiniband = plan_.fabric.type == plan::FabricType::kInfiniband;
  port.before = before;
  port.after = after;
  port.line_rate_gbps = job_.line_rate_gbps;
  // A NaN or negative figure from a hostile agent bounds nothing.
  port.seconds = std::isfinite(seconds) && seconds > 0 ? seconds : 0;
  return port;
}

// The cell's value (perftest's figure: the receiver's bandwidth, the sum of
// both directions with -b, the client's typical latency) and its verdict.
void CellRun::Finish(const std::string& error) {
  result_.set_ok(error.empty());
  result_.set_error(error);
  if (error.empty()) {
    const bool bandwidth = IsBandwidthTest(job_.item.test);
    const double received = result_.server_result().bandwidth().avg_gbps();
    const double sent = result_.client_result().bandwidth().avg_gbps();
    if (bandwidth && plan_.pairwise.bidirectional) {
      result_.set_value(received + sent);
    } else if (bandwidth) {
      result_.set_value(received > 0 ? received : sent);
    } else {
      result_.set_value(result_.client_result().latency().typical_us());
    }
  }
  result_.set_line_rate_gbps(job_.line_rate_gbps);
  *result_.mutable_verdict() = JudgeCell(plan_, result_);
  finished_(std::move(result_));
}

}  // namespace clustercert::controller
