#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace clustercert {

// What the agent holds for a controller under a lease (peer-test endpoints,
// collective jobs): each entry belongs to the caller that added it, lives
// until it is removed or until its lease passes without a Touch, and is found
// only by its owner: another caller's id reads as missing, the same as an id
// that never existed, so ids are the capability to drive an entry.
//
// Not locked: the registry that owns the table holds its mutex around every
// call, and destroys what Remove and TakeExpired hand back after unlocking
// (freeing a QP or killing a worker must not stall other callers).
template <typename T>
class LeaseTable {
 public:
  struct Entry {
    T value;
    std::string owner;  // the caller that added it
    absl::Duration lease;
    absl::Time expires;
  };
  using Map = std::map<std::string, Entry>;

  void Add(std::string id, T value, std::string owner, absl::Duration lease, absl::Time now) {
    entries_.emplace(std::move(id), Entry{std::move(value), std::move(owner), lease, now + lease});
  }

  // The caller's entry; nullptr for a missing id and for another caller's.
  Entry* Find(const std::string& id, const std::string& caller) {
    auto found = entries_.find(id);
    if (found == entries_.end() || found->second.owner != caller) return nullptr;
    return &found->second;
  }
  // Find, renewing the lease: it runs `lease` from `now` (never shorter than
  // an extension already granted, e.g. for a run's duration).
  Entry* Touch(const std::string& id, const std::string& caller, absl::Time now) {
    Entry* entry = Find(id, caller);
    if (entry != nullptr) entry->expires = std::max(entry->expires, now + entry->lease);
    return entry;
  }

  // Takes the caller's entry out of the table; false when Find finds none.
  bool Remove(const std::string& id, const std::string& caller, Entry* removed) {
    auto found = entries_.find(id);
    if (found == entries_.end() || found->second.owner != caller) return false;
    *removed = std::move(found->second);
    entries_.erase(found);
    return true;
  }

  // Takes out every entry whose lease ran out by `now`, for the caller to log
  // and destroy.
  std::vector<std::pair<std::string, Entry>> TakeExpired(absl::Time now) {
    std::vector<std::pair<std::string, Entry>> expired;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.expires > now) {
        ++it;
        continue;
      }
      expired.emplace_back(it->first, std::move(it->second));
      it = entries_.erase(it);
    }
    return expired;
  }

  // Takes out everything (shutdown).
  Map TakeAll() { return std::exchange(entries_, Map()); }

  size_t size() const { return entries_.size(); }
  // Every entry, for checks across them (a busy device, total store bytes).
  const Map& entries() const { return entries_; }

 private:
  Map entries_;
};

}  // namespace clustercert
