#pragma once

#include <string>

namespace clustercert {

// "Cannot allocate memory" for an errno, or for a call that returns a
// positive errno itself (verbs, pthreads). errno 0 reads as EIO
// ("Input/output error"): a call that failed without saying why still gets a
// sentence. The project's one way to spell an errno.
std::string ErrnoText(int err);

}  // namespace clustercert
