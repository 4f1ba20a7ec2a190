#pragma once

#include "agent/inventory/clock_source.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// Fills v1::Clock from one ClockSource reading. A reading that cannot say
// whether the clock is synchronized leaves `synchronized` unset with an
// Unknown carrying the source's explanation; a failed read leaves everything
// unset.
class ClockCollector {
 public:
  // `source` must outlive the collector.
  explicit ClockCollector(ClockSource& source);

  v1::Clock Collect() const;

 private:
  ClockSource& source_;
};

}  // namespace clustercert::agent::inventory
