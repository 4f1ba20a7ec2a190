#include "controller/collectives/store_relay.h"

namespace clustercert::controller {

StoreRelay::StoreRelay(size_t nodes) : sent_(nodes, 0) {}

void StoreRelay::Publish(size_t from,
                         const google::protobuf::RepeatedPtrField<v1::StoreEntry>& entries) {
  for (const v1::StoreEntry& entry : entries) entries_.push_back({from, entry});
}

std::vector<v1::StoreEntry> StoreRelay::TakeFor(size_t to) {
  std::vector<v1::StoreEntry> out;
  if (to >= sent_.size()) return out;
  for (size_t i = sent_[to]; i < entries_.size(); ++i) {
    if (entries_[i].from != to) out.push_back(entries_[i].entry);
  }
  sent_[to] = entries_.size();
  return out;
}

}  // namespace clustercert::controller
