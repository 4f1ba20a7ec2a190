#include "agent/peer/tcp_streams.h"

#include <array>

#include "gtest/gtest.h"

namespace clustercert::agent::peer {
namespace {

TEST(StreamHeaderTest, RoundTripsEveryField) {
  StreamHeader header;
  header.kind = StreamKind::kReverse;
  header.index = 63;
  header.count = 64;
  header.message_bytes = 64 << 20;
  header.bidirectional = true;
  const std::array<uint8_t, StreamHeader::kSize> bytes = header.Encode();
  EXPECT_EQ(bytes[0], 'C');
  EXPECT_EQ(bytes[3], 'P');
  absl::StatusOr<StreamHeader> decoded = StreamHeader::Decode(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->kind, StreamKind::kReverse);
  EXPECT_EQ(decoded->index, 63);
  EXPECT_EQ(decoded->count, 64);
  EXPECT_EQ(decoded->message_bytes, 64u << 20);
  EXPECT_TRUE(decoded->bidirectional);
}

TEST(StreamHeaderTest, RejectsForeignBytes) {
  std::array<uint8_t, StreamHeader::kSize> http{};
  const char text[] = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i < http.size(); ++i) http[i] = static_cast<uint8_t>(text[i]);
  EXPECT_TRUE(absl::IsInvalidArgument(StreamHeader::Decode(http).status()));

  std::array<uint8_t, StreamHeader::kSize> future = StreamHeader{}.Encode();
  future[4] = 9;
  EXPECT_EQ(StreamHeader::Decode(future).status().message(),
            "the peer speaks tcp-engine protocol version 9, this agent speaks 1");
  std::array<uint8_t, StreamHeader::kSize> kind = StreamHeader{}.Encode();
  kind[5] = 7;
  EXPECT_FALSE(StreamHeader::Decode(kind).ok());
}

TEST(AlignedBufferTest, IsPageAlignedAndKeepsItsSize) {
  absl::StatusOr<AlignedBuffer> buffer = AlignedBuffer::Allocate(65536 + 17);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 4096, 0u);
  EXPECT_EQ(buffer->size(), 65536u + 17);
}

}  // namespace
}  // namespace clustercert::agent::peer
