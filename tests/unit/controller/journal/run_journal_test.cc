// The run journal on disk: what is written reads back; a kill mid-write, an
// edited file, an oversized line or file, or bytes that are no journal at
// all are survived or refused with a sentence, never trusted.
#include "controller/journal/run_journal.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "controller/certificate/certificate_signer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/finishes_within.h"
#include "tests/support/special_files.h"
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
  // The key a resume reads the journal with.
  JournalKey Key() const {
    auto contents = ReadJournal(Path());
    EXPECT_TRUE(contents.ok()) << contents.status();
    return contents.ok() ? *contents->key : JournalKey("", "", "");
  }
  // A journal line for `record` under this run's key, as the writer makes it.
  std::string Authentic(const v1::JournalRecord& record) const {
    return MacLine(*RecordLine(record), Key());
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
    auto writer = JournalWriter::OpenForAppend(Path(), Key());
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(sweep).ok());
  }
  const std::string text = Text();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
  EXPECT_EQ(text.rfind("{\"header\":{\"format\":\"clustercert-journal/2\"", 0), 0u) << text;

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
    auto writer = JournalWriter::OpenForAppend(Path(), Key());
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
  AppendRaw("{\"pair\":{\"client\":\"node9\",\"no_such_field\":1}}\n");  // no MAC
  AppendRaw(MacLine("{\"pair\":{\"client\":\"node9\",\"no_such_field\":1}}", Key()) + "\n");
  v1::JournalRecord second_header;
  *second_header.mutable_header() = Header();
  second_header.mutable_header()->set_plan_sha256("bb");
  AppendRaw(Authentic(second_header) + "\n");
  AppendRaw(MacLine("{\"pair\":{\"client\":\"a\\nb\\u001b[31m\",\"server\":\"n2\"}}", Key()) +
            "\n");  // escapes only
  AppendRaw(std::string("\0\xff\xfe{", 4) + "\n");
  AppendRaw("\n\n");  // blank lines are nobody's record

  auto contents = ReadJournal(Path());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->header.plan_sha256(), std::string(64, 'a'));  // the second header is not
  ASSERT_EQ(contents->pairs.size(), 2u);
  EXPECT_EQ(contents->pairs[1].client(), "a\nb\x1b[31m");  // data, for the caller to escape
  EXPECT_EQ(contents->ignored_lines, 5);
  ASSERT_EQ(contents->warnings.size(), 5u);
  EXPECT_THAT(contents->warnings[0], HasSubstr("line 3 of " + Path() +
                                               " is not taken over: it "
                                               "has no MAC"));
  EXPECT_THAT(contents->warnings[2], HasSubstr("line 5 of"));
  EXPECT_THAT(contents->warnings[2], HasSubstr("no record this release reads"));
  EXPECT_THAT(contents->warnings[3], HasSubstr("a second header"));
}

// The attack: a journaled cell's 10 Gb/s edited to 900. Its MAC no
// longer matches, so the resume measures it again instead of certifying
// what nobody measured; the other cells are taken over.
TEST_F(RunJournalTest, AnEditedValueIsNotTakenOver) {
  {
    auto writer = JournalWriter::Create(Path(), Header());
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(Cell("node1", "node2", 10)).ok());
    ASSERT_TRUE((*writer)->Append(Cell("node1", "node3", 10)).ok());
  }
  std::string text = Text();
  const size_t second = text.find("\"server\":\"node3\"");
  ASSERT_NE(second, std::string::npos) << text;
  const size_t value = text.find("\"value\":10", second);
  ASSERT_NE(value, std::string::npos) << text;
  text.replace(value, std::string("\"value\":10").size(), "\"value\":900");
  std::ofstream(Path(), std::ios::binary | std::ios::trunc) << text;

  auto contents = ReadJournal(Path());
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->pairs.size(), 1u);  // the intact line is taken over
  EXPECT_EQ(contents->pairs[0].server(), "node2");
  EXPECT_DOUBLE_EQ(contents->pairs[0].value(), 10);
  EXPECT_EQ(contents->ignored_lines, 1);
  ASSERT_EQ(contents->warnings.size(), 1u);
  EXPECT_THAT(contents->warnings[0], HasSubstr("line 3 of " + Path()));
  EXPECT_THAT(contents->warnings[0], HasSubstr("its MAC does not match"));
}

// A line copied from another run's journal (the same plan, a passing cell)
// does not authenticate here: every run has its own key and nonce.
TEST_F(RunJournalTest, ALineFromAnotherRunIsRefused) {
  testing::TempTree other{"clustercert_journal_other"};
  const std::string other_path = (other.root() / kJournalFile).string();
  {
    auto writer = JournalWriter::Create(other_path, Header());
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(Cell("node1", "node5", 400)).ok());
  }
  std::ifstream in(other_path, std::ios::binary);
  std::string header_line, cell_line;
  std::getline(in, header_line);
  std::getline(in, cell_line);
  ASSERT_NE(cell_line.find("node5"), std::string::npos);

  WriteJournal(1);
  AppendRaw(cell_line + "\n");
  auto contents = ReadJournal(Path());
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->pairs.size(), 1u);
  EXPECT_EQ(contents->pairs[0].server(), "node2");
  EXPECT_EQ(contents->ignored_lines, 1);
  EXPECT_THAT(contents->warnings[0], HasSubstr("copied from another run"));

  // Nor does a whole journal under another run's header and key file.
  std::ofstream(Path(), std::ios::binary | std::ios::trunc) << header_line << "\n"
                                                            << cell_line << "\n";
  auto swapped = ReadJournal(Path());
  ASSERT_FALSE(swapped.ok());
  EXPECT_THAT(std::string(swapped.status().message()), HasSubstr("header line fails its MAC"));
}

// With a signing key in the plan the key is derived from it: no key file in
// the run directory, and a journal rewritten by someone without the signing
// key (who can write the directory) fails; another signing key reads none.
TEST_F(RunJournalTest, WithASigningKeyTheKeyIsDerivedFromIt) {
  const std::string signing = (tree_.root() / "signing").string();
  const std::string other = (tree_.root() / "other").string();
  ASSERT_TRUE(GenerateSigningKey(signing).ok());
  ASSERT_TRUE(GenerateSigningKey(other).ok());
  {
    auto writer = JournalWriter::Create(Path(), Header(), signing);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(Cell("node1", "node2", 9.5)).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(tree_.root() / kJournalKeyFile));
  auto contents = ReadJournal(Path(), {}, signing);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->pairs.size(), 1u);
  EXPECT_EQ(contents->ignored_lines, 0);
  {
    auto writer = JournalWriter::OpenForAppend(Path(), *contents->key);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(Cell("node1", "node3", 9.5)).ok());
  }
  auto appended = ReadJournal(Path(), {}, signing);
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->pairs.size(), 2u);

  auto wrong = ReadJournal(Path(), {}, other);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.status().message()),
              HasSubstr("fails its MAC under a key derived from the plan's signing key " + other));
  // A key file planted next to it is not consulted when the plan signs.
  auto without = ReadJournal(Path());
  ASSERT_FALSE(without.ok());
}

TEST_F(RunJournalTest, AJournalWithoutMacsIsRefusedWhole) {
  AppendRaw("{\"header\":{\"format\":\"clustercert-journal/1\",\"plan_sha256\":\"aa\"}}\n");
  AppendRaw(*RecordLine(Cell("node1", "node2", 900)) + "\n");
  auto contents = ReadJournal(Path());
  ASSERT_FALSE(contents.ok());
  EXPECT_THAT(std::string(contents.status().message()),
              HasSubstr("before journal lines carried a MAC: none of its results can be "
                        "authenticated"));
}

TEST_F(RunJournalTest, TheKeyFileIsPrivateAndMustStayIt) {
  WriteJournal(1);
  const std::string key_path = (tree_.root() / kJournalKeyFile).string();
  struct stat st {};
  ASSERT_EQ(::stat(key_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::chmod(key_path.c_str(), 0644), 0);
  auto contents = ReadJournal(Path());
  ASSERT_FALSE(contents.ok());
  EXPECT_THAT(std::string(contents.status().message()), HasSubstr("is not private"));
}

// A duplicated key is read differently by different JSON readers: a line
// with one is refused even under a good MAC.
TEST_F(RunJournalTest, ADuplicatedKeyIsRefused) {
  WriteJournal(1);
  AppendRaw(MacLine("{\"pair\":{\"client\":\"node7\",\"value\":1,\"value\":900}}", Key()) + "\n");
  auto contents = ReadJournal(Path());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->pairs.size(), 1u);
  ASSERT_EQ(contents->warnings.size(), 1u);
  EXPECT_THAT(contents->warnings[0], HasSubstr("the key 'value' twice"));
}

TEST_F(RunJournalTest, AnOverlongLineIsSkippedWithoutBeingHeld) {
  WriteJournal(1);
  AppendRaw("{\"pair\":{\"client\":\"" + std::string(3000, 'x') + "\"}}\n");
  AppendRaw(Authentic(Cell("node5", "node6", 8.0)) + "\n");
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

// A FIFO where journal.jsonl should be (a swapped run directory) is refused
// at once: the resume must not block in open(2) waiting for a writer.
TEST_F(RunJournalTest, AFifoAsTheJournalIsRefusedAtOnce) {
  ASSERT_TRUE(testing::MakeFifo(Path()));
  absl::Status status;
  ASSERT_TRUE(testing::FinishesWithin(
      testing::kSpecialFileDeadline, [&] { status = ReadJournal(Path()).status(); },
      [this] { testing::ReleaseFifoReader(Path()); }));
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("is a FIFO, not a regular file"));
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
  EXPECT_THAT(message, HasSubstr("reads 'clustercert-journal/2'"));
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
    auto writer = JournalWriter::OpenForAppend(Path(), Key());
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
