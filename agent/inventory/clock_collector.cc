#include "agent/inventory/clock_collector.h"

#include "absl/strings/str_cat.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::agent::inventory {

ClockCollector::ClockCollector(ClockSource& source) : source_(source) {}

v1::Clock ClockCollector::Collect() const {
  v1::Clock clock;
  auto reading = source_.Read();
  if (!reading.ok()) {
    const std::string reason(reading.status().message());
    clock.set_source(absl::StrCat("clock unreadable: ", reason));
    AddUnknown(clock, "synchronized", "adjtimex", reason);
    AddUnknown(clock, "est_error_us", "adjtimex", reason);
    AddUnknown(clock, "max_error_us", "adjtimex", reason);
    return clock;
  }
  clock.set_source(reading->status.empty() ? reading->source
                                           : absl::StrCat(reading->source, ": ", reading->status));
  clock.set_unix_time_us(reading->unix_time_us);
  if (reading->synchronized.has_value()) {
    clock.set_synchronized(*reading->synchronized);
  } else {
    AddUnknown(clock, "synchronized", reading->source, reading->status);
  }
  if (reading->est_error_us.has_value()) clock.set_est_error_us(*reading->est_error_us);
  if (reading->max_error_us.has_value()) clock.set_max_error_us(*reading->max_error_us);
  return clock;
}

}  // namespace clustercert::agent::inventory
