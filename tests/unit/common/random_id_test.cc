#include "common/random_id.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace clustercert {
namespace {

// Issue 15: "ep-1", "ep-2", ... let any caller close another's endpoint.
TEST(RandomIdTest, IdsAre128RandomBitsInHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<std::string> id = RandomId("ep-");
    ASSERT_TRUE(id.ok()) << id.status();
    ASSERT_EQ(id->size(), 3u + 32u) << *id;
    EXPECT_EQ(id->substr(0, 3), "ep-");
    EXPECT_EQ(id->find_first_not_of("0123456789abcdef", 3), std::string::npos) << *id;
    EXPECT_TRUE(seen.insert(*id).second) << "repeated " << *id;
  }
}

}  // namespace
}  // namespace clustercert
