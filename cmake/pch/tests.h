// The test suites' precompiled headers: the common set and GoogleTest's.
#pragma once

#include "common.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
