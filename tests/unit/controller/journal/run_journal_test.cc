// The run journal on disk: what is written reads back; a kill mid-write, an
// edited file, an oversized line or file, or bytes that are no journal at
// all are survived or refused with a sentence, never trusted.
#include "controller/journal/run_journal.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_tree.h"

namespace clustercert::controller::journal {
namespace {

using ::testing::HasSubstr;

v1::JournalHeader Header() {
  v1::JournalHeader header;
  header.set_format(kJournalFormat);
  header.set_plan_sha256(std::string(64, 'a'));
  header.set_cluster("lab");
  header.set_started("2026-12-01T10:00:00.000Z");
  return header;
}

v1::JournalRecord Cell(const std::string& client, const std::string& server, double gbps) {
  v1::JournalRecord record;
  v1::PairResult* pair = record.mutable_pair();
  pair->set_client(client);
  pair->set_server(server);
  pair->set_test("write_bw");
  pair->set_memory("host");
  pair->set_ok(true);
  pair->set_value(gbps);
  return record;
}

class RunJournalTest : public ::testing::Test {
 protected:
  std::string Path() const { return (tree_.root() / kJournalFile).string(); }
  std::string Text() const {
    std::ifstream in(Path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void AppendRaw(const std::string& bytes) const {
    std::ofstream(Path(), std::ios::binary | std::ios::app) << bytes;
  }
  // A journal with the header and `cells` cells, written as a run does.
  void WriteJournal(int cells) const {
    auto writer = JournalWriter::Create(Path(), Header());
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int i = 0; i < cells; ++i) {
      ASSERT_TRUE((*writer)->Append(Cell("node1", "node" + std::to_string(i + 2), 9.5)).ok());
    }
  }

  testing::TempTree tree_{"clustercert_journal"};
};

TEST_F(RunJournalTest, WhatIsWrittenReadsBackOneRecordPerLine) {
  WriteJournal(3);
  v1::JournalRecord sweep;
  sweep.mutable_sweep()->set_scope("2-node");
  sweep.mutable_sweep()->add_nodes("node1");
  {
    auto writer = JournalWriter::OpenForAppend(Path());
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(sweep).ok());
  }
  const std::string text = Text();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
  EXPECT_EQ(text.rfind("{\"header\":{\"format\":\"clustercert-journal/1\"", 0), 0u) << text;

  auto contents = ReadJournal(Path());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->header.plan_sha256(), std::string(64, 'a'));
  ASSERT_EQ(contents->pairs.size(), 3u);
  EXPECT_EQ(contents->pairs[2].server(), "node4");
  EXPECT_DOUBLE_EQ(contents->pairs[0].value(), 9.5);
  ASSERT_EQ(contents->sweeps.size(), 1u);
  EXPECT_EQ(contents->sweeps[0].scope(), "2-node");
  EXPECT_EQ(contents->ignored_lines, 0);
  EXPECT_TRUE(contents->finished_at.empty());
}

TEST_F(RunJournalTest, TheJournalIsPrivateAndNeverReused) {
  WriteJournal(0);
  struct stat st {};
  ASSERT_EQ(::stat(Path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = JournalWriter::Create(Path(), Header());
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(std::string(again.status().message()), HasSubstr(Path()));
}

// A kill mid-write leaves a line without its end: it is skipped, and a
// resume's first record starts a line of its own, so it is not lost too.
TEST_F(RunJournalTest, ATornLastLineIsSkippedAndTheNextRecordStartsClean) {
  WriteJournal(2);
  auto line = RecordLine(Cell("node3", "node4", 9.0));
  ASSERT_TRUE(line.ok());
  AppendRaw(line->substr(0, line->size() / 2));  // the kill, mid-record

  auto torn = ReadJournal(Path());
  ASSERT_TRUE(torn.ok()) << torn.status();
  EXPECT_EQ(torn->pairs.size(), 2u);
  EXPECT_EQ(torn->ignored_lines, 1);

  {
    auto writer = JournalWriter::OpenForAppend(Path());
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(Cell("node3", "node4", 9.0)).ok());
  }
  auto resumed = ReadJournal(Path());
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_EQ(resumed->pairs.size(), 3u);
  EXPECT_EQ(resumed->pairs[2].client(), "node3");
  EXPECT_EQ(resumed->ignored_lines, 1);  // the torn half, now a line of its own
}

TEST_F(RunJournalTest, EditedAndForeignLinesAreSkippedNotTrusted) {
  WriteJournal(1);
  AppendRaw("not json at all\n");
  AppendRaw("{\"pair\":{\"client\":\"node9\",\"no_such_field\":1}}\n");  // unknown field
  AppendRaw("{\"header\":{\"format\":\"clustercert-journal/1\",\"plan_sha256\":\"bb\"}}\n");
  AppendRaw("{\"pair\":{\"client\":\"a\\nb\\u001b[31m\",\"server\":\"n2\"}}\n");  // escapes only
  AppendRaw(std::string("\0\xff\xfe{", 4) + "\n");
  AppendRaw("\n\n");  // blank lines are nobody's record

  auto contents = ReadJournal(Path());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->header.plan_sha256(), std::string(64, 'a'));  // the second header is not
  ASSERT_EQ(contents->pairs.size(), 2u);
  EXPECT_EQ(contents->pairs[1].client(), "a\nb\x1b[31m");  // data, for the caller to escape
  EXPECT_EQ(contents->ignored_lines, 4);
}

TEST_F(RunJournalTest, AnOverlongLineIsSkippedWithoutBeingHeld) {
  WriteJournal(1);
  AppendRaw("{\"pair\":{\"client\":\"" + std::string(3000, 'x') + "\"}}\n");
  auto line = RecordLine(Cell("node5", "node6", 8.0));
  ASSERT_TRUE(line.ok());
  AppendRaw(*line + "\n");
  ReadLimits limits;
  limits.max_line_bytes = 1024;
  auto contents = ReadJournal(Path(), limits);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->pairs.size(), 2u);
  EXPECT_EQ(contents->pairs[1].client(), "node5");
  EXPECT_EQ(contents->ignored_lines, 1);
}

TEST_F(RunJournalTest, AnOversizedFileIsRefusedWithItsSize) {
  WriteJournal(20);
  ReadLimits limits;
  limits.max_file_bytes = 1024;
  auto contents = ReadJournal(Path(), limits);
  ASSERT_FALSE(contents.ok());
  EXPECT_THAT(std::string(contents.status().message()),
              HasSubstr("more than the 1024 bytes a journal may hold"));
  EXPECT_THAT(std::string(contents.status().message()), HasSubstr("without --resume"));
}

TEST_F(RunJournalTest, WithoutItsHeaderNothingIsMatchedToAPlan) {
  AppendRaw(*RecordLine(Cell("node1", "node2", 9.0)) + "\n");
  auto contents = ReadJournal(Path());
  ASSERT_FALSE(contents.ok());
  EXPECT_THAT(std::string(contents.status().message()),
              HasSubstr("does not start with its header line"));
}

TEST_F(RunJournalTest, AnotherFormatIsRefusedNamingBoth) {
  v1::JournalHeader header = Header();
  header.set_format("clustercert-journal/9\x1b[2J");
  ASSERT_TRUE(JournalWriter::Create(Path(), header).ok());
  auto contents = ReadJournal(Path());
  ASSERT_FALSE(contents.ok());
  const std::string message(contents.status().message());
  EXPECT_THAT(message, HasSubstr("clustercert-journal/9\\033[2J"));  // escaped, not obeyed
  EXPECT_THAT(message, HasSubstr("reads 'clustercert-journal/1'"));
}

TEST_F(RunJournalTest, AMissingJournalSaysWhatResumeTakes) {
  auto contents = ReadJournal(Path());
  ASSERT_FALSE(contents.ok());
  EXPECT_TRUE(absl::IsNotFound(contents.status()));
  EXPECT_THAT(std::string(contents.status().message()), HasSubstr("[output]"));
}

TEST_F(RunJournalTest, TheEndAndEachResumeAreRecorded) {
  WriteJournal(1);
  {
    auto writer = JournalWriter::OpenForAppend(Path());
    ASSERT_TRUE(writer.ok());
    v1::JournalRecord resumed;
    resumed.set_resumed_at("2026-12-01T11:00:00.000Z");
    ASSERT_TRUE((*writer)->Append(resumed).ok());
    v1::JournalRecord finished;
    finished.set_finished_at("2026-12-01T11:05:00.000Z");
    ASSERT_TRUE((*writer)->Append(finished).ok());
  }
  auto contents = ReadJournal(Path());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->resumes, 1);
  EXPECT_EQ(contents->finished_at, "2026-12-01T11:05:00.000Z");
}

}  // namespace
}  // namespace clustercert::controller::journal
