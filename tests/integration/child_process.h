#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace clustercert::testing {

// A child process for integration tests: started with argv, stdout and
// stderr captured to files, terminated (SIGTERM, then SIGKILL) and reaped on
// destruction so a failing test never leaves an agent running.
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> argv, const std::string& log_prefix);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Sends SIGTERM and waits up to `timeout_ms`; returns the exit status or -1.
  int Terminate(int timeout_ms = 5000);
  // Waits up to `timeout_ms` for the process to exit by itself; the exit status or -1.
  int Wait(int timeout_ms);
  std::string Stdout() const;
  std::string Stderr() const;

 private:
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

// Runs a command to completion (killed after timeout_s) and captures its output.
CommandResult RunCommand(std::vector<std::string> argv, const std::string& log_prefix,
                         int timeout_s = 120);

std::string ReadFile(const std::string& path);

// Waits for an agent started with --port-file to write its port (a line
// ending in a newline); returns the port, or 0 when none came in time.
int WaitForPortFile(const std::string& port_file, int timeout_ms = 5000);

// Starts node-agent `name` on 127.0.0.1 with a kernel-chosen port and the
// `extra` flags (e.g. --insecure, --sysfs-root DIR), its files under `dir`,
// kept in agents[name]; returns the port (0, and a test failure, when it
// did not start).
int StartLoopbackAgent(std::map<std::string, std::unique_ptr<ChildProcess>>& agents,
                       const std::string& name, const std::string& dir,
                       const std::vector<std::string>& extra);

}  // namespace clustercert::testing
