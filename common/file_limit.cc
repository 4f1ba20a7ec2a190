#include "common/file_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace clustercert {

OpenFileLimit RaiseOpenFileLimit(uint64_t wanted) {
  OpenFileLimit limit;
  rlimit current{};
  if (getrlimit(RLIMIT_NOFILE, &current) != 0) return limit;
  limit.before = limit.after = current.rlim_cur;
  limit.hard = current.rlim_max;
  if (current.rlim_cur >= wanted) return limit;
  rlimit raised = current;
  raised.rlim_cur = std::min<rlim_t>(wanted, current.rlim_max);
  if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit.after = raised.rlim_cur;
  return limit;
}

}  // namespace clustercert
