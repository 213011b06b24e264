// The one header a redflow user includes: every model and what reads their
// results. Graphs of actors with redundancy (graph.hpp, runtime.hpp,
// redundancy.hpp, schedule.hpp), SPITS bags of tasks (spits.hpp), REM
// programs over a key-value store (rem.hpp), SCORE stream programs
// (stream.hpp), and their traces as Chrome traces and Gantt charts
// (trace.hpp, visualize.hpp). What they share: the options of a driver that
// meets worker processes (cluster.hpp), one report shape with a JSON form
// (report.hpp), named byte values (bytes.hpp), the worker (worker.hpp), and
// the client of a long-lived `redflow server` (client.hpp).
// docs/guide.md walks through them.
#pragma once

#include "redflow/actor_context.hpp"
#include "redflow/bytes.hpp"
#include "redflow/client.hpp"
#include "redflow/cluster.hpp"
#include "redflow/cost_model.hpp"
#include "redflow/graph.hpp"
#include "redflow/npy.hpp"
#include "redflow/redundancy.hpp"
#include "redflow/registry.hpp"
#include "redflow/report.hpp"
#include "redflow/rem.hpp"
#include "redflow/runtime.hpp"
#include "redflow/schedule.hpp"
#include "redflow/spits.hpp"
#include "redflow/status.hpp"
#include "redflow/stream.hpp"
#include "redflow/trace.hpp"
#include "redflow/visualize.hpp"
#include "redflow/worker.hpp"
