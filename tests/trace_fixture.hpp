// A hand-made ExecutionTrace with one of everything the writers draw: driver
// and tile actors, replicas, a re-execution, a steal, an injected fault,
// transfers in every direction, slot use and marks.
#pragma once

#include "redflow/trace.hpp"

namespace redflow::testing {

inline ExecutionTrace sample_trace() {
  ExecutionTrace t;
  t.tiles = 2;
  t.cores_per_tile = 1;
  t.slots = 4;
  t.scheduler = "steal";
  t.redundancy = "2x-diff";
  t.makespan_s = 100e-6;
  auto actor = [&](ActorId id, std::string name, std::string original, int tile, unsigned replica, unsigned attempt, double s, double e) {
    TracedActor a;
    a.actor = id;
    a.name = std::move(name);
    a.original = std::move(original);
    a.tile = tile;
    a.replica = replica;
    a.attempt = attempt;
    a.start_s = s * 1e-6;
    a.end_s = e * 1e-6;
    t.actors.push_back(a);
    return t.actors.size() - 1;
  };
  actor(0, "split", "split", -1, 0, 0, 0, 4);
  actor(1, "work.r1", "work", 0, 1, 0, 10, 40);
  actor(2, "work.r2", "work", 1, 2, 0, 12, 38);
  actor(3, "work.compare", "work", -1, 0, 0, 41, 44);
  t.actors[actor(2, "work.r2", "work", 1, 2, 1, 45, 70)].faulty = true;
  t.actors[actor(4, "tail", "tail", 0, 0, 0, 72, 95)].stolen = true;
  actor(5, "join", "join", -1, 0, 0, 96, 100);
  auto transfer = [&](std::string data, int from, int to, std::size_t bytes, double s, double e) {
    t.transfers.push_back({std::move(data), from, to, bytes, s * 1e-6, e * 1e-6});
  };
  transfer("lo", -1, 0, 4096, 5, 9);
  transfer("hi", -1, 1, 4096, 5, 11);
  transfer("w.r1", 0, -1, 1024, 40, 41);
  transfer("w.r2", 1, 0, 1024, 70, 71);
  transfer("t", 0, -1, 1024, 95, 96);
  t.slot_use = {{0, 9e-6, 1}, {0, 40e-6, 2}, {0, 95e-6, 0}, {1, 11e-6, 1}, {1, 70e-6, 2}, {1, 80e-6, 0}};
  t.marks = {{"vote-failed", "work", 1, 44e-6}};
  return t;
}

}  // namespace redflow::testing
