#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/collective.pb.h"

namespace clustercert::controller {

// The controller's half of the rendezvous store: every key a node's ranks
// set is relayed to every other node of the job, once. gloo's full mesh and
// NCCL's unique id both need nothing more.
class StoreRelay {
 public:
  explicit StoreRelay(size_t nodes);
  // Keys node `from` published in its last poll.
  void Publish(size_t from, const google::protobuf::RepeatedPtrField<v1::StoreEntry>& entries);
  // Keys `to` has not been sent yet and did not publish itself.
  std::vector<v1::StoreEntry> TakeFor(size_t to);
  size_t keys() const { return entries_.size(); }

 private:
  struct Published {
    size_t from;
    v1::StoreEntry entry;
  };
  std::vector<Published> entries_;
  std::vector<size_t> sent_;  // per node: how many of entries_ it has seen
};

}  // namespace clustercert::controller
