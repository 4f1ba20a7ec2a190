#include "agent/inventory/clock_collector.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/adjtimex_clock_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Returns one canned reading.
class FakeClockSource : public ClockSource {
 public:
  explicit FakeClockSource(absl::StatusOr<ClockReading> reading) : reading_(std::move(reading)) {}
  absl::StatusOr<ClockReading> Read() override { return reading_; }

 private:
  absl::StatusOr<ClockReading> reading_;
};

ClockReading Reading(std::optional<bool> synchronized, const std::string& status) {
  ClockReading reading;
  reading.synchronized = synchronized;
  reading.est_error_us = 120;
  reading.max_error_us = 4500;
  reading.unix_time_us = 1'700'000'000'000'000;
  reading.status = status;
  reading.source = "adjtimex";
  return reading;
}

TEST(ClockCollectorTest, Synchronized) {
  FakeClockSource source(Reading(true, "synchronized"));
  v1::Clock clock = ClockCollector(source).Collect();
  ASSERT_TRUE(clock.has_synchronized());
  EXPECT_TRUE(clock.synchronized());
  EXPECT_EQ(clock.est_error_us(), 120);
  EXPECT_EQ(clock.max_error_us(), 4500);
  EXPECT_EQ(clock.unix_time_us(), 1'700'000'000'000'000);
  EXPECT_EQ(clock.source(), "adjtimex: synchronized");
  EXPECT_EQ(clock.unknowns_size(), 0);
}

TEST(ClockCollectorTest, Unsynchronized) {
  FakeClockSource source(Reading(false, "unsynchronized (kernel reports STA_UNSYNC)"));
  v1::Clock clock = ClockCollector(source).Collect();
  ASSERT_TRUE(clock.has_synchronized());
  EXPECT_FALSE(clock.synchronized());
  EXPECT_THAT(clock.source(), HasSubstr("STA_UNSYNC"));
  EXPECT_EQ(clock.unknowns_size(), 0);
}

TEST(ClockCollectorTest, UnknownLeavesSynchronizedUnsetWithTheReason) {
  FakeClockSource source(Reading(std::nullopt, "unknown: chrony without rtcsync"));
  v1::Clock clock = ClockCollector(source).Collect();
  EXPECT_FALSE(clock.has_synchronized());
  ASSERT_EQ(clock.unknowns_size(), 1);
  EXPECT_EQ(clock.unknowns(0).field(), "synchronized");
  EXPECT_EQ(clock.unknowns(0).path(), "adjtimex");
  EXPECT_EQ(clock.unknowns(0).reason(), "unknown: chrony without rtcsync");
  EXPECT_EQ(clock.max_error_us(), 4500);
}

TEST(ClockCollectorTest, FailedReadLeavesEverythingUnset) {
  FakeClockSource source(absl::PermissionDeniedError("adjtimex: Operation not permitted"));
  v1::Clock clock = ClockCollector(source).Collect();
  EXPECT_FALSE(clock.has_synchronized());
  EXPECT_FALSE(clock.has_est_error_us());
  EXPECT_FALSE(clock.has_max_error_us());
  ASSERT_GE(clock.unknowns_size(), 1);
  EXPECT_EQ(clock.unknowns(0).reason(), "adjtimex: Operation not permitted");
}

TEST(InterpretAdjtimexTest, UnsyncWithMaxErrorAtTheCapIsUnsynchronized) {
  // What this sandbox's kernel returns: TIME_ERROR, STA_UNSYNC, maxerror 16 s.
  ClockReading reading = InterpretAdjtimex({5, 0x40, 16'000'000, 16'000'000, 1});
  ASSERT_TRUE(reading.synchronized.has_value());
  EXPECT_FALSE(*reading.synchronized);
  EXPECT_THAT(reading.status, StartsWith("unsynchronized (kernel reports STA_UNSYNC"));
  EXPECT_EQ(reading.max_error_us, 16'000'000);
}

TEST(InterpretAdjtimexTest, UnsyncWithSmallMaxErrorIsUnknown) {
  // chrony without rtcsync: STA_UNSYNC stays set while maxerror is kept small.
  ClockReading reading = InterpretAdjtimex({5, 0x2041, 25'000, 300, 1});
  EXPECT_FALSE(reading.synchronized.has_value());
  EXPECT_THAT(reading.status, HasSubstr("rtcsync"));
}

TEST(InterpretAdjtimexTest, NoUnsyncIsSynchronized) {
  ClockReading reading = InterpretAdjtimex({0, 0x2001, 1'500, 20, 1});
  ASSERT_TRUE(reading.synchronized.has_value());
  EXPECT_TRUE(*reading.synchronized);
  EXPECT_EQ(reading.est_error_us, 20);
}

TEST(InterpretAdjtimexTest, TimeErrorWithoutUnsyncIsUnknown) {
  ClockReading reading = InterpretAdjtimex({5, 0x0101, 1'500, 20, 1});
  EXPECT_FALSE(reading.synchronized.has_value());
}

TEST(AdjtimexClockSourceTest, ReadsThisHost) {
  AdjtimexClockSource source;
  auto reading = source.Read();
  if (!reading.ok())
    SKIP_FOR_ENVIRONMENT("adjtimex") << "adjtimex denied here: " << reading.status();
  EXPECT_EQ(reading->source, "adjtimex");
  EXPECT_TRUE(reading->max_error_us.has_value());
  EXPECT_GT(reading->unix_time_us, 1'600'000'000'000'000);
  std::cout << "[ info     ] " << reading->status << "\n";
}

// What systemd's ProtectClock=yes does to the agent: a seccomp filter that
// fails adjtimex and clock_adjtime (glibc's adjtimex()) with EPERM. Run in a
// child so the filter stays there; the child sends back what Read() said.
std::string ReadUnderProtectClock() {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_adjtimex, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_adjtime, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    std::string said = "could not install the seccomp filter";
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0) {
      AdjtimexClockSource source;
      auto reading = source.Read();
      said = reading.ok() ? "read the clock"
                          : absl::StrCat(absl::StatusCodeToString(reading.status().code()), " ",
                                         reading.status().message());
    }
    const ssize_t ignored = ::write(fds[1], said.data(), said.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string said;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof(buffer))) > 0) said.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return said;
}

TEST(AdjtimexClockSourceTest, ProtectClockIsNamedNotReportedAsAClockFault) {
  const std::string said = ReadUnderProtectClock();
  EXPECT_THAT(said, StartsWith("PERMISSION_DENIED "));
  EXPECT_THAT(said, HasSubstr("refused (EPERM): a seccomp filter denies it"));
  EXPECT_THAT(said, HasSubstr("ProtectClock=yes"));
  EXPECT_THAT(said, HasSubstr("systemctl cat clustercert-agent"));
}

}  // namespace
}  // namespace clustercert::agent::inventory
