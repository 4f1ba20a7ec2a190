#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

extern char** environ;

namespace clustercert::testing {

// A real nginx (Debian's /usr/sbin/nginx) as a child process, serving a
// generated object of a chosen size from a temp directory: the storage
// server the uplink http flows are tested against. Start() picks a free port
// in 20000-40000 and retries when nginx loses the race for it; the
// destructor stops and reaps nginx and removes the directory. When nginx is
// not installed Start() returns NotFound, for the test to SKIP_FOR_ENVIRONMENT("nginx")
// (tests/support/environment_skip.h: a failure under CI=true).
class NginxServer {
 public:
  static constexpr const char* kNginxPath = "/usr/sbin/nginx";
  static constexpr const char* kObjectName = "object.bin";

  explicit NginxServer(uint64_t object_bytes = uint64_t{64} << 20,
                       std::string listen_ip = "127.0.0.1")
      : object_bytes_(object_bytes), listen_ip_(std::move(listen_ip)) {}
  ~NginxServer() {
    Stop();
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  absl::Status Start() {
    if (access(kNginxPath, X_OK) != 0) {
      return absl::NotFoundError(absl::StrCat(
          kNginxPath, " is not installed, so the test has no HTTP server: apt-get install nginx"));
    }
    if (absl::Status made = MakeTree(); !made.ok()) return made;
    constexpr int kAttempts = 5;
    absl::Status last;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      absl::StatusOr<uint16_t> picked = PickPort();
      if (!picked.ok()) return picked.status();
      port_ = *picked;
      last = Launch();
      if (last.ok()) return last;
      // Another process took the port between the probe and nginx's bind.
      if (!absl::StrContains(last.message(), "Address already in use")) return last;
    }
    return last;
  }

  // Stops nginx (SIGTERM, then SIGKILL after 3 s) and reaps it.
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    const absl::Time give_up = absl::Now() + absl::Seconds(3);
    while (absl::Now() < give_up) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // Writes a zero-filled (sparse) file of `bytes` under the served root.
  absl::Status WriteObject(const std::string& name, uint64_t bytes) const {
    const std::filesystem::path path = dir_ / "www" / name;
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    { std::ofstream(path, std::ios::binary | std::ios::trunc); }
    std::filesystem::resize_file(path, bytes, error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("cannot write test object ", path.string(), ": ", error.message()));
    }
    return absl::OkStatus();
  }

  uint16_t port() const { return port_; }
  const std::filesystem::path& dir() const { return dir_; }
  // "127.0.0.1:PORT" or "[::1]:PORT".
  std::string HostPort() const {
    return absl::StrContains(listen_ip_, ':') ? absl::StrCat("[", listen_ip_, "]:", port_)
                                              : absl::StrCat(listen_ip_, ":", port_);
  }
  // `path` starts with "/".
  std::string Url(const std::string& path) const {
    return absl::StrCat("http://", HostPort(), path);
  }
  std::string ObjectUrl() const { return Url(absl::StrCat("/", kObjectName)); }
  // The same object where nginx ignores Range (max_ranges 0).
  std::string NoRangeUrl() const { return Url(absl::StrCat("/norange/", kObjectName)); }

  // nginx's error log and what it wrote to stderr.
  std::string Logs() const {
    return absl::StrCat(ReadFile(dir_ / "error.log"), ReadFile(dir_ / "stderr.log"));
  }

 private:
  static std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  absl::Status MakeTree() {
    if (!dir_.empty()) return absl::OkStatus();
    std::string pattern =
        (std::filesystem::temp_directory_path() / "clustercert_nginx_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create a temp directory from ", pattern,
                                              ": check that TMPDIR is writable"));
    }
    dir_ = pattern;
    std::error_code error;
    std::filesystem::create_directories(dir_ / "tmp", error);
    std::filesystem::create_directories(dir_ / "www", error);
    return WriteObject(kObjectName, object_bytes_);
  }

  // Fills `address` for listen_ip_:port; false when listen_ip_ is no literal.
  bool Address(uint16_t port, sockaddr_storage& address, socklen_t& length) const {
    address = {};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    if (inet_pton(AF_INET, listen_ip_.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(port);
      length = sizeof(sockaddr_in);
      return true;
    }
    if (inet_pton(AF_INET6, listen_ip_.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(port);
      length = sizeof(sockaddr_in6);
      return true;
    }
    return false;
  }

  // A port in 20000-40000 that binds right now (below the kernel's usual
  // ephemeral range, so outgoing connections rarely collide with it).
  absl::StatusOr<uint16_t> PickPort() const {
    std::mt19937 random(std::random_device{}());
    std::uniform_int_distribution<int> pick(20000, 40000);
    for (int attempt = 0; attempt < 100; ++attempt) {
      const uint16_t port = static_cast<uint16_t>(pick(random));
      sockaddr_storage address;
      socklen_t length = 0;
      if (!Address(port, address, length)) {
        return absl::InvalidArgumentError(absl::StrCat("test nginx listen_ip \"", listen_ip_,
                                                       "\" is not a literal IPv4 or IPv6 address"));
      }
      const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      const bool free = bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0;
      close(fd);
      if (free) return port;
    }
    return absl::UnavailableError(
        absl::StrCat("no free port in 20000-40000 on ", listen_ip_, " for the test nginx"));
  }

  bool Accepts() const {
    sockaddr_storage address;
    socklen_t length = 0;
    if (!Address(port_, address, length)) return false;
    const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), length) == 0;
    if (!connected && errno == EINPROGRESS) {
      pollfd entry{fd, POLLOUT, 0};
      int err = 0;
      socklen_t err_length = sizeof(err);
      connected = poll(&entry, 1, 200) == 1 &&
                  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_length) == 0 && err == 0;
    }
    close(fd);
    return connected;
  }

  // Writes the config, starts nginx and waits (5 s at most) until it accepts.
  absl::Status Launch() {
    // One config for every test: the script the integration tests run too.
    const std::string conf = (dir_ / "nginx.conf").string();
    const std::string command =
        absl::StrCat("/bin/bash '", CLUSTERCERT_SOURCE_DIR, "/tests/support/nginx_conf.sh' '",
                     dir_.string(), "' '", HostPort(), "' > /dev/null");
    if (std::system(command.c_str()) != 0) {
      return absl::InternalError(
          absl::StrCat("tests/support/nginx_conf.sh could not write ", conf));
    }
    std::filesystem::remove(dir_ / "error.log");
    const std::string prefix = dir_.string() + "/";
    const std::string error_log = (dir_ / "error.log").string();
    const std::string stderr_log = (dir_ / "stderr.log").string();
    std::string args[] = {kNginxPath, "-p", prefix, "-e", error_log, "-c", conf};
    char* argv[] = {args[0].data(), args[1].data(), args[2].data(), args[3].data(),
                    args[4].data(), args[5].data(), args[6].data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, stderr_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, kNginxPath, &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      return absl::InternalError(absl::StrCat("cannot start ", kNginxPath, ": ",
                                              std::generic_category().message(spawned)));
    }
    pid_ = pid;
    const absl::Time give_up = absl::Now() + absl::Seconds(5);
    while (absl::Now() < give_up) {
      int wait_status = 0;
      if (waitpid(pid_, &wait_status, WNOHANG) == pid_) {
        pid_ = -1;
        return absl::InternalError(
            absl::StrCat("test nginx on ", HostPort(), " exited at start; its log says: ", Logs()));
      }
      if (Accepts()) return absl::OkStatus();
      absl::SleepFor(absl::Milliseconds(20));
    }
    Stop();
    return absl::DeadlineExceededError(absl::StrCat("test nginx did not accept on ", HostPort(),
                                                    " within 5s; its log says: ", Logs()));
  }

  uint64_t object_bytes_;
  std::string listen_ip_;
  std::filesystem::path dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace clustercert::testing
