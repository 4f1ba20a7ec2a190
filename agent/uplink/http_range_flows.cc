#include "agent/uplink/http_range_flows.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/printable.h"
#include "common/uplink_target.h"

namespace clustercert::agent::uplink {
namespace {

// Bodies land in curl's receive buffer (one per flow) and are dropped. A
// large buffer keeps the per-callback cost small at tens of Gb/s; the
// buffers of all flows together stay within kAllBuffersBytes.
constexpr long kMaxReceiveBufferBytes = 512L * 1024;
constexpr long kMinReceiveBufferBytes = 64L * 1024;
constexpr long kAllBuffersBytes = 64L * 1024 * 1024;
// The size probe's bound when the caller gives no deadline: nothing here may
// hang on a server that accepts and never answers.
constexpr absl::Duration kProbeTimeout = absl::Seconds(15);
// How often a worker looks at the clock and at the other workers' failures.
constexpr absl::Duration kPollSlice = absl::Milliseconds(50);
// The only protocols libcurl may speak, for the URL and (were a redirect
// ever followed) its target: file://, gopher://, dict:// and the rest would
// let a caller read this host's files or write raw bytes to internal services.
constexpr char kProtocols[] = "http,https";

struct EasyCleanup {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
using EasyHandle = std::unique_ptr<CURL, EasyCleanup>;

absl::Status CurlGlobalInit() {
  // A function-local static is initialised once, even with threads racing.
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code == CURLE_OK) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("libcurl failed to initialise (",
                                          curl_easy_strerror(code),
                                          "): check the libcurl and TLS libraries on the node"));
}

// Milliseconds for curl and poll timeouts: rounded up, at least 1 (0 means
// "no timeout" to curl).
long TimeoutMs(absl::Duration left) {
  const int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)));
  return static_cast<long>(std::clamp<int64_t>(ms, 1, int64_t{1} << 30));
}

// The status line and Content-Range of the latest response; a redirect's
// next response replaces them.
struct ResponseHead {
  std::string status_line;  // "HTTP/1.1 404 Not Found"
  std::string content_range;

  void Reset() {
    status_line.clear();
    content_range.clear();
  }
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* head = static_cast<ResponseHead*>(user);
  const absl::string_view line = absl::StripAsciiWhitespace(absl::string_view(data, size * count));
  constexpr absl::string_view kContentRange = "content-range:";
  if (absl::StartsWith(line, "HTTP/")) {
    head->status_line = std::string(line);
    head->content_range.clear();
  } else if (absl::StartsWithIgnoreCase(line, kContentRange)) {
    head->content_range =
        std::string(absl::StripAsciiWhitespace(line.substr(kContentRange.size())));
  }
  return size * count;
}

// "404 Not Found" from the status line; HTTP/2 has no reason phrase, so
// common codes get theirs from here.
std::string StatusText(long code, absl::string_view status_line) {
  const size_t space = status_line.find(' ');
  if (space != absl::string_view::npos) {
    const absl::string_view rest = absl::StripAsciiWhitespace(status_line.substr(space + 1));
    if (rest.find(' ') != absl::string_view::npos) return std::string(rest);
  }
  static constexpr std::pair<long, const char*> kReasons[] = {{200, "OK"},
                                                              {206, "Partial Content"},
                                                              {400, "Bad Request"},
                                                              {401, "Unauthorized"},
                                                              {403, "Forbidden"},
                                                              {404, "Not Found"},
                                                              {410, "Gone"},
                                                              {416, "Range Not Satisfiable"},
                                                              {429, "Too Many Requests"},
                                                              {500, "Internal Server Error"},
                                                              {502, "Bad Gateway"},
                                                              {503, "Service Unavailable"},
                                                              {504, "Gateway Timeout"}};
  for (const auto& [known, reason] : kReasons) {
    if (known == code) return absl::StrCat(code, " ", reason);
  }
  return absl::StrCat(code);
}

// `what` is "GET <url>" plus whatever places the request.
absl::Status HttpStatusError(absl::string_view what, long code, absl::string_view status_line) {
  const std::string answered = absl::StrCat(what, " answered ", StatusText(code, status_line));
  if (code >= 300 && code < 400) {
    // Following would let a server the plan names send the agent anywhere.
    return absl::FailedPreconditionError(
        absl::StrCat(answered,
                     ", a redirect, which the agent does not follow: give the final URL of the "
                     "object in uplink.targets[].url"));
  }
  if (code == 404 || code == 410) {
    return absl::NotFoundError(
        absl::StrCat(answered, ": check the object path on the storage server"));
  }
  if (code == 401 || code == 403) {
    return absl::PermissionDeniedError(absl::StrCat(
        answered, ": the agent sends no credentials; make the object readable without them"));
  }
  if (code == 429 || code >= 500) {
    return absl::UnavailableError(absl::StrCat(
        answered,
        ": the storage server is overloaded or failing; check its error log, then retry"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      answered, ": expected 200 OK or 206 Partial Content; check the URL and the server"));
}

absl::Status CurlError(absl::string_view what, CURLcode code, const char* error,
                       absl::Duration allowed) {
  const std::string why = error[0] != '\0' ? std::string(absl::StripAsciiWhitespace(error))
                                           : std::string(curl_easy_strerror(code));
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      return absl::UnavailableError(
          absl::StrCat(what, " could not connect (", why,
                       "): start the HTTP server on the storage target or fix the target URL"));
    case CURLE_COULDNT_RESOLVE_HOST:
      return absl::UnavailableError(
          absl::StrCat(what, " could not resolve the host (", why,
                       "): use a literal IP in the URL or fix the node's DNS"));
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(absl::StrCat(
          what, " did not finish within ",
          absl::FormatDuration(absl::Trunc(allowed, absl::Milliseconds(1))), " (", why,
          "): check that the storage server is reachable from this node (routes, firewall) and "
          "not overloaded, or give the step a longer deadline"));
    case CURLE_INTERFACE_FAILED:
      return absl::InvalidArgumentError(
          absl::StrCat(what, " could not bind its local side (", why,
                       "): bind_ip must be an address configured on this node"));
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return absl::InvalidArgumentError(absl::StrCat(what, " is not a URL libcurl can fetch (", why,
                                                     "): give an http:// or https:// URL"));
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CIPHER:
      return absl::FailedPreconditionError(
          absl::StrCat(what, " failed its TLS handshake (", why,
                       "): check the server's certificate and the node's CA bundle"));
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return absl::UnavailableError(absl::StrCat(
          what, " lost its connection (", why,
          "): check the storage server's error log and the network path from this node"));
    default:
      return absl::InternalError(
          absl::StrCat(what, " failed in libcurl (", why,
                       "): rerun with a plain http:// URL to narrow it down"));
  }
}

// Why the last connection of a handle was refused before it was made: a
// DNS name may resolve to an address the URL rules refuse as a literal.
struct AddressGuard {
  std::string refused;  // CheckDestination's clause; empty when none was refused
};

curl_socket_t OpenCheckedSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* guard = static_cast<AddressGuard*>(user);
  if (purpose == CURLSOCKTYPE_IPCXN) {
    if (absl::Status allowed = CheckDestination(&address->addr); !allowed.ok()) {
      guard->refused = std::string(allowed.message());
      return CURL_SOCKET_BAD;
    }
  }
  // What libcurl's own opener does, plus close-on-exec: the agent starts
  // worker processes, which must not inherit flows' sockets.
  const int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  return fd < 0 ? CURL_SOCKET_BAD : fd;
}

// A failed transfer's status; a connection the guard refused says so.
absl::Status TransferError(absl::string_view what, CURLcode code, const char* error,
                           const AddressGuard& guard, absl::Duration allowed) {
  if (code == CURLE_COULDNT_CONNECT && !guard.refused.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " was not connected: the host name resolved to an address the agent refuses (",
        guard.refused, "); fix uplink.targets[].url or the name's DNS record"));
  }
  return CurlError(what, code, error, allowed);
}

// Options every handle shares. `error` (CURL_ERROR_SIZE bytes) and `guard`
// must outlive the handle's transfers.
absl::Status Configure(CURL* easy, const std::string& url, const std::string& interface,
                       long buffer_bytes, char* error, AddressGuard* guard) {
  CURLcode code = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (code == CURLE_OK) code = curl_easy_setopt(easy, option, value);
  };
  set(CURLOPT_URL, url.c_str());
  // Flows run on worker threads: no SIGALRM-based DNS timeouts.
  set(CURLOPT_NOSIGNAL, 1L);
  // Cleanup must not wait for a resolver thread stuck on a dead DNS server.
  set(CURLOPT_QUICK_EXIT, 1L);
  set(CURLOPT_ERRORBUFFER, error);
  // RunHttpRangeFlows refused other schemes already; libcurl enforces it again.
  set(CURLOPT_PROTOCOLS_STR, kProtocols);
  set(CURLOPT_REDIR_PROTOCOLS_STR, kProtocols);
  // A 3xx is answered with an error (HttpStatusError), never followed.
  set(CURLOPT_FOLLOWLOCATION, 0L);
  set(CURLOPT_OPENSOCKETFUNCTION, OpenCheckedSocket);
  set(CURLOPT_OPENSOCKETDATA, guard);
  set(CURLOPT_BUFFERSIZE, buffer_bytes);
  // "host!" makes curl take the text as an address, never an interface name.
  if (!interface.empty()) set(CURLOPT_INTERFACE, interface.c_str());
  if (code == CURLE_OK) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("libcurl refused the options for GET ", url, " (", curl_easy_strerror(code),
                   "): check the URL and bind_ip; libcurl 7.85 or newer is needed"));
}

absl::StatusOr<EasyHandle> NewEasy() {
  EasyHandle easy(curl_easy_init());
  if (easy == nullptr) {
    return absl::ResourceExhaustedError(
        "libcurl could not create a transfer handle: the agent is out of memory");
  }
  return easy;
}

// What the size probe learned from one answer.
struct ProbeAnswer {
  long code = 0;
  ResponseHead head;
  curl_off_t content_length = -1;  // -1: not sent
};

struct ProbeBody {
  uint64_t bytes = 0;
  bool cut = false;
};

size_t OnProbeBody(char*, size_t size, size_t count, void* user) {
  auto* body = static_cast<ProbeBody*>(user);
  body->bytes += size * count;
  // A 206 to bytes=0-0 carries one byte. More is a whole object (Range
  // ignored) or an error page; the headers are all the probe needs.
  if (body->bytes > 1) {
    body->cut = true;
    return 0;
  }
  return size * count;
}

absl::StatusOr<ProbeAnswer> Probe(const std::string& url, const std::string& interface, bool head,
                                  absl::Time deadline) {
  const std::string what = absl::StrCat(head ? "HEAD " : "GET ", url);
  const absl::Duration allowed = deadline - absl::Now();
  if (allowed <= absl::ZeroDuration()) {
    return absl::DeadlineExceededError(absl::StrCat(
        what, " could not start: the deadline passed; give the step a longer deadline"));
  }
  absl::StatusOr<EasyHandle> easy = NewEasy();
  if (!easy.ok()) return easy.status();
  char error[CURL_ERROR_SIZE] = {};
  AddressGuard guard;
  if (absl::Status configured =
          Configure(easy->get(), url, interface, kMinReceiveBufferBytes, error, &guard);
      !configured.ok()) {
    return configured;
  }
  ProbeAnswer answer;
  ProbeBody body;
  CURL* handle = easy->get();
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &answer.head);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, OnProbeBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, TimeoutMs(allowed));
  if (head) {
    curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(handle, CURLOPT_RANGE, "0-0");
  }
  const CURLcode code = curl_easy_perform(handle);
  if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && body.cut)) {
    return TransferError(what, code, error, guard, allowed);
  }
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &answer.code);
  curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &answer.content_length);
  return answer;
}

absl::Status EmptyObject(const std::string& url) {
  return absl::FailedPreconditionError(
      absl::StrCat("GET ", url,
                   " found a zero-length object, which cannot measure throughput: point the "
                   "uplink target at a large object (e.g. a 1 GiB shard)"));
}

// `what` is "GET <url>" plus whatever places the request.
absl::Status IgnoresRange(absl::string_view what, int flows) {
  return absl::FailedPreconditionError(
      absl::StrCat(what,
                   " answered 200 OK with the whole object to a Range request: the server ignores "
                   "Range requests, so ",
                   flows,
                   " flows cannot each read a part: enable range requests "
                   "(nginx does by default for static files) or measure with 1 flow"));
}

// The object's size and whether the server serves parts of it.
struct ObjectShape {
  uint64_t bytes = 0;
  bool size_known = true;
};

absl::StatusOr<ObjectShape> LearnObject(const std::string& url, const std::string& interface,
                                        int flows, absl::Time deadline) {
  // One `Range: bytes=0-0` GET gives the size (Content-Range) and proves
  // ranges work; HEAD would give only the size, and some servers send no
  // Content-Length on HEAD.
  absl::StatusOr<ProbeAnswer> probe = Probe(url, interface, /*head=*/false, deadline);
  if (!probe.ok()) return probe.status();
  const std::string what = absl::StrCat("GET ", url, " (Range: bytes=0-0)");
  if (probe->code == 206) {
    absl::StatusOr<uint64_t> total = ParseContentRangeTotal(probe->head.content_range);
    if (!total.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, " answered 206 with Content-Range \"", probe->head.content_range,
                       "\", which does not give the object's size (", total.status().message(),
                       "): serve the object as a static file"));
    }
    if (*total == 0) return EmptyObject(url);
    return ObjectShape{*total, true};
  }
  if (probe->code == 416) {
    absl::StatusOr<uint64_t> total = ParseContentRangeTotal(probe->head.content_range);
    if (total.ok() && *total == 0) return EmptyObject(url);
    return HttpStatusError(what, probe->code, probe->head.status_line);
  }
  if (probe->code != 200) return HttpStatusError(what, probe->code, probe->head.status_line);
  // 200: the server ignored the Range header (nginx also does so for an
  // empty file).
  if (probe->content_length == 0) return EmptyObject(url);
  if (flows > 1) return IgnoresRange(absl::StrCat("GET ", url), flows);
  curl_off_t length = probe->content_length;
  if (length < 0) {
    absl::StatusOr<ProbeAnswer> head = Probe(url, interface, /*head=*/true, deadline);
    if (head.ok() && head->code == 200) length = head->content_length;
    if (length == 0) return EmptyObject(url);
  }
  // Size still unknown: the one flow reads the whole object, unranged.
  if (length < 0) return ObjectShape{0, false};
  return ObjectShape{static_cast<uint64_t>(length), true};
}

// One flow: its part of the object, its handle and what it received.
struct HttpFlow {
  std::optional<ByteRange> range;  // none: the whole object, no Range header
  bool whole_object = false;       // the range is the whole object, so a 200 is fine
  std::string what;                // "GET <url> (flow 2 of 4, bytes 0-99)"
  EasyHandle easy;
  char error[CURL_ERROR_SIZE] = {};
  AddressGuard guard;
  ResponseHead head;
  std::atomic<uint64_t>* moved = nullptr;
  SteadyClock::time_point end;  // the duration's end: the body callback stops here
  bool ended = false;           // the callback cut a transfer at `end`
  uint64_t bytes = 0;
  uint32_t requests = 0;
  FlowWindow window;
};

size_t OnFlowBody(char*, size_t size, size_t count, void* user) {
  auto* flow = static_cast<HttpFlow*>(user);
  const size_t received = size * count;
  const SteadyClock::time_point now = SteadyClock::now();
  if (flow->bytes == 0) flow->window.first = now;
  flow->window.last = now;
  flow->bytes += received;
  if (flow->moved != nullptr) flow->moved->fetch_add(received, std::memory_order_relaxed);
  // One curl_multi_perform can read for a long time on a fast link; cutting
  // the transfer here keeps the duration exact. These bytes arrived, so they
  // count.
  if (now >= flow->end) {
    flow->ended = true;
    return 0;
  }
  return received;
}

absl::Status PrepareFlow(HttpFlow& flow, const std::string& url, const std::string& interface,
                         long buffer_bytes) {
  absl::StatusOr<EasyHandle> easy = NewEasy();
  if (!easy.ok()) return easy.status();
  flow.easy = *std::move(easy);
  if (absl::Status configured =
          Configure(flow.easy.get(), url, interface, buffer_bytes, flow.error, &flow.guard);
      !configured.ok()) {
    return configured;
  }
  CURL* handle = flow.easy.get();
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &flow.head);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, OnFlowBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &flow);
  curl_easy_setopt(handle, CURLOPT_PRIVATE, &flow);
  if (flow.range) {
    const std::string text = absl::StrCat(flow.range->first, "-", flow.range->last);
    curl_easy_setopt(handle, CURLOPT_RANGE, text.c_str());  // curl copies it
  }
  return absl::OkStatus();
}

// Whether the answer to one of the flow's GETs is one to keep reading.
absl::Status CheckAnswer(HttpFlow& flow, CURLcode result, int flow_count, absl::Duration duration) {
  if (result != CURLE_OK) {
    return TransferError(flow.what, result, flow.error, flow.guard, duration);
  }
  long code = 0;
  curl_easy_getinfo(flow.easy.get(), CURLINFO_RESPONSE_CODE, &code);
  if (code == 206) return absl::OkStatus();
  if (code == 200) {
    if (!flow.range || flow.whole_object) return absl::OkStatus();
    return IgnoresRange(flow.what, flow_count);
  }
  return HttpStatusError(flow.what, code, flow.head.status_line);
}

// A multi handle and the transfers attached to it; detaches them before the
// multi goes, as libcurl requires.
class MultiSession {
 public:
  MultiSession() : multi_(curl_multi_init()) {
    // One flow, one connection: never multiplex flows onto one HTTP/2
    // connection, or N flows would measure one TCP flow.
    if (multi_ != nullptr) curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_NOTHING);
  }
  ~MultiSession() {
    for (CURL* easy : attached_) curl_multi_remove_handle(multi_, easy);
    if (multi_ != nullptr) curl_multi_cleanup(multi_);
  }
  MultiSession(const MultiSession&) = delete;
  MultiSession& operator=(const MultiSession&) = delete;

  CURLM* get() const { return multi_; }

  absl::Status Start(HttpFlow& flow) {
    flow.head.Reset();
    const CURLMcode code = curl_multi_add_handle(multi_, flow.easy.get());
    if (code != CURLM_OK) return MultiError(flow.what, code);
    attached_.push_back(flow.easy.get());
    ++flow.requests;
    return absl::OkStatus();
  }

  void Detach(CURL* easy) {
    curl_multi_remove_handle(multi_, easy);
    attached_.erase(std::find(attached_.begin(), attached_.end(), easy));
  }

  static absl::Status MultiError(absl::string_view what, CURLMcode code) {
    return absl::InternalError(absl::StrCat(what, " failed in libcurl's multi interface (",
                                            curl_multi_strerror(code),
                                            "): rerun; report it if it repeats"));
  }

 private:
  CURLM* multi_;
  std::vector<CURL*> attached_;
};

// Runs `flows` until `end`, re-requesting each flow's range as it completes.
// Returns early (OK) when `stop` turns true because another worker failed.
absl::Status RunWorker(const std::vector<HttpFlow*>& flows, SteadyClock::time_point end,
                       int flow_count, absl::Duration duration, const std::atomic<bool>& stop) {
  MultiSession multi;
  if (multi.get() == nullptr) {
    return absl::ResourceExhaustedError(
        "libcurl could not create a multi handle: the agent is out of memory");
  }
  for (HttpFlow* flow : flows) {
    if (absl::Status started = multi.Start(*flow); !started.ok()) return started;
  }
  while (!stop.load(std::memory_order_relaxed)) {
    const absl::Duration left = absl::FromChrono(end - SteadyClock::now());
    // The duration ends transfers mid-body: what arrived so far counts.
    if (left <= absl::ZeroDuration()) break;
    int running = 0;
    CURLMcode code = curl_multi_perform(multi.get(), &running);
    if (code != CURLM_OK) return MultiSession::MultiError(flows.front()->what, code);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      // The message dies with the detach below; copy what it says first.
      CURL* easy = message->easy_handle;
      const CURLcode result = message->data.result;
      char* owner = nullptr;
      curl_easy_getinfo(easy, CURLINFO_PRIVATE, &owner);
      HttpFlow& flow = *reinterpret_cast<HttpFlow*>(owner);
      multi.Detach(easy);
      if (flow.ended) continue;  // cut at the end of the duration: done
      if (absl::Status answer = CheckAnswer(flow, result, flow_count, duration); !answer.ok()) {
        return answer;
      }
      // Same handle again: libcurl reuses the kept-alive connection.
      if (absl::Status started = multi.Start(flow); !started.ok()) return started;
    }
    code = curl_multi_poll(multi.get(), nullptr, 0,
                           static_cast<int>(TimeoutMs(std::min(left, kPollSlice))), nullptr);
    if (code != CURLM_OK) return MultiSession::MultiError(flows.front()->what, code);
  }
  return absl::OkStatus();
}

std::string Plural(uint64_t count, absl::string_view one, absl::string_view many) {
  return absl::StrCat(count, " ", count == 1 ? one : many);
}

using HttpFlows = std::vector<std::unique_ptr<HttpFlow>>;

// Refuses what must not reach libcurl and a spec that cannot finish in time.
absl::Status CheckTarget(const std::string& url, const FlowSpec& spec, absl::string_view what) {
  // Before libcurl sees it: libcurl would fetch file://, gopher:// and more.
  if (absl::StatusOr<UplinkUrl> parsed = ParseUplinkUrl(url); !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "uplink http target \"", PrintableText(url, 256), "\" is refused: ",
        parsed.status().message(), "; give an http:// or https:// URL in uplink.targets[].url"));
  }
  if (absl::Status valid = ValidateFlowSpec(spec, url); !valid.ok()) return valid;
  if (absl::Status fits = CheckDurationFits(spec, absl::Now(), what); !fits.ok()) return fits;
  return CurlGlobalInit();
}

// One flow per range of a sized object; one unranged flow otherwise.
HttpFlows SplitIntoFlows(const ObjectShape& shape, int flows_asked) {
  HttpFlows flows;
  if (!shape.size_known) {
    flows.push_back(std::make_unique<HttpFlow>());
    return flows;
  }
  for (const ByteRange& range : SplitRanges(shape.bytes, flows_asked)) {
    auto flow = std::make_unique<HttpFlow>();
    flow->range = range;
    flow->whole_object = range.first == 0 && range.size() == shape.bytes;
    flows.push_back(std::move(flow));
  }
  return flows;
}

absl::Status PrepareFlows(const HttpFlows& flows, const std::string& url,
                          const std::string& interface, std::atomic<uint64_t>* moved) {
  const int flow_count = static_cast<int>(flows.size());
  const long buffer_bytes =
      std::clamp(kAllBuffersBytes / flow_count, kMinReceiveBufferBytes, kMaxReceiveBufferBytes);
  for (int i = 0; i < flow_count; ++i) {
    HttpFlow& flow = *flows[i];
    flow.moved = moved;
    flow.what = absl::StrCat("GET ", url, " (flow ", i + 1, " of ", flow_count);
    if (flow.range) {
      absl::StrAppend(&flow.what, ", bytes ", flow.range->first, "-", flow.range->last);
    }
    absl::StrAppend(&flow.what, ")");
    if (absl::Status prepared = PrepareFlow(flow, url, interface, buffer_bytes); !prepared.ok()) {
      return prepared;
    }
  }
  return absl::OkStatus();
}

// Runs every flow for `duration` from now, spread over the worker threads.
absl::Status RunFlowsFor(const HttpFlows& flows, absl::Duration duration) {
  const int flow_count = static_cast<int>(flows.size());
  const SteadyClock::time_point end = SteadyClock::now() + absl::ToChronoNanoseconds(duration);
  for (const std::unique_ptr<HttpFlow>& flow : flows) flow->end = end;
  std::vector<HttpFlow*> running;
  for (const std::unique_ptr<HttpFlow>& flow : flows) running.push_back(flow.get());
  std::atomic<bool> stop{false};
  return RunOnWorkers(running, stop, [&](const std::vector<HttpFlow*>& share) {
    return RunWorker(share, end, flow_count, duration, stop);
  });
}

// A flow that got nothing makes "the aggregate of N flows" untrue: the
// server served fewer at once, which is what a dataloader would hit too.
absl::Status CheckNoFlowStarved(const HttpFlows& flows, absl::Duration duration) {
  const auto starved =
      std::count_if(flows.begin(), flows.end(), [](const auto& flow) { return flow->bytes == 0; });
  if (starved == 0) return absl::OkStatus();
  const auto first =
      std::find_if(flows.begin(), flows.end(), [](const auto& flow) { return flow->bytes == 0; });
  return absl::DeadlineExceededError(absl::StrCat(
      starved, " of ", flows.size(), " flows received no bytes in ", absl::FormatDuration(duration),
      ", the first ", (*first)->what,
      ": the server serves fewer connections at once than that (nginx: multi_accept on, "
      "worker_connections) or the path drops connections; check the server's connection "
      "limits, or use fewer flows or a longer duration"));
}

// "http GET, 4 range flows over a 100-byte object, 12 requests".
std::string DescribeFlows(const std::string& url, const ObjectShape& shape, int flow_count,
                          int flows_asked, uint64_t requests) {
  const absl::string_view scheme = absl::StartsWithIgnoreCase(url, "https:") ? "https" : "http";
  if (!shape.size_known) {
    return absl::StrCat(scheme, " GET, 1 flow of whole-object GETs (size unknown), ",
                        Plural(requests, "request", "requests"));
  }
  std::string detail =
      absl::StrCat(scheme, " GET, ", Plural(flow_count, "range flow", "range flows"), " over a ",
                   shape.bytes, "-byte object, ", Plural(requests, "request", "requests"));
  if (flow_count < flows_asked) {
    absl::StrAppend(&detail, " (", flows_asked, " flows asked; the object has only ", shape.bytes,
                    " bytes)");
  }
  return detail;
}

FlowsResult SummariseFlows(const HttpFlows& flows, const std::string& url, const ObjectShape& shape,
                           int flows_asked) {
  FlowsResult result;
  std::vector<FlowWindow> windows;
  uint64_t requests = 0;
  for (const std::unique_ptr<HttpFlow>& flow : flows) {
    result.flows.push_back({flow->bytes, 0, flow->requests});
    windows.push_back(flow->window);
    requests += flow->requests;
  }
  Summarise(result, windows);
  result.object_bytes = shape.bytes;
  result.detail = DescribeFlows(url, shape, static_cast<int>(flows.size()), flows_asked, requests);
  return result;
}

}  // namespace

std::vector<ByteRange> SplitRanges(uint64_t object_bytes, int flows) {
  std::vector<ByteRange> ranges;
  if (object_bytes == 0 || flows < 1) return ranges;
  const uint64_t count = std::min<uint64_t>(static_cast<uint64_t>(flows), object_bytes);
  const uint64_t base = object_bytes / count;
  const uint64_t longer = object_bytes % count;  // the first `longer` ranges get one more byte
  ranges.reserve(count);
  uint64_t first = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t size = base + (i < longer ? 1 : 0);
    ranges.push_back({first, first + size - 1});
    first += size;
  }
  return ranges;
}

absl::StatusOr<uint64_t> ParseContentRangeTotal(absl::string_view value) {
  const absl::string_view text = absl::StripAsciiWhitespace(value);
  if (!absl::StartsWithIgnoreCase(text, "bytes ")) {
    return absl::InvalidArgumentError(
        absl::StrCat("Content-Range \"", text, "\" does not start with \"bytes \""));
  }
  const size_t slash = text.rfind('/');
  if (slash == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("Content-Range \"", text, "\" has no \"/size\" part"));
  }
  const absl::string_view span = absl::StripAsciiWhitespace(text.substr(6, slash - 6));
  const absl::string_view total_text = absl::StripAsciiWhitespace(text.substr(slash + 1));
  if (total_text == "*") {
    return absl::InvalidArgumentError(
        absl::StrCat("Content-Range \"", text, "\" leaves the object's size unknown"));
  }
  uint64_t total = 0;
  if (total_text.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(total_text[0])) ||
      !absl::SimpleAtoi(total_text, &total)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Content-Range \"", text, "\" has no valid size after \"/\""));
  }
  if (span != "*") {
    const size_t dash = span.find('-');
    uint64_t first = 0;
    uint64_t last = 0;
    if (dash == absl::string_view::npos || !absl::SimpleAtoi(span.substr(0, dash), &first) ||
        !absl::SimpleAtoi(span.substr(dash + 1), &last) || first > last || last >= total) {
      return absl::InvalidArgumentError(
          absl::StrCat("Content-Range \"", text, "\" has no valid \"first-last\" range"));
    }
  }
  return total;
}

absl::StatusOr<FlowsResult> RunHttpRangeFlows(const std::string& url, const FlowSpec& spec,
                                              std::atomic<uint64_t>* moved) {
  const std::string what = absl::StrCat("uplink GET ", url, " with ", spec.flows, " flows");
  if (absl::Status refused = CheckTarget(url, spec, what); !refused.ok()) return refused;
  const std::string interface = spec.bind_ip.empty() ? "" : absl::StrCat("host!", spec.bind_ip);

  // The probe must leave the whole duration before the deadline.
  const absl::Time probe_deadline =
      std::min(spec.deadline - spec.duration, absl::Now() + kProbeTimeout);
  absl::StatusOr<ObjectShape> shape = LearnObject(url, interface, spec.flows, probe_deadline);
  if (!shape.ok()) return shape.status();

  const HttpFlows flows = SplitIntoFlows(*shape, spec.flows);
  if (absl::Status prepared = PrepareFlows(flows, url, interface, moved); !prepared.ok()) {
    return prepared;
  }
  if (absl::Status fits = CheckDurationFits(spec, absl::Now(), what); !fits.ok()) return fits;
  if (absl::Status failure = RunFlowsFor(flows, spec.duration); !failure.ok()) return failure;
  if (absl::Status starved = CheckNoFlowStarved(flows, spec.duration); !starved.ok()) {
    return starved;
  }
  return SummariseFlows(flows, url, *shape, spec.flows);
}

}  // namespace clustercert::agent::uplink
