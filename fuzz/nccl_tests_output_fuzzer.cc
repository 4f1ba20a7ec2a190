// nccl-tests' all_reduce_perf output as the external launcher captures it:
// header lines, data rows and the closing bandwidth lines, any of them cut
// or garbled.

#include <cstddef>
#include <cstdint>
#include <string>

#include "sweep/nccl_tests_output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  clustercert::sweep::ParseNcclTestsOutput(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
