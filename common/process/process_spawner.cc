#include "common/process/process_spawner.h"

namespace clustercert::process {

ProcessSpawner& LiveSpawner() {
  static LiveProcessSpawner* const spawner = new LiveProcessSpawner();  // never destroyed
  return *spawner;
}

}  // namespace clustercert::process
