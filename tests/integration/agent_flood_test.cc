// An unauthenticated peer cannot stop the agent (issue 34): a real node-agent
// with mutual TLS on 127.0.0.1, held to 1,024 open files (soft and hard, so
// it cannot raise them), flooded with thousands of idle TCP connections and
// half-sent TLS handshakes from 127.0.0.2, while a client with the
// controller's certificate calls it; and gzip requests up to a 1 GiB bomb,
// refused before a byte is inflated.
#include <arpa/inet.h>
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "clustercert/v1/node_agent.grpc.pb.h"
#include "common/file_limit.h"
#include "common/tls_files.h"
#include "common/unique_fd.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"
#include "tests/integration/test_pki.h"

namespace clustercert::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kIdleConnections = 3000;
constexpr int kHalfOpenHandshakes = 1000;

// The agent's resident memory in MiB (VmRSS, or VmHWM for its peak).
double MemoryMiB(pid_t pid, const std::string& field) {
  const std::string status = ReadFile("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find(field + ":");
  if (at == std::string::npos) return -1;
  return std::stod(status.substr(at + field.size() + 1)) / 1024.0;
}

// The first bytes of a TLS ClientHello (a handshake record announcing 512
// bytes), and then nothing: the agent's TLS stack waits for the rest.
const unsigned char kPartialClientHello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01,
                                             0xfc, 0x03, 0x03, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};

// A flood from 127.0.0.2: connections that never finish a TLS handshake
// (some never start one, some stop in the middle of the ClientHello), each
// one reopened as soon as the agent closes it, until Stop.
class Flood {
 public:
  Flood(int port, int idle, int half_open) : port_(port), idle_(idle), half_open_(half_open) {}
  ~Flood() { Stop(); }

  void Start() {
    for (int i = 0; i < idle_ + half_open_; ++i) sockets_.push_back(Open(i >= idle_));
    thread_ = std::thread([this] {
      while (!stopping_) Refill();
    });
  }
  void Stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
    sockets_.clear();
  }
  int opened() const { return opened_; }

 private:
  struct Socket {
    UniqueFd fd;
    bool half_open = false;
    bool hello_sent = false;
  };

  Socket Open(bool half_open) {
    Socket socket{UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)),
                  half_open, false};
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
    ::bind(socket.fd.get(), reinterpret_cast<sockaddr*>(&from), sizeof(from));
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port_));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    ::connect(socket.fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to));  // EINPROGRESS
    ++opened_;
    return socket;
  }

  // Sends the partial ClientHello once connected; reopens what the agent
  // closed.
  void Refill() {
    std::vector<pollfd> polled;
    for (const Socket& socket : sockets_) {
      short events = POLLIN | POLLRDHUP;
      if (socket.half_open && !socket.hello_sent) events |= POLLOUT;
      polled.push_back({socket.fd.get(), events, 0});
    }
    if (::poll(polled.data(), polled.size(), 50) <= 0) return;
    for (size_t i = 0; i < polled.size(); ++i) {
      Socket& socket = sockets_[i];
      const short got = polled[i].revents;
      if (got & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) {
        char byte = 0;
        if ((got & (POLLHUP | POLLERR)) || ::recv(socket.fd.get(), &byte, 1, MSG_DONTWAIT) <= 0) {
          socket = Open(socket.half_open);
          continue;
        }
      }
      if ((got & POLLOUT) && !socket.hello_sent) {
        ::send(socket.fd.get(), kPartialClientHello, sizeof(kPartialClientHello), MSG_NOSIGNAL);
        socket.hello_sent = true;
      }
    }
  }

  const int port_;
  const int idle_;
  const int half_open_;
  std::vector<Socket> sockets_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> opened_{0};
};

// ASan keeps up to 256 MiB of freed memory in quarantine, so an ASan
// agent's RSS would measure that (+339 MiB in one flood), not what the flood
// costs it (+70 MiB with 16 MiB). A small quarantine still catches a use of
// what was freed recently; a build without ASan ignores the option.
void SmallAsanQuarantineForTheAgent() {
  const char* options = std::getenv("ASAN_OPTIONS");
  std::string value = options != nullptr ? options : "";
  if (value.find("quarantine_size_mb") != std::string::npos) return;
  value += (value.empty() ? "" : ":") + std::string("quarantine_size_mb=16");
  ::setenv("ASAN_OPTIONS", value.c_str(), 1);
}

class AgentFloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SmallAsanQuarantineForTheAgent();
    dir_ = fs::temp_directory_path() /
           ("clustercert_flood_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    pki_ = TestPki::Make((dir_ / "pki").string(), {"node1=127.0.0.1"});
  }
  void TearDown() override {
    agent_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // node-agent under prlimit: `open_files` soft and hard.
  int StartAgent(int open_files, std::vector<std::string> extra = {}) {
    const std::string port_file = (dir_ / "node1.port").string();
    std::vector<std::string> argv = {"/usr/bin/prlimit",
                                     "--nofile=" + std::to_string(open_files),
                                     NODE_AGENT_BIN,
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--node-name",
                                     "node1",
                                     "--port-file",
                                     port_file,
                                     "--sysfs-root",
                                     std::string(CLUSTERCERT_FIXTURES) + "/sysfs/no-rdma"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    agent_ = std::make_unique<ChildProcess>(argv, (dir_ / "node1").string());
    const int port = WaitForPortFile(port_file);
    EXPECT_NE(port, 0) << agent_->Stderr();
    return port;
  }

  std::unique_ptr<v1::NodeAgent::Stub> ControllerStub(int port) {
    const std::string pki = (dir_ / "pki").string();
    auto material =
        LoadTlsMaterial({pki + "/ca.pem", pki + "/controller.pem", pki + "/controller.key"});
    EXPECT_TRUE(material.ok()) << material.status();
    // A channel of its own each time: a new connection, as a controller that
    // starts during the flood makes.
    grpc::ChannelArguments arguments;
    arguments.SetInt("clustercert.test.channel", ++channels_);
    return v1::NodeAgent::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(port), MutualTlsChannelCredentials(*material), arguments));
  }

  // GetVersion then GetInventory on a new connection; the seconds it took.
  double ControllerCalls(int port, const std::string& when) {
    const auto start = Clock::now();
    auto stub = ControllerStub(port);
    {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::GetVersionResponse response;
      grpc::Status status = stub->GetVersion(&context, v1::GetVersionRequest(), &response);
      EXPECT_TRUE(status.ok()) << when << ": GetVersion: " << status.error_message();
    }
    {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::GetInventoryResponse response;
      grpc::Status status = stub->GetInventory(&context, v1::GetInventoryRequest(), &response);
      EXPECT_TRUE(status.ok()) << when << ": GetInventory: " << status.error_message();
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  fs::path dir_;
  TestPki pki_;
  std::unique_ptr<ChildProcess> agent_;
  int channels_ = 0;
};

TEST_F(AgentFloodTest, ControllerIsAnsweredDuringAndAfterAFloodOfUnauthenticatedConnections) {
  // The test's own connections need descriptors of their own.
  const OpenFileLimit mine = RaiseOpenFileLimit(kIdleConnections + kHalfOpenHandshakes + 512);
  ASSERT_GE(mine.after, uint64_t{kIdleConnections + kHalfOpenHandshakes + 512})
      << "the test needs that many open files (hard limit " << mine.hard << ")";
  const int port = StartAgent(1024, pki_.AgentFlags("node1"));
  ASSERT_NE(port, 0);
  const pid_t pid = agent_->pid();
  const double before_seconds = ControllerCalls(port, "before the flood");
  const double rss_before = MemoryMiB(pid, "VmRSS");

  Flood flood(port, kIdleConnections, kHalfOpenHandshakes);
  const auto started = Clock::now();
  flood.Start();
  // Let the flood fill the agent: more connections than it has descriptors,
  // and as many again reopened after the agent closed them (never, if it
  // stopped accepting).
  const auto filled = Clock::now() + std::chrono::seconds(5);
  while (flood.opened() < 2 * (kIdleConnections + kHalfOpenHandshakes) && Clock::now() < filled) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<double> during;
  double rss_during = 0;
  for (int call = 0; call < 3; ++call) {
    during.push_back(ControllerCalls(port, "during the flood, call " + std::to_string(call)));
    rss_during = std::max(rss_during, MemoryMiB(pid, "VmRSS"));
  }
  const int opened = flood.opened();
  flood.Stop();

  const double after_seconds = ControllerCalls(port, "right after the flood");
  const double rss_after = MemoryMiB(pid, "VmRSS");
  const double rss_peak = MemoryMiB(pid, "VmHWM");
  std::printf(
      "flood: %d connections opened from 127.0.0.2 (%d idle and %d half-open at a time); "
      "controller calls (a new TLS connection, GetVersion, GetInventory) took %.3f s before it, "
      "%.3f s, %.3f s, %.3f s during it, %.3f s right after it; agent RSS "
      "before %.1f MiB, during %.1f MiB, after %.1f MiB, peak %.1f MiB\n",
      opened, kIdleConnections, kHalfOpenHandshakes, before_seconds, during[0], during[1],
      during[2], after_seconds, rss_before, rss_during, rss_after, rss_peak);
  EXPECT_GT(opened, kIdleConnections + kHalfOpenHandshakes);  // the agent closed some
  EXPECT_LT(rss_peak - rss_before, 256) << "the flood must not grow the agent without bound";

  // Said once, with the cap, not once per connection.
  const std::string log = agent_->Stderr();
  size_t summaries = 0;
  for (size_t at = log.find("over the cap of 256"); at != std::string::npos;
       at = log.find("over the cap of 256", at + 1)) {
    ++summaries;
  }
  EXPECT_GE(summaries, 1u) << log;
  const auto flooded_for = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started);
  EXPECT_LE(summaries, 1u + flooded_for.count() / 10)
      << "a line per 10 s at most, not per connection:\n"
      << log;
  EXPECT_EQ(log.find("Failed accept4"), std::string::npos) << log;

  // SIGTERM still ends it, within its stop deadline (10 s).
  const auto stop = Clock::now();
  EXPECT_EQ(agent_->Terminate(15000), 0) << agent_->Stderr();
  EXPECT_LT(Clock::now() - stop, std::chrono::seconds(10));
}

// A gzip message whose whole stream is `blocks` copies of one 1 MiB block of
// 'a' deflated with a full flush (so each compresses to the same ~1 KB),
// framed as gzip with the right CRC: 1,024 blocks are a 1 MB bomb that
// inflates to 1 GiB. Built in milliseconds, without the GiB.
std::string GzipOfRepeatedBlocks(int blocks) {
  const std::string block(1 << 20, 'a');
  z_stream deflater{};
  deflateInit2(&deflater, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
  std::string compressed_block(deflateBound(&deflater, block.size()) + 64, '\0');
  deflater.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(block.data()));
  deflater.avail_in = block.size();
  deflater.next_out = reinterpret_cast<Bytef*>(compressed_block.data());
  deflater.avail_out = compressed_block.size();
  deflate(&deflater, Z_FULL_FLUSH);
  compressed_block.resize(compressed_block.size() - deflater.avail_out);
  std::string end(64, '\0');
  deflater.next_out = reinterpret_cast<Bytef*>(end.data());
  deflater.avail_out = end.size();
  deflate(&deflater, Z_FINISH);
  end.resize(end.size() - deflater.avail_out);
  deflateEnd(&deflater);

  const uLong block_crc = crc32(0, reinterpret_cast<const Bytef*>(block.data()), block.size());
  uLong crc = 0;
  for (int i = 0; i < blocks; ++i)
    crc = i == 0 ? block_crc : crc32_combine(crc, block_crc, block.size());
  std::string gzip("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  for (int i = 0; i < blocks; ++i) gzip += compressed_block;
  gzip += end;
  const uint64_t size = uint64_t{static_cast<uint64_t>(blocks)} << 20;
  for (uint32_t word : {static_cast<uint32_t>(crc), static_cast<uint32_t>(size)}) {
    for (int byte = 0; byte < 4; ++byte) gzip += static_cast<char>((word >> (8 * byte)) & 0xff);
  }
  return gzip;
}

// Sends `gzip` as an already-compressed GetInventory request (grpc-encoding:
// gzip) through gRPC's C API, which can send a message marked compressed
// without compressing it; the call's status code and message.
std::pair<grpc_status_code, std::string> SendCompressed(int port, const std::string& gzip) {
  grpc_init();
  grpc_channel_credentials* credentials = grpc_insecure_credentials_create();
  grpc_channel* channel =
      grpc_channel_create(("127.0.0.1:" + std::to_string(port)).c_str(), credentials, nullptr);
  grpc_channel_credentials_release(credentials);
  grpc_completion_queue* queue = grpc_completion_queue_create_for_next(nullptr);
  const gpr_timespec deadline =
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(30, GPR_TIMESPAN));
  grpc_call* call = grpc_channel_create_call(
      channel, nullptr, GRPC_PROPAGATE_DEFAULTS, queue,
      grpc_slice_from_static_string("/clustercert.v1.NodeAgent/GetInventory"), nullptr, deadline,
      nullptr);
  grpc_metadata encoding{};
  encoding.key = grpc_slice_from_static_string(GRPC_COMPRESSION_REQUEST_ALGORITHM_MD_KEY);
  encoding.value = grpc_slice_from_static_string("gzip");
  grpc_slice payload = grpc_slice_from_copied_buffer(gzip.data(), gzip.size());
  grpc_byte_buffer* message =
      grpc_raw_compressed_byte_buffer_create(&payload, 1, GRPC_COMPRESS_GZIP);
  grpc_slice_unref(payload);
  grpc_metadata_array initial{};
  grpc_metadata_array trailing{};
  grpc_byte_buffer* answer = nullptr;
  grpc_status_code status = GRPC_STATUS_OK;
  grpc_slice details{};
  grpc_op ops[6] = {};
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = 1;
  ops[0].data.send_initial_metadata.metadata = &encoding;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = message;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &answer;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &trailing;
  ops[5].data.recv_status_on_client.status = &status;
  ops[5].data.recv_status_on_client.status_details = &details;
  EXPECT_EQ(grpc_call_start_batch(call, ops, 6, &ops, nullptr), GRPC_CALL_OK);
  const grpc_event event = grpc_completion_queue_next(queue, deadline, nullptr);
  EXPECT_EQ(event.type, GRPC_OP_COMPLETE);
  char* text = grpc_slice_to_c_string(details);
  const std::string refusal = text;
  gpr_free(text);
  grpc_slice_unref(details);
  grpc_byte_buffer_destroy(message);
  if (answer != nullptr) grpc_byte_buffer_destroy(answer);
  grpc_metadata_array_destroy(&initial);
  grpc_metadata_array_destroy(&trailing);
  grpc_call_unref(call);
  grpc_channel_destroy(channel);
  grpc_completion_queue_shutdown(queue);
  while (grpc_completion_queue_next(queue, gpr_inf_future(GPR_CLOCK_REALTIME), nullptr).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(queue);
  grpc_shutdown();
  return {status, refusal};
}

// Issue 34: a 1 MB gzip request inflated to 1 GiB (RSS 1.26 GB) before the
// 4 MiB size check. Compressed requests are refused from their headers: at
// the cap (4 MiB inflated), above it, and the 1 GiB bomb, with no growth.
TEST_F(AgentFloodTest, CompressedRequestsAreRefusedBeforeInflating) {
  const int port = StartAgent(1024, {"--insecure"});
  ASSERT_NE(port, 0);
  const pid_t pid = agent_->pid();
  const double rss_before = MemoryMiB(pid, "VmRSS");
  for (int mib : {4, 64, 1024}) {
    const std::string gzip = GzipOfRepeatedBlocks(mib);
    const auto [status, message] = SendCompressed(port, gzip);
    std::printf("gzip request of %zu bytes inflating to %d MiB: status %d (%s)\n", gzip.size(), mib,
                status, message.c_str());
    EXPECT_EQ(status, GRPC_STATUS_UNIMPLEMENTED) << mib << " MiB: " << message;
    EXPECT_EQ(message, "Compression algorithm 'gzip' is disabled.") << mib << " MiB";
  }
  const double rss_after = MemoryMiB(pid, "VmRSS");
  const double rss_peak = MemoryMiB(pid, "VmHWM");
  std::printf("gzip requests: agent RSS before %.1f MiB, after %.1f MiB, peak %.1f MiB\n",
              rss_before, rss_after, rss_peak);
  EXPECT_LT(rss_peak - rss_before, 64) << "a compressed request was inflated";

  // Uncompressed calls still work.
  auto stub = v1::NodeAgent::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::GetVersionResponse response;
  EXPECT_TRUE(stub->GetVersion(&context, v1::GetVersionRequest(), &response).ok());
}

}  // namespace
}  // namespace clustercert::testing
