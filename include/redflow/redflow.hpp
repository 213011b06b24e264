// The one header a redflow user includes.
#pragma once

#include "redflow/actor_context.hpp"
#include "redflow/graph.hpp"
#include "redflow/npy.hpp"
#include "redflow/redundancy.hpp"
#include "redflow/registry.hpp"
#include "redflow/runtime.hpp"
#include "redflow/schedule.hpp"
#include "redflow/status.hpp"
#include "redflow/trace.hpp"
#include "redflow/visualize.hpp"
