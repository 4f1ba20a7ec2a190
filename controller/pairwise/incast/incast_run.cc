#include "controller/pairwise/incast/incast_run.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/counter_deltas.h"
#include "controller/pairwise/dcqcn_verdict.h"
#include "controller/pairwise/incast_verdict.h"
#include "controller/pairwise/phase/counter_reads.h"

namespace clustercert::controller {
namespace {

constexpr absl::Duration kRunSlack = absl::Seconds(30);
constexpr absl::Duration kTickPeriod = absl::Seconds(1);

const char* EngineName(const plan::Plan& plan) {
  return plan.pairwise.engine == plan::PairwiseEngine::kVerbs ? "verbs" : "tcp";
}

std::string Senders(const v1::IncastResult& round) {
  std::string names;
  for (const auto& sender : round.senders()) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", sender.node());
  }
  return names;
}

std::string Where(const v1::IncastResult& round) {
  std::string where = absl::StrCat(Senders(round), " -> ", round.receiver());
  if (!round.rail().empty()) absl::StrAppend(&where, " ", round.rail());
  return where;
}

// The deltas that moved, or that carry a note (a reset, a counter read on
// one side only): what the verdicts and a reader need, not the zeros. The
// DCQCN counters are kept at zero too: pause frames with no ECN mark and no
// CNP is a finding only when the port has those counters (JudgeDcqcn).
std::vector<v1::CounterDelta> Moved(const v1::PortCounters& before, const v1::PortCounters& after) {
  std::vector<v1::CounterDelta> moved;
  for (auto& delta : counters::DiffCounters(before, after)) {
    if (delta.delta() != 0 || !delta.note().empty() || pairwise::IsDcqcnCounter(delta.name())) {
      moved.push_back(std::move(delta));
    }
  }
  return moved;
}

}  // namespace

v1::IncastResult IncastIdentity(const plan::Plan& plan, const IncastJob& job) {
  v1::IncastResult result;
  result.set_receiver(job.receiver.state->node.name);
  result.set_rail(job.receiver.device);
  result.set_engine(EngineName(plan));
  result.set_test(kIncastTest);
  result.set_round(static_cast<uint32_t>(job.round));
  for (const Side& side : job.senders) {
    v1::IncastSender* sender = result.add_senders();
    sender->set_node(side.state->node.name);
    sender->set_rail(side.device);
  }
  result.set_line_rate_gbps(job.line_rate_gbps);
  const PlannedClass planned = PlannedClassFor(plan);
  if (planned.traffic_class) result.set_traffic_class(*planned.traffic_class);
  if (planned.service_level) result.set_service_level(*planned.service_level);
  return result;
}

std::string IncastShareGroup(const IncastJob& job) { return absl::StrCat("incast-", job.round); }

IncastRun::IncastRun(CallLoop& loop, const plan::Plan& plan, IncastJob job,
                     std::function<void(v1::IncastResult)> finished)
    : loop_(loop),
      plan_(plan),
      job_(std::move(job)),
      finished_(std::move(finished)),
      result_(IncastIdentity(plan_, job_)) {}

void IncastRun::Start() {
  if (std::string why = Unrunnable(); !why.empty()) return Finish(why);
  ReadCounters(&receiver_before_, &senders_before_,
               [self = shared_from_this()] { self->StartTests(); });
}

// Why the round cannot run at all, or "".
std::string IncastRun::Unrunnable() const {
  if (job_.senders.empty()) return absl::StrCat(result_.receiver(), " has no sender");
  std::vector<const Side*> ends = {&job_.receiver};
  for (const Side& sender : job_.senders) ends.push_back(&sender);
  for (const Side* side : ends) {
    const plan::Node& node = side->state->node;
    if (!side->state->reachable) return absl::StrCat(node.name, " is unreachable");
    if (result_.engine() == "tcp" && node.data_ip.empty()) {
      return absl::StrCat(node.name,
                          " has no data_ip in the plan: the tcp engine runs over the data plane");
    }
  }
  return "";
}

// The pairwise cells' bandwidth spec (CellRun), on host memory and one way:
// the round measures the receiver's port under k writers, not the memory.
v1::PeerTestSpec IncastRun::Spec(const Side& side, const char* role) const {
  v1::PeerTestSpec spec;
  spec.set_engine(EngineName(plan_));
  spec.set_test(kIncastTest);
  spec.set_role(role);
  spec.set_device(side.device);
  spec.set_port(1);
  spec.set_gid_index(plan_.fabric.roce.gid_index);
  spec.set_memory("host");
  spec.set_data_ip(side.state->node.data_ip);
  spec.set_queue_depth(128);
  spec.set_streams(static_cast<uint32_t>(plan_.pairwise.streams));
  spec.set_message_bytes(plan_.pairwise.message_bytes);
  spec.set_duration_s(absl::ToDoubleSeconds(plan_.pairwise.duration));
  spec.set_no_progress_s(absl::ToDoubleSeconds(plan_.pairwise.no_progress));
  ApplyPlannedClass(PlannedClassFor(plan_), spec);
  return spec;
}

void IncastRun::ReadCounters(v1::PortCounters* receiver_out,
                             std::vector<v1::PortCounters>* senders_out,
                             std::function<void()> then) {
  senders_out->assign(job_.senders.size(), v1::PortCounters());
  std::vector<CounterRead> reads = {{&job_.receiver, receiver_out}};
  for (size_t i = 0; i < job_.senders.size(); ++i) {
    reads.emplace_back(&job_.senders[i], &(*senders_out)[i]);
  }
  ReadCountersOf(loop_, reads, std::move(then));
}

// Every sender's test at once, each a brokered test of its own into the
// receiver; the receiver's ends share its device through the round's group.
void IncastRun::StartTests() {
  const std::string group = IncastShareGroup(job_);
  tests_out_ = job_.senders.size();
  BrokerDeadlines deadlines;
  deadlines.call = plan_.agents.call_timeout;
  deadlines.run = plan_.pairwise.duration + kRunSlack;
  for (size_t i = 0; i < job_.senders.size(); ++i) {
    const Side& sender = job_.senders[i];
    const BrokeredSide server{job_.receiver.state->client.get(), job_.receiver.state->node.name,
                              Spec(job_.receiver, "server"), group};
    const BrokeredSide client{sender.state->client.get(), sender.state->node.name,
                              Spec(sender, "client")};
    BrokerEvents events;
    events.finished = [self = shared_from_this(), i](BrokeredRun run) {
      self->TestFinished(i, std::move(run));
    };
    const std::string test_id =
        absl::StrCat("incast ", job_.round, "/", job_.rounds, " ", sender.state->node.name, " -> ",
                     result_.receiver(), result_.rail().empty() ? "" : " ", result_.rail());
    keep_alives_.push_back(
        StartBrokeredTest(loop_, server, client, test_id, deadlines, std::move(events)));
  }
}

void IncastRun::KeepAlive() {
  for (const auto& keep_alive : keep_alives_) keep_alive();
}

// A sender's figure as a pair cell takes it (CellRun::Finish): the
// receiver's bandwidth, else the sender's own (an RDMA write's passive
// receiver counts nothing).
void IncastRun::TestFinished(size_t index, BrokeredRun run) {
  v1::IncastSender& sender = *result_.mutable_senders(static_cast<int>(index));
  if (run.has_client_result) *sender.mutable_client_result() = std::move(run.client_result);
  if (run.has_server_result) *sender.mutable_server_result() = std::move(run.server_result);
  sender.set_ok(run.error.empty());
  sender.set_error(run.error);
  sender.set_control_plane(run.control_plane);
  if (sender.ok()) {
    const double received = sender.server_result().bandwidth().avg_gbps();
    sender.set_gbps(received > 0 ? received : sender.client_result().bandwidth().avg_gbps());
  }
  if (--tests_out_ > 0) return;
  keep_alives_.clear();
  ReadCounters(&receiver_after_, &senders_after_, [self = shared_from_this()] {
    for (auto& delta : Moved(self->receiver_before_, self->receiver_after_)) {
      *self->result_.add_receiver_counters() = std::move(delta);
    }
    for (size_t i = 0; i < self->job_.senders.size(); ++i) {
      v1::IncastSender& end = *self->result_.mutable_senders(static_cast<int>(i));
      for (auto& delta : Moved(self->senders_before_[i], self->senders_after_[i])) {
        *end.add_counters() = std::move(delta);
      }
    }
    self->Finish("");
  });
}

void IncastRun::Finish(const std::string& error) {
  result_.set_error(error);
  pairwise::SummarizeIncast(result_);
  finished_(std::move(result_));
}

std::string IncastRoundLine(const v1::IncastResult& round, int rounds) {
  std::string line = absl::StrCat("incast ", round.round(), "/", rounds, ": ", Where(round), ": ");
  if (!round.error().empty()) return absl::StrCat(line, "error: ", round.error());
  absl::StrAppend(&line, absl::StrFormat("%.1f Gb/s", round.aggregate_gbps()));
  if (round.line_rate_gbps() > 0) {
    absl::StrAppend(&line, absl::StrFormat(" of %.4g (%.0f %%)", round.line_rate_gbps(),
                                           100 * round.aggregate_gbps() / round.line_rate_gbps()));
  } else {
    absl::StrAppend(&line, " (line rate unknown)");
  }
  absl::StrAppend(&line, absl::StrFormat(", fairness %.2f", round.fairness()));
  for (const auto& sender : round.senders()) {
    if (!sender.ok()) absl::StrAppend(&line, "; ", sender.node(), " failed: ", sender.error());
  }
  return line;
}

IncastRoundsOutcome RunIncastRounds(const plan::Plan& plan, Progress& progress,
                                    const std::vector<IncastJob>& jobs,
                                    const std::function<bool()>& stopping) {
  IncastRoundsOutcome outcome;
  CallLoop loop;
  for (const IncastJob& job : jobs) {
    if (stopping()) break;
    std::optional<v1::IncastResult> finished;
    auto run = std::make_shared<IncastRun>(
        loop, plan, job, [&finished](v1::IncastResult round) { finished = std::move(round); });
    loop.Post([run] { run->Start(); });
    loop.RunUntil([&finished] { return finished.has_value(); }, kTickPeriod,
                  [run] { run->KeepAlive(); });
    progress.Line("pairwise", IncastRoundLine(*finished, job.rounds));
    for (auto& finding : pairwise::JudgeIncast(plan, *finished)) {
      outcome.checks.push_back(std::move(finding));
    }
    outcome.rounds.push_back(*std::move(finished));
  }
  loop.Drain();  // late keep-alive answers, before the loop goes
  return outcome;
}

}  // namespace clustercert::controller
