// Profiles written and read back (profile.hpp).
#include "stream/profile.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "stream/token_queue.hpp"

namespace redflow::stream {

std::vector<StreamProfile> sample_streams(const Program& program, const std::vector<std::unique_ptr<TokenQueue>>& queues) {
  std::vector<StreamProfile> out;
  for (std::size_t i = 0; i < program.streams().size() && i < queues.size(); ++i) {
    const auto& st = program.streams()[i];
    if (!queues[i]) continue;
    const std::uint64_t read = queues[i]->popped();  // first: then written >= read
    const std::uint64_t written = queues[i]->pushed();
    out.push_back(StreamProfile{program.instances()[st.from].name, program.instances()[st.to].name, written, written - read});
  }
  return out;
}

void add_firing_span(std::vector<FiringSpan>& spans, double start_s, double end_s) {
  constexpr double kSpanGap = 50e-6;
  constexpr std::size_t kMaxSpans = 20000;
  if (!spans.empty() && (start_s - spans.back().end_s < kSpanGap || spans.size() >= kMaxSpans)) spans.back().end_s = end_s;
  else spans.push_back(FiringSpan{start_s, end_s});
}

std::string profile_json(const RunResult& r) {
  nlohmann::json j{{"seconds", r.seconds}, {"operators", nlohmann::json::array()}, {"streams", nlohmann::json::array()}};
  for (const auto& o : r.operators) j["operators"].push_back({{"name", o.name}, {"firings", o.firings}, {"busy_s", o.busy_s}});
  for (const auto& s : r.streams) j["streams"].push_back({{"from", s.from}, {"to", s.to}, {"tokens", s.tokens}});
  return j.dump(2) + "\n";
}

PlacementGraph placement_graph(const Program& program) {
  PlacementGraph g;
  for (const auto& i : program.instances()) g.operators.push_back(i.name);
  for (const auto& s : program.streams())
    g.streams.push_back(PlacementGraph::Stream{static_cast<unsigned>(s.from), static_cast<unsigned>(s.to), 1.0});
  return g;
}

Status annotate(PlacementGraph& g, const Program& program, const std::string& text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("operators") || !j.contains("streams") || !j["operators"].is_array() ||
      !j["streams"].is_array())
    return Status::InvalidArgument(fmt::format("profile {}: not a stream profile (JSON with operators[] and streams[], as `redflow stream --profile` writes)", source));
  std::vector<double> busy(program.instances().size(), -1);
  try {
    for (const auto& o : j["operators"]) {
      const std::string name = o.at("name").get<std::string>();
      const std::size_t at = program.find(name);
      if (at == std::string::npos) return Status::InvalidArgument(fmt::format("profile {}: operator '{}' is not in the program", source, name));
      busy[at] = o.at("busy_s").get<double>();
    }
    // Streams in program order per (from, to) pair: parallel streams match by position.
    std::vector<bool> taken(g.streams.size(), false);
    for (const auto& s : j["streams"]) {
      const std::size_t from = program.find(s.at("from").get<std::string>()), to = program.find(s.at("to").get<std::string>());
      bool found = false;
      for (std::size_t k = 0; k < g.streams.size() && !found; ++k)
        if (!taken[k] && g.streams[k].from == from && g.streams[k].to == to) {
          taken[k] = found = true;
          g.streams[k].tokens = s.at("tokens").get<double>();
        }
      if (!found)
        return Status::InvalidArgument(fmt::format("profile {}: stream {} -> {} is not in the program", source, s.at("from").get<std::string>(),
                                                   s.at("to").get<std::string>()));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(fmt::format("profile {}: {}", source, e.what()));
  }
  for (std::size_t i = 0; i < busy.size(); ++i)
    if (busy[i] < 0) return Status::InvalidArgument(fmt::format("profile {}: operator '{}' of the program has no entry", source, program.instances()[i].name));
  g.busy = std::move(busy);
  return Status::Ok();
}

Result<ProgramPlacement> place_program(const Program& program, unsigned nodes, std::string_view algo_name, const std::string& profile_text,
                                       const std::string& source, std::uint64_t seed) {
  auto algo = parse_place_algo(algo_name);
  if (!algo.ok()) return algo.status();
  ProgramPlacement out{placement_graph(program), {}};
  const bool weighted = *algo == PlaceAlgo::kSmartMin || *algo == PlaceAlgo::kSmartMax;
  if (weighted && profile_text.empty())
    return Status::InvalidArgument("placement " + std::string(algo_name) +
                                   " weighs streams and operators by a profile: give --profile FILE.json (written by `redflow stream PROGRAM --profile FILE.json`)");
  if (!profile_text.empty()) REDFLOW_RETURN_IF_ERROR(annotate(out.graph, program, profile_text, source));
  auto placement = place(out.graph, nodes, *algo, seed);
  if (!placement.ok()) return placement.status();
  out.placement = std::move(*placement);
  return out;
}

}  // namespace redflow::stream
