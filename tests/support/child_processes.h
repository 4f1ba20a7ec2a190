#pragma once

// Helpers shared by the tests that start child processes: where the fake workers live
// (tests/fixtures/workers/*.sh), polling with a deadline, and checks that no
// process outlived the object that owned it.

#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

namespace clustercert::process::testing {

inline std::string FakeWorker(const std::string& name) {
  return std::string(CLUSTERCERT_FIXTURES) + "/workers/" + name;
}

// Polls `done` every 10 ms until it holds or `timeout` passes; returns the last answer.
inline bool WaitUntil(const std::function<bool()>& done,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// True when this test process has no child at all, running or zombie. (It
// reaps one if there is, which is fine: the test fails either way.)
inline bool HasNoChildren() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}

// True when `pid` no longer runs: gone, or a zombie waiting for init (an
// orphaned grandchild is reparented, and a container's init may reap late).
inline bool IsGone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  stat >> pid_field >> comm >> state;
  return !stat || state == "Z" || state == "X";
}

// Puts CAP_SYS_ADMIN in this thread's inheritable and ambient sets, as the
// hardened unit does for the agent; false where this process may not.
inline bool RaiseAmbientSysAdmin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_SYS_ADMIN / 32].inheritable |= 1u << (CAP_SYS_ADMIN % 32);
  if (::syscall(SYS_capset, &header, data) != 0) return false;
  return ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0) == 0;
}

}  // namespace clustercert::process::testing
