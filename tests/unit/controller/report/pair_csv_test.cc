#include "controller/report/pair_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/unit/controller/report/report_test_support.h"
#include "tests/unit/controller/report/ring_certificate.h"

namespace clustercert::controller::report {
namespace {

using ::testing::ElementsAre;
using testing::FailError;
using testing::FailLow;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RingCertificate;

using Record = std::vector<std::string>;

// A strict RFC 4180 reader written apart from the writer: records end in
// CRLF, a quoted field doubles its quotes and may hold commas and line
// breaks, an unquoted one holds neither quotes nor CR/LF. Fails the test on
// anything else.
std::vector<Record> ParseCsv(const std::string& text) {
  std::vector<Record> records;
  Record record;
  std::string field;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '"') {
      for (++i;; ++i) {
        if (i >= text.size()) {
          ADD_FAILURE() << "unterminated quoted field";
          return records;
        }
        if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else if (text[i] == '"') {
          ++i;
          break;
        } else {
          field += text[i];
        }
      }
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
        if (text[i] == '"') ADD_FAILURE() << "quote inside an unquoted field at " << i;
        field += text[i++];
      }
    }
    record.push_back(std::move(field));
    field.clear();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (text.compare(i, 2, "\r\n") != 0) {
      ADD_FAILURE() << "a record must end in CRLF at offset " << i;
      return records;
    }
    i += 2;
    records.push_back(std::move(record));
    record.clear();
  }
  return records;
}

TEST(PairCsv, OneRecordPerCellThatReadsBackToTheCertificate) {
  v1::Certificate c = RingCertificate(300);
  FailLow(c, 7, 120.5);
  FailError(c, 900, "deadline, after 32 s: \"peer\" stopped");
  c.mutable_pairs(11)->set_retest_of("n0005->n0006");
  c.mutable_pairs(12)->mutable_carried()->set_from_started_at("2026-11-30T10:00:00Z");
  c.mutable_pairs(12)->mutable_carried()->set_age_s(3600);
  const std::vector<Record> records = ParseCsv(RenderPairCsv(c));
  ASSERT_EQ(records.size(), 1u + c.pairs_size());
  const Record header = absl::StrSplit(kPairCsvHeader, ',');
  EXPECT_EQ(records[0], header);
  for (int i = 0; i < c.pairs_size(); ++i) {
    const Record& r = records[i + 1];
    const v1::PairResult& p = c.pairs(i);
    ASSERT_EQ(r.size(), header.size()) << i;
    EXPECT_THAT(Record(r.begin(), r.begin() + 5),
                ElementsAre(p.test(), p.rail(), p.memory(), p.client(), p.server()));
    if (p.ok()) EXPECT_EQ(std::stod(r[5]), p.value()) << i;
    EXPECT_EQ(r[6], "Gb/s");
    EXPECT_EQ(r[10], std::to_string(p.round()));
  }
  EXPECT_THAT(Record(records[8].begin() + 5, records[8].begin() + 10),
              ElementsAre("120.5", "Gb/s", "0.30125", "400", "fail"));
  EXPECT_EQ(records[8][15], "n0004 -> n0003: 120.5 Gb/s under the 320 Gb/s floor");
  EXPECT_EQ(records[901][5], "");  // did not run: no value, no ratio
  EXPECT_EQ(records[901][7], "");
  EXPECT_EQ(records[901][15], "deadline, after 32 s: \"peer\" stopped");
  EXPECT_EQ(records[12][11], "n0005->n0006");
  EXPECT_EQ(records[13][12], "2026-11-30T10:00:00Z");
  EXPECT_EQ(records[2][15], "");  // a pass has no detail
}

TEST(PairCsv, AHostileNodeNameIsQuotedAndReadsBack) {
  const std::string hostile = "n1,\"evil\"\n<script>alert(1)</script>";
  v1::Certificate c = RingCertificate(3, {"mlx5_0"});
  c.mutable_pairs(0)->set_client(hostile);
  const std::string csv = RenderPairCsv(c);
  EXPECT_THAT(csv, HasSubstr("\"n1,\"\"evil\"\"\n<script>alert(1)</script>\""));
  const std::vector<Record> records = ParseCsv(csv);
  ASSERT_EQ(records.size(), 1u + c.pairs_size());
  EXPECT_EQ(records[1][3], hostile);
  EXPECT_EQ(records[1].size(), records[0].size());
}

TEST(PairCsv, FieldsNeitherMoveTheCursorNorStartAFormula) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  // A carriage return would rewrite the line on a terminal: made visible.
  EXPECT_EQ(CsvField("cr\rhere"), "cr\\rhere");
  EXPECT_EQ(CsvField("node\x1b[2J"), "node\\x1b[2J");
  EXPECT_THAT(CsvField("fw \xFF"), Not(HasSubstr("\xFF")));
  // Spreadsheets evaluate these; a leading apostrophe shows them as text.
  EXPECT_EQ(CsvField("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(CsvField("+1"), "'+1");
  EXPECT_EQ(CsvField("-cmd"), "'-cmd");
  EXPECT_EQ(CsvField("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvField("a=b"), "a=b");
}

TEST(PairCsv, NoPairsIsTheHeaderAlone) {
  EXPECT_EQ(RenderPairCsv(v1::Certificate()), absl::StrCat(kPairCsvHeader, "\r\n"));
}

TEST(PairCsv, TheFixturesParse) {
  for (const auto& name : testing::FixtureNames()) {
    SCOPED_TRACE(name);
    const v1::Certificate c = testing::LoadFixture(name);
    const std::vector<Record> records = ParseCsv(RenderPairCsv(c));
    ASSERT_EQ(records.size(), 1u + c.pairs_size());
    for (const auto& r : records) EXPECT_EQ(r.size(), records[0].size());
  }
}

}  // namespace
}  // namespace clustercert::controller::report
