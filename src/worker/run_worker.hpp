// The one worker (redflow/worker.hpp), composed of every role a worker can
// serve: the tile (src/net/tile_worker.*), the stream node
// (src/stream/stream_worker.*), the SPITS Task Manager
// (src/spits/task_manager_role.*), on one WorkerSession (src/net/worker_session.*).
#pragma once

#include <string_view>

#include "redflow/worker.hpp"

namespace redflow::worker {

// run_worker, with `origin` naming where the actor functions came from (the
// plugin files), for their versions in HELLO.
Status run(const WorkerOptions& options, const Registry& actors, const stream::OperatorRegistry& operators, std::string_view origin);

}  // namespace redflow::worker
