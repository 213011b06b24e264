// Probation (docs/redundancy.md, "Quarantine"): the known-answer test that
// tells a tile hit by transient faults from a permanently faulty one. A
// tile that lost RuntimeOptions::quarantine_after votes in one execution
// left service at once (TilePlaces::lose_vote); here, between executions,
// it runs an actor whose right output the driver computes itself, five
// times. Two or more runs right: it serves again. Otherwise it stays out,
// and RuntimeOptions::probation_rounds failed tests in a row quarantine it
// for good.
//
// Why a known-answer test: a vote tells which result was wrong, not whether
// the tile will keep getting it wrong. A transient upset does not repeat,
// so a healthy tile passes at once; a tile that corrupts what it computes
// fails every time. Two right of five, not a majority: a permanently faulty
// tile gets none right, while a healthy one hit by transient flips at a rate
// p fails only with 4 or 5 wrong (5p^4 roughly: 3e-5 at p = 0.05), so it is
// not kept out of service by bad luck. The test uses an actor of the graph being run (one
// that reads only inputs and constants, so its inputs are at hand between
// executions): the tile already holds its function, and a fault that shows
// in that graph's work shows in the test.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

namespace {

constexpr unsigned kProbeRuns = 5;
constexpr unsigned kProbePasses = 2;  // right runs that pass the test
// Attempts of test runs are numbered from here, so fault injection decides
// each afresh and never as for an actor's own runs.
constexpr unsigned kProbeAttempts = 1u << 24;

}  // namespace

ActorId Engine::probe_actor(const Plan& plan) const {
  for (ActorId a = 0; a < plan.actors.size(); ++a) {
    const PlanActor& pa = plan.actors[a];
    const ActorHot& hot = plan.hot[a];
    const std::size_t bytes = plan.data[hot.output].bytes;
    if (pa.on_driver || pa.alias != ActorAlias::kNone || hot.function == nullptr) continue;
    if (bytes == 0 || bytes > options_.slot_bytes || hot.input_count + pa.runs > options_.slots) continue;
    bool given = true;
    for (std::uint32_t i = 0; i < hot.input_count && given; ++i) {
      const DataKind kind = plan.data[plan.inputs[hot.first_input + i]].kind;
      given = kind == DataKind::kInput || kind == DataKind::kConstant;
    }
    if (given) return a;
  }
  return kNone;
}

bool Engine::known_answer_test(Job& job, unsigned t, ActorId a, std::span<const std::byte> answer) {
  const Plan& plan = *job.plan;
  const PlanActor& pa = plan.actors[a];
  const ActorHot& hot = plan.hot[a];
  Tile& tile = *tiles_[t];
  // The plan's actor table, which a tile out of service was not sent.
  if (!configuration_.configure(t, tile, plan, job.request->fault_spec).ok()) return false;
  tile.clear_all();
  std::vector<SlotId> inputs;
  for (std::uint32_t i = 0; i < hot.input_count; ++i) {
    const DataId d = plan.inputs[hot.first_input + i];
    DataNodeMessage m;
    m.tag = DataTag{job.execution, d, 0};
    m.slot = static_cast<SlotId>(i);
    m.bytes = plan.data[d].bytes;
    m.payload = job.state->home[d];
    if (!tile.data_node(m).ok()) return false;
    inputs.push_back(m.slot);
  }
  std::vector<SlotId> extra;
  for (unsigned run = 1; run < pa.runs; ++run) extra.push_back(static_cast<SlotId>(hot.input_count + run));
  std::vector<std::byte> got(answer.size());
  unsigned right = 0;
  for (unsigned run = 0; run < kProbeRuns; ++run) {
    ActorMessage m;
    m.actor = a;
    m.execution = job.execution;
    m.input_slots = inputs;
    m.output_slot = static_cast<SlotId>(hot.input_count);
    m.extra_output_slots = extra;
    m.max_rounds = 1;
    m.output_tag = DataTag{job.execution, hot.output, 0};
    m.output_bytes = answer.size();
    m.want_checksum = tile.checks_values();
    m.fault_execution = job.request->fault_execution;
    m.replica = pa.replica;
    m.attempt = kProbeAttempts + probes_++;
    const Completion done = tile.actor(m);
    if (done.lost || tile.lost()) return false;
    if (!done.ok || !done.agreed) continue;
    ReadSlotMessage read;
    read.slot = done.output_slot;
    read.tag = m.output_tag;
    read.bytes = answer.size();
    if (tile.read_slot(read, got) && std::equal(got.begin(), got.end(), answer.begin())) ++right;
  }
  tile.clear_all();
  return right >= kProbePasses;
}

void Engine::test_probation(Job& job) {
  bool any = false;
  for (unsigned t = 0; t < tiles() && !any; ++t) any = places_.on_probation(t);
  if (!any) return;  // the common case, and allocation-free
  tested_in_.resize(tiles());
  std::vector<unsigned> due;
  for (unsigned t = 0; t < tiles(); ++t)
    if (places_.on_probation(t) && !places_.lost(t) && tested_in_[t] != job.execution) due.push_back(t);
  if (due.empty()) return;
  const Plan& plan = *job.plan;
  const ActorId a = probe_actor(plan);
  if (a == kNone) return;  // this graph cannot test a tile: it stays out until one that can runs
  // The right answer, from the driver's own run of the actor on main memory.
  const ActorHot& hot = plan.hot[a];
  std::vector<std::span<const std::byte>> inputs;
  for (std::uint32_t i = 0; i < hot.input_count; ++i) inputs.push_back(job.state->home[plan.inputs[hot.first_input + i]]);
  std::vector<std::byte> answer(plan.data[hot.output].bytes);
  ActorContext ctx(plan.name(a), plan.args(a), inputs, answer, nullptr);
  invoke_actor(*hot.function, ctx);
  if (ctx.failure()) return;  // the execution names the actor's failure; no test with it
  for (unsigned t : due) {
    tested_in_[t] = job.execution;
    ++job.probation_tests;
    const std::string who = "tile " + std::to_string(t);
    if (known_answer_test(job, t, a, answer)) {
      places_.pass_probation(t);
      job.reinstated.push_back(t);
      mark(job, "reinstated", who + " passed a known-answer test of actor '" + std::string(plan.name(a)) + "'", static_cast<int>(t));
    } else if (tiles_[t]->lost()) {
      places_.lose(t);
    } else if (places_.fail_probation(t)) {
      mark(job, "quarantine-for-good", who + " failed " + std::to_string(options_.probation_rounds) + " known-answer tests in a row: out of service for good",
           static_cast<int>(t));
    } else {
      mark(job, "probation", who + " failed a known-answer test (" + std::to_string(places_.failed_probations(t)) + " of " +
                                 std::to_string(options_.probation_rounds) + ")", static_cast<int>(t));
    }
  }
}

}  // namespace redflow::runtime
