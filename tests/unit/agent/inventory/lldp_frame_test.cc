// ParseLldpFrame on frames lldpd sent (tests/fixtures/lldp/*.bin) and on
// frames built here to break each rule a hostile switch could break.
#include "agent/inventory/lldp_frame.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/fixture_file.h"

namespace clustercert::agent::inventory {
namespace {

std::string Fixture(const std::string& name) {
  return clustercert::testing::FixtureBytes("lldp/" + name);
}

std::string Tlv(int type, const std::string& value) {
  const size_t length = value.size();
  std::string tlv;
  tlv.push_back(static_cast<char>((type << 1) | ((length >> 8) & 1)));
  tlv.push_back(static_cast<char>(length & 0xff));
  return tlv + value;
}

const std::string kHeader = std::string("\x01\x80\xc2\x00\x00\x0e", 6) +
                            std::string("\x42\x19\x7e\xcb\xcd\x02", 6) + std::string("\x88\xcc", 2);
const std::string kChassis = Tlv(1, std::string("\x04\x44\x38\x39\x3d\xd7\x91", 7));
const std::string kPort = Tlv(2, "\x05swp7");
const std::string kTtl = Tlv(3, std::string("\x00\x78", 2));
const std::string kEnd = std::string(2, '\0');

std::string Frame(const std::string& optional) {
  return kHeader + kChassis + kPort + kTtl + optional + kEnd;
}

void ExpectRefused(const std::string& frame, const std::string& words) {
  absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(frame);
  ASSERT_FALSE(neighbor.ok()) << neighbor->DebugString();
  EXPECT_EQ(neighbor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(neighbor.status().message().find(words), std::string::npos)
      << neighbor.status().message();
}

TEST(LldpFrameTest, LldpdFrameWithIfnamePortId) {
  absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(Fixture("leaf1-ifname.bin"));
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->switch_name(), "leaf1");
  EXPECT_EQ(neighbor->chassis_id(), "42:19:7e:cb:cd:02");
  EXPECT_EQ(neighbor->chassis_id_subtype(), "mac");
  EXPECT_EQ(neighbor->port_id(), "ccsw1");
  EXPECT_EQ(neighbor->port_id_subtype(), "ifname");
  EXPECT_EQ(neighbor->port_description(), "ccsw1");
  EXPECT_EQ(neighbor->port(), "ccsw1");
  EXPECT_EQ(neighbor->ttl_s(), 4u);
  EXPECT_FALSE(neighbor->has_max_frame_size());
  EXPECT_EQ(neighbor->source(), "");
}

TEST(LldpFrameTest, LocalPortIdNamesThePort) {
  absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(Fixture("leaf1-local.bin"));
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->port_id_subtype(), "local");
  EXPECT_EQ(neighbor->port(), "Ethernet1/2");
  EXPECT_EQ(neighbor->port_description(), "node1 mlx5_1");
}

TEST(LldpFrameTest, MacPortIdLeavesThePortToTheDescription) {
  absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(Fixture("leaf1-mac.bin"));
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->port_id_subtype(), "mac");
  EXPECT_EQ(neighbor->port_id(), "42:19:7e:cb:cd:02");
  EXPECT_EQ(neighbor->port(), "ccsw1");
}

TEST(LldpFrameTest, ShutdownFrameParsesWithTtlZero) {
  absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(Fixture("leaf1-shutdown.bin"));
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->ttl_s(), 0u);
  EXPECT_EQ(neighbor->port(), "ccsw1");
}

TEST(LldpFrameTest, MaxFrameSizeVlanTagAndPadding) {
  const std::string mfs = Tlv(127, std::string("\x00\x12\x0f\x04\x24\x04", 6));  // 9220
  const std::string other_org = Tlv(127, std::string("\x00\x80\xc2\x01\x00\x64", 6));
  std::string frame = kHeader.substr(0, 12) + std::string("\x81\x00\x00\x64", 4) +
                      kHeader.substr(12) + kChassis + kPort + kTtl + other_org + mfs +
                      Tlv(5, "leaf07") + kEnd + std::string(20, '\0');
  absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(frame);
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->max_frame_size(), 9220u);
  EXPECT_EQ(neighbor->switch_name(), "leaf07");
  EXPECT_EQ(neighbor->chassis_id(), "44:38:39:3d:d7:91");
  EXPECT_EQ(neighbor->port(), "swp7");
  EXPECT_EQ(neighbor->ttl_s(), 120u);
}

TEST(LldpFrameTest, NoEndTlvIsTheFrameEnd) {
  absl::StatusOr<v1::LinkNeighbor> neighbor =
      ParseLldpFrame(kHeader + kChassis + kPort + kTtl + Tlv(5, "leaf1"));
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->switch_name(), "leaf1");
}

TEST(LldpFrameTest, HiddenBytesAreEscapedAndTrailingNulsDropped) {
  absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(
      Frame(Tlv(5, std::string("leaf\x1b[2J\n1\0\0", 12)) + Tlv(4, std::string("a\0b", 3))));
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->switch_name(), "leaf\\x1b[2J\\x0a1");
  EXPECT_EQ(neighbor->port_description(), "a\\x00b");
}

TEST(LldpFrameTest, NetworkAddressChassisId) {
  const std::string chassis = Tlv(1, std::string("\x05\x01\x0a\x00\x00\x01", 6));
  absl::StatusOr<v1::LinkNeighbor> neighbor =
      ParseLldpFrame(kHeader + chassis + kPort + kTtl + kEnd);
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->chassis_id_subtype(), "ip");
  EXPECT_EQ(neighbor->chassis_id(), "10.0.0.1");
}

TEST(LldpFrameTest, ReservedSubtypeIsShownAsHex) {
  const std::string chassis = Tlv(1, std::string("\x09\xff\x00", 3));
  absl::StatusOr<v1::LinkNeighbor> neighbor =
      ParseLldpFrame(kHeader + chassis + kPort + kTtl + kEnd);
  ASSERT_TRUE(neighbor.ok()) << neighbor.status();
  EXPECT_EQ(neighbor->chassis_id_subtype(), "subtype 9");
  EXPECT_EQ(neighbor->chassis_id(), "ff:00");
}

TEST(LldpFrameTest, RefusesWhatIsNotAnLldpFrame) {
  ExpectRefused("", "shorter than an Ethernet header");
  ExpectRefused(std::string("\x01\x00\x5e\x00\x00\x01", 6) + Frame("").substr(6),
                "not to an LLDP group address");
  std::string ipv4 = Frame("");
  ipv4[12] = 0x08;
  ipv4[13] = 0x00;
  ExpectRefused(ipv4, "ethertype 0x0800");
  ExpectRefused(kHeader.substr(0, 12) + std::string("\x81\x00\x00", 3), "inside its VLAN tag");
  ExpectRefused(Frame("") + std::string(kMaxLldpFrameBytes, '\0'), "this agent reads");
}

TEST(LldpFrameTest, RefusesEveryMalformedTlv) {
  // A length past the frame's end, and a header cut in half.
  ExpectRefused(kHeader + kChassis + kPort + std::string("\x06\x02\x00", 3), "but the frame has 1");
  ExpectRefused(kHeader + kChassis + kPort + kTtl + std::string("\x0a", 1), "one byte left");
  ExpectRefused(kHeader + kChassis + std::string("\x04\xff", 2) + "swp1", "says 255 bytes");
  // The mandatory TLVs: missing, out of order, repeated, of a wrong size.
  ExpectRefused(kHeader, "chassis ID TLV is missing");
  ExpectRefused(kHeader + kPort + kChassis + kTtl + kEnd, "out of 802.1AB's order");
  ExpectRefused(kHeader + kChassis + kPort + kEnd, "TTL TLV is missing");
  ExpectRefused(Frame(kChassis), "a second type 1 TLV");
  ExpectRefused(kHeader + kChassis + kPort + Tlv(3, "\x01") + kEnd, "TTL TLV is 1 bytes, not 2");
  ExpectRefused(kHeader + Tlv(1, "\x04") + kPort + kTtl + kEnd, "802.1AB allows 2 to 256");
  ExpectRefused(kHeader + Tlv(1, std::string(300, 'x')) + kPort + kTtl + kEnd,
                "802.1AB allows 2 to 256");
  ExpectRefused(kHeader + Tlv(1, "\x04\x01\x02") + kPort + kTtl + kEnd,
                "MAC address of 2 bytes, not 6");
  ExpectRefused(kHeader + kChassis + Tlv(2, "\x03\x01") + kTtl + kEnd,
                "port ID is a MAC address of 1 bytes");
  // Optional TLVs: over 255 bytes, repeated, a short organisation TLV, a
  // maximum frame size of the wrong size, an End TLV with a length.
  ExpectRefused(Frame(Tlv(5, std::string(256, 'a'))), "at most 255");
  ExpectRefused(Frame(Tlv(4, std::string(300, 'a'))), "at most 255");
  ExpectRefused(Frame(Tlv(5, "a") + Tlv(5, "b")), "a second system name");
  ExpectRefused(Frame(Tlv(4, "a") + Tlv(4, "b")), "a second port description");
  ExpectRefused(Frame(Tlv(127, std::string("\x00\x12", 2))), "shorter than its OUI");
  ExpectRefused(Frame(Tlv(127, std::string("\x00\x12\x0f\x04\x05", 5))),
                "maximum frame size TLV is 5 bytes");
  ExpectRefused(kHeader + kChassis + kPort + kTtl + Tlv(0, "x"), "End TLV has a length");
}

TEST(LldpFrameTest, EveryTruncationOfARealFrameIsRefusedOrParsedNeverOverread) {
  const std::string frame = Fixture("leaf1-local.bin");
  for (size_t size = 0; size < frame.size(); ++size) {
    absl::StatusOr<v1::LinkNeighbor> neighbor = ParseLldpFrame(frame.substr(0, size));
    if (neighbor.ok()) {
      // Cut on a TLV boundary after the mandatory TLVs: a shorter neighbour.
      EXPECT_EQ(neighbor->chassis_id(), "42:19:7e:cb:cd:02") << size;
    }
  }
  EXPECT_TRUE(ParseLldpFrame(frame).ok());
}

}  // namespace
}  // namespace clustercert::agent::inventory
