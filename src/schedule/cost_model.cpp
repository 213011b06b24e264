// CostModel (cost_model.hpp): measured actor costs, learned from traces and
// kept in a file.
#include "redflow/cost_model.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace redflow {

namespace {

using nlohmann::json;

// A special actor: its cost is 0 by design (it runs on the driver or only sets pointers).
bool special(const Registry& registry, const ActorNode& a) {
  const ActorSpec* spec = registry.find(a.function);
  return spec != nullptr && (spec->on_driver || spec->alias != ActorAlias::kNone);
}

// The run of traced actor `t` measures the user's actor `original`: the
// actor itself, or one of its replicas (NAME.rK), not its vote (NAME.compare).
bool measures(const TracedActor& t) {
  if (t.original.empty() || t.name == t.original) return true;
  return t.name.size() > t.original.size() + 2 && t.name.compare(0, t.original.size(), t.original) == 0 &&
         t.name.compare(t.original.size(), 2, ".r") == 0;
}

}  // namespace

double CostEntry::sd_s() const { return runs > 1 ? std::sqrt(m2 / static_cast<double>(runs - 1)) : 0; }

std::string CostModel::kind(const Graph& g, ActorId actor) {
  const ActorNode& a = g.actor(actor);
  std::string k = a.function;
  k += '|';
  k += a.args;
  k += '|';
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    if (i > 0) k += ',';
    k += std::to_string(g.data(a.inputs[i]).bytes);
  }
  k += '>';
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    if (i > 0) k += ',';
    k += std::to_string(g.data(a.outputs[i]).bytes);
  }
  return k;
}

bool CostModel::add(const std::string& kind, double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return false;
  CostEntry& e = entries_[kind];
  auto take = [&e](double x) {
    e.runs = std::min(e.runs + 1, kMemory);
    const double delta = x - e.mean_s;
    e.mean_s += delta / static_cast<double>(e.runs);
    e.m2 += delta * (x - e.mean_s);
    // Forgetting: at kMemory the spread is kept for kMemory runs, not more.
    if (e.runs == kMemory) e.m2 *= static_cast<double>(kMemory - 1) / static_cast<double>(kMemory);
  };
  if (e.runs == 0) {
    take(seconds);
    return false;
  }
  const double spread = 4 * e.sd_s();
  const bool far = (seconds > kFar * e.mean_s || seconds * kFar < e.mean_s) && std::abs(seconds - e.mean_s) > spread;
  if (!far) {
    e.far_s = 0;
    take(seconds);
    return false;
  }
  // One far run may be a descheduled thread; two on the same side in a row are a change.
  if (e.far_s > 0 && (e.far_s > e.mean_s) == (seconds > e.mean_s)) {
    const double first = e.far_s;
    const std::uint64_t stale = e.stale + 1;
    e = CostEntry{};
    e.stale = stale;
    take(first);
    take(seconds);
    return true;
  }
  e.far_s = seconds;
  return false;
}

const CostEntry* CostModel::find(const std::string& kind) const {
  const auto it = entries_.find(kind);
  return it == entries_.end() ? nullptr : &it->second;
}

CostLearning CostModel::learn(const Graph& g, const ExecutionTrace& trace, const Registry& registry) {
  CostLearning l;
  std::set<std::string> kinds;
  for (const TracedActor& t : trace.actors) {
    if (!measures(t) || t.end_s < t.start_s) continue;
    const auto id = g.find_actor(t.original.empty() ? t.name : t.original);
    if (!id || special(registry, g.actor(*id))) continue;
    const std::string k = kind(g, *id);
    const bool fresh = find(k) == nullptr;
    if (add(k, t.end_s - t.start_s)) ++l.restarted;
    l.added += fresh;
    kinds.insert(k);
    ++l.samples;
  }
  l.kinds = kinds.size();
  return l;
}

std::size_t CostModel::apply(Graph& g, const Registry& registry, unsigned cores_per_tile, double ops_per_second_per_core) const {
  std::size_t n = 0;
  for (ActorId id = 0; id < g.actors().size(); ++id) {
    const ActorNode& a = g.actor(id);
    if (a.work > 0 || special(registry, a)) continue;
    const CostEntry* e = find(kind(g, id));
    if (e == nullptr || e->mean_s <= 0) continue;
    g.mutable_actor(id).work = e->mean_s * static_cast<double>(std::max(cores_per_tile, 1u)) * ops_per_second_per_core;
    ++n;
  }
  return n;
}

void CostModel::merge_missing(const CostModel& other) {
  for (const auto& [k, e] : other.entries_) entries_.emplace(k, e);
}

Result<CostModel> CostModel::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return CostModel{};
    return Status::IOError("cost model '" + path + "': cannot read it");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bad = "cost model '" + path + "' is not one redflow wrote (delete it to start afresh): ";
  const json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument(bad + "not JSON");
  if (!j.is_object() || !j.contains("redflow_costs") || j["redflow_costs"] != 1 || !j.contains("kinds") || !j["kinds"].is_array())
    return Status::InvalidArgument(bad + "no {\"redflow_costs\": 1, \"kinds\": [...]}");
  CostModel m;
  std::size_t i = 0;
  for (const json& k : j["kinds"]) {
    const std::string where = "kinds[" + std::to_string(i++) + "]";
    // Counts are bounded so that turning them into integers is defined.
    auto number = [&](const char* name) {
      return k.contains(name) && k[name].is_number() && std::isfinite(k[name].get<double>()) && k[name].get<double>() >= 0 &&
             k[name].get<double>() < 1e15;
    };
    if (!k.is_object() || !k.contains("kind") || !k["kind"].is_string() || !number("runs") || !number("mean_s") || !number("m2") ||
        !number("far_s") || !number("stale"))
      return Status::InvalidArgument(bad + where + " needs a string kind and non-negative numbers runs, mean_s, m2, far_s, stale");
    CostEntry e;
    e.runs = std::min<std::uint64_t>(k["runs"].get<std::uint64_t>(), kMemory);
    e.mean_s = k["mean_s"].get<double>();
    e.m2 = k["m2"].get<double>();
    e.far_s = k["far_s"].get<double>();
    e.stale = k["stale"].get<std::uint64_t>();
    if (e.runs == 0) return Status::InvalidArgument(bad + where + ": runs is 0");
    if (!m.entries_.emplace(k["kind"].get<std::string>(), e).second) return Status::InvalidArgument(bad + where + ": its kind is listed twice");
  }
  return m;
}

Status CostModel::save(const std::string& path) const {
  json kinds = json::array();
  for (const auto& [k, e] : entries_)
    kinds.push_back({{"kind", k}, {"runs", e.runs}, {"mean_s", e.mean_s}, {"m2", e.m2}, {"far_s", e.far_s}, {"stale", e.stale}});
  const std::string text = json{{"redflow_costs", 1}, {"kinds", std::move(kinds)}}.dump(1) + "\n";
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return Status::IOError("cost model '" + path + "': cannot write " + tmp);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status::IOError("cost model '" + path + "': cannot replace it: " + ec.message());
  }
  return Status::Ok();
}

}  // namespace redflow
