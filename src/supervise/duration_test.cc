#include "supervise/duration.h"

#include <gtest/gtest.h>

namespace faultline::supervise {
namespace {

TEST(DurationTest, Forms) {
  EXPECT_DOUBLE_EQ(*ParseDuration("30m"), 1800);
  EXPECT_DOUBLE_EQ(*ParseDuration("5m"), 300);
  EXPECT_DOUBLE_EQ(*ParseDuration("2.5s"), 2.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDuration("90"), 90);
  EXPECT_FALSE(ParseDuration("soon").ok());
  EXPECT_FALSE(ParseDuration("5x").ok());
  EXPECT_FALSE(ParseDuration("").ok());
}

}  // namespace
}  // namespace faultline::supervise
