#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

namespace clustercert::testing {

// Runs `work` on its own thread and says whether it finished within `limit`.
// The defences against special files (a FIFO, /dev/zero) are there so a call
// cannot hang; a test of one must fail when the defence is gone, not hang the
// suite. On a timeout `release` is called (repeatedly) (e.g. ReleaseFifoReader) so the
// stuck thread can finish and be joined; if it still does not, the process
// aborts with a message rather than leaving a thread that uses the test's
// stack.
inline bool FinishesWithin(std::chrono::milliseconds limit, std::function<void()> work,
                           std::function<void()> release = nullptr) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread worker([work = std::move(work), done] {
    work();
    done->set_value();
  });
  if (finished.wait_for(limit) == std::future_status::ready) {
    worker.join();
    return true;
  }
  // Released every 100 ms for 10 s: a reader may reopen the FIFO after one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (release) release();
    if (finished.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) {
      worker.join();
      return false;
    }
  }
  std::fprintf(stderr,
               "FinishesWithin: the call is still blocked after its release; aborting so "
               "the suite does not hang\n");
  std::abort();
}

// Opens the FIFO at `path` for writing and closes it: a reader blocked in
// open(2) wakes up and then reads end-of-file.
inline void ReleaseFifoReader(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
}

}  // namespace clustercert::testing
