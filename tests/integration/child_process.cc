#include "tests/integration/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"

namespace clustercert::testing {
namespace {

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

int WaitFor(pid_t pid, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

ChildProcess::ChildProcess(std::vector<std::string> argv, const std::string& log_prefix)
    : out_path_(log_prefix + ".out"), err_path_(log_prefix + ".err") {
  pid_ = Spawn(argv, out_path_, err_path_);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && Terminate() < 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

int ChildProcess::Terminate(int timeout_ms) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int code = WaitFor(pid_, timeout_ms);
  if (code >= 0) pid_ = -1;
  return code;
}

int ChildProcess::Wait(int timeout_ms) {
  if (pid_ <= 0) return -1;
  int code = WaitFor(pid_, timeout_ms);
  if (code >= 0) pid_ = -1;
  return code;
}

std::string ChildProcess::Stdout() const { return ReadFile(out_path_); }
std::string ChildProcess::Stderr() const { return ReadFile(err_path_); }

CommandResult RunCommand(std::vector<std::string> argv, const std::string& log_prefix,
                         int timeout_s) {
  CommandResult result;
  const auto start = std::chrono::steady_clock::now();
  const std::string out = log_prefix + ".out", err = log_prefix + ".err";
  pid_t pid = Spawn(argv, out, err);
  result.exit_code = WaitFor(pid, timeout_s * 1000);
  if (result.exit_code < 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.out = ReadFile(out);
  result.err = ReadFile(err);
  return result;
}

int WaitForPortFile(const std::string& port_file, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 25) {
    const std::string text = ReadFile(port_file);
    if (!text.empty() && text.back() == '\n') return std::stoi(text);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return 0;
}

int StartLoopbackAgent(std::map<std::string, std::unique_ptr<ChildProcess>>& agents,
                       const std::string& name, const std::string& dir,
                       const std::vector<std::string>& extra) {
  const std::string port_file = dir + "/" + name + ".port";
  std::vector<std::string> argv = {NODE_AGENT_BIN, "--listen",    "127.0.0.1:0", "--node-name",
                                   name,           "--port-file", port_file};
  argv.insert(argv.end(), extra.begin(), extra.end());
  agents[name] = std::make_unique<ChildProcess>(argv, dir + "/" + name);
  const int port = WaitForPortFile(port_file);
  if (port == 0) ADD_FAILURE() << "agent " << name << " did not start: " << agents[name]->Stderr();
  return port;
}

}  // namespace clustercert::testing
