#include "sweep/worker_output.h"

#include <chrono>
#include <cstdio>
#include <vector>

namespace clustercert::sweep {

WorkerOutput::WorkerOutput(WorkerChannel& channel, bool print_table, std::string program)
    : channel_(channel), print_table_(print_table), program_(std::move(program)) {}

void WorkerOutput::Note(const std::string& text) {
  if (!print_table_) return channel_.Note(text);
  std::fprintf(channel_.to_agent(), "# %s\n", text.c_str());
  std::fflush(channel_.to_agent());
}

void WorkerOutput::Row(const SweepRow& row) {
  if (!print_table_) return channel_.Row(EncodeRowLine(row));
  std::FILE* table = channel_.to_agent();
  if (!header_printed_)
    std::fputs((NcclTestsTitle(row.operation) + NcclTestsHeader()).c_str(), table);
  header_printed_ = true;
  std::fputs(NcclTestsRowLine(row).c_str(), table);
  std::fflush(table);
}

int WorkerOutput::Fail(const std::string& sentence, int exit_code) {
  if (print_table_) {
    std::fprintf(stderr, "%s: %s\n", program_.c_str(), sentence.c_str());
  } else {
    channel_.Fail(sentence);
  }
  return exit_code;
}

int WorkerOutput::Done() {
  if (!print_table_) channel_.Done();
  return 0;
}

std::optional<WorkerOptions> ParseWorkerCommandLine(int argc, char** argv,
                                                    const std::string& program,
                                                    WorkerChannel& channel) {
  std::string error;
  std::optional<WorkerOptions> options =
      ParseWorkerArgs(std::vector<std::string>(argv + 1, argv + argc), error);
  if (!options) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), error.c_str());
    channel.Fail(error);
  }
  return options;
}

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace clustercert::sweep
