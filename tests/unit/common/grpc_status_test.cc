#include "common/grpc_status.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace clustercert {
namespace {

// Issue 15: a megabyte request field echoed into an error went past gRPC's
// metadata limit, and the caller saw a metadata error instead of the real
// one. The message is cut at 2 KiB and says how much was cut.
TEST(GrpcStatusTest, AMegabyteMessageIsCutAndKeepsItsCodeAndStart) {
  const std::string field(1 << 20, 'A');
  const absl::Status status =
      absl::InvalidArgumentError("test \"" + field + "\" is not one of write_bw, send_bw");
  const grpc::Status converted = ToGrpcStatus(status);
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string& message = converted.error_message();
  EXPECT_LE(message.size(), kMaxStatusMessageBytes + 32);
  EXPECT_TRUE(absl::StartsWith(message, "test \"AAAA")) << message.substr(0, 40);
  const size_t cut = status.message().size() - kMaxStatusMessageBytes;
  EXPECT_TRUE(absl::EndsWith(message, "... (" + std::to_string(cut) + " bytes cut)"))
      << message.substr(message.size() - 40);
}

TEST(GrpcStatusTest, ShortMessagesAndOkPassUnchanged) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const grpc::Status converted = ToGrpcStatus(absl::NotFoundError("no endpoint ep-1"));
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(converted.error_message(), "no endpoint ep-1");
  EXPECT_EQ(FromGrpcStatus(converted), absl::NotFoundError("no endpoint ep-1"));
}

TEST(GrpcStatusTest, TheCutNeverSplitsAUtf8Character) {
  // "é" is two bytes; with the limit on its second byte the cut moves before it.
  const std::string text = "ab\xc3\xa9" + std::string(10, 'z');
  EXPECT_EQ(TruncateMessage(text, 3), "ab... (12 bytes cut)");
  EXPECT_EQ(TruncateMessage(text, 4), "ab\xc3\xa9... (10 bytes cut)");
}

TEST(GrpcStatusTest, EchoedValuesAreClippedAndEscaped) {
  EXPECT_EQ(ClipValue("mlx5_0"), "mlx5_0");
  EXPECT_EQ(ClipValue(std::string("a\0b\n", 4)), "a\\000b\\n");
  const std::string clipped = ClipValue(std::string(1 << 20, 'x'));
  EXPECT_EQ(clipped, std::string(kMaxEchoedValueBytes, 'x') + "... (1048576 bytes)");
}

}  // namespace
}  // namespace clustercert
