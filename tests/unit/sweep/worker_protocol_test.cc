#include "sweep/worker_protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace clustercert::sweep {
namespace {

std::vector<char> Bytes(const std::string& text) {
  return std::vector<char>(text.begin(), text.end());
}

TEST(HexTest, RoundTripsEveryByte) {
  std::vector<char> all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  const std::string hex = HexEncode(all);
  EXPECT_EQ(hex.substr(0, 8), "00010203");
  EXPECT_EQ(hex.substr(hex.size() - 4), "feff");
  EXPECT_EQ(HexDecode(hex), all);
  EXPECT_EQ(HexDecode("ABcd"),
            (std::vector<char>{static_cast<char>(0xab), static_cast<char>(0xcd)}));
}

TEST(HexTest, RejectsOddLengthAndNonHex) {
  EXPECT_FALSE(HexDecode("abc").has_value());
  EXPECT_FALSE(HexDecode("zz").has_value());
  EXPECT_TRUE(HexDecode("").has_value());
}

TEST(ParseWorkerLineTest, ParsesEachVerb) {
  auto set = ParseWorkerLine("set nccl/id 0a0b\n");
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->verb, WorkerVerb::kSet);
  EXPECT_EQ(set->key, "nccl/id");
  EXPECT_EQ(set->value, (std::vector<char>{0x0a, 0x0b}));

  auto get = ParseWorkerLine("get gloo/rank/3");
  ASSERT_TRUE(get.has_value());
  EXPECT_EQ(get->verb, WorkerVerb::kGet);
  EXPECT_EQ(get->key, "gloo/rank/3");

  auto row = ParseWorkerLine("row bytes=8 count=2");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->verb, WorkerVerb::kRow);
  EXPECT_EQ(row->text, "row bytes=8 count=2");

  auto note = ParseWorkerLine("note transport tcp 10.0.0.1");
  ASSERT_TRUE(note.has_value());
  EXPECT_EQ(note->verb, WorkerVerb::kNote);
  EXPECT_EQ(note->text, "transport tcp 10.0.0.1");

  auto done = ParseWorkerLine("done");
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->verb, WorkerVerb::kDone);

  auto fail = ParseWorkerLine("fail cudaMalloc of 8 GiB failed: lower the cap");
  ASSERT_TRUE(fail.has_value());
  EXPECT_EQ(fail->verb, WorkerVerb::kFail);
  EXPECT_EQ(fail->text, "cudaMalloc of 8 GiB failed: lower the cap");
}

TEST(ParseWorkerLineTest, SetWithEmptyValue) {
  auto set = ParseWorkerLine("set key ");
  ASSERT_TRUE(set.has_value());
  EXPECT_TRUE(set->value.empty());
}

TEST(ParseWorkerLineTest, RejectsUnknownAndMalformed) {
  EXPECT_FALSE(ParseWorkerLine("hello").has_value());
  EXPECT_FALSE(ParseWorkerLine("").has_value());
  EXPECT_FALSE(ParseWorkerLine("set key xyz").has_value());
  EXPECT_FALSE(ParseWorkerLine("set  0a").has_value());
  EXPECT_FALSE(ParseWorkerLine("get").has_value());
  EXPECT_FALSE(ParseWorkerLine("get two keys").has_value());
  EXPECT_FALSE(ParseWorkerLine("done now").has_value());
  EXPECT_FALSE(ParseWorkerLine("NCCL INFO Using network IB").has_value());
}

TEST(ValueLineTest, RoundTrips) {
  const std::vector<char> value = Bytes(std::string("a\0b \n", 5));
  const std::string line = ValueLine("k", value);
  EXPECT_EQ(line, "value k 610062200a\n");
  auto parsed = ParseValueLine(line);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->first, "k");
  EXPECT_EQ(parsed->second, value);
  EXPECT_FALSE(ParseValueLine("valu k 00").has_value());
  EXPECT_FALSE(ParseValueLine("value k 0").has_value());
}

// Reads back what the channel wrote into a tmpfile.
std::string Written(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[256];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  return text;
}

TEST(WorkerChannelTest, WritesOneLinePerMessage) {
  std::FILE* to_agent = std::tmpfile();
  ASSERT_NE(to_agent, nullptr);
  std::FILE* from_agent = std::tmpfile();
  ASSERT_NE(from_agent, nullptr);
  WorkerChannel channel(to_agent, from_agent);
  channel.Set("id", Bytes("\x01\x02"));
  channel.Row("row bytes=8\n");
  channel.Note("two\nlines");
  channel.Fail("bad");
  channel.Done();
  EXPECT_EQ(Written(to_agent), "set id 0102\nrow bytes=8\nnote two lines\nfail bad\ndone\n");
  std::fclose(to_agent);
  std::fclose(from_agent);
}

TEST(WorkerChannelTest, GetSkipsOtherLinesUntilItsKey) {
  std::FILE* to_agent = std::tmpfile();
  ASSERT_NE(to_agent, nullptr);
  std::string answers = "value other 00\ngarbage\nvalue id zz\nvalue id 6869\nvalue id 00\n";
  std::FILE* from_agent = fmemopen(answers.data(), answers.size(), "r");
  ASSERT_NE(from_agent, nullptr);
  WorkerChannel channel(to_agent, from_agent);
  EXPECT_EQ(channel.Get("id"), Bytes("hi"));
  EXPECT_EQ(Written(to_agent), "get id\n");
  // The next get reads on from where the first stopped.
  EXPECT_EQ(channel.Get("id"), (std::vector<char>{0}));
  // Then stdin is at its end: the agent is gone.
  EXPECT_FALSE(channel.Get("id").has_value());
  std::fclose(to_agent);
  std::fclose(from_agent);
}

TEST(WorkerChannelTest, GetOverAPipeReadsALongValue) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::FILE* writer = fdopen(fds[1], "w");
  std::FILE* reader = fdopen(fds[0], "r");
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(reader, nullptr);
  const std::vector<char> big(3000, 'x');  // longer than any fixed line buffer
  std::fputs(ValueLine("big", big).c_str(), writer);
  std::fclose(writer);
  std::FILE* to_agent = std::tmpfile();
  WorkerChannel channel(to_agent, reader);
  EXPECT_EQ(channel.Get("big"), big);
  std::fclose(reader);
  std::fclose(to_agent);
}

}  // namespace
}  // namespace clustercert::sweep
