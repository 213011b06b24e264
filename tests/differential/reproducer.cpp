// Writing and reading reproducer directories (reproducer.hpp).
#include "reproducer.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace redflow::difftest {

namespace fs = std::filesystem;

namespace {

Status write_bytes(const fs::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) return Status::IOError("cannot write '" + path.string() + "'");
  return Status::Ok();
}

Result<std::vector<std::byte>> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open '" + path.string() + "'");
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

std::string input_file(std::size_t step, const std::string& name) { return fmt::format("step{}.{}.bin", step, name); }

}  // namespace

std::string run_command_of(const Case& c, std::size_t k, const std::string& dir) {
  const RuntimeOptions& o = c.options;
  const Step& s = c.steps.at(k);
  std::string cmd = fmt::format("redflow run --lib {} {}/graph.dot", REDFLOW_DIFFTEST_PLUGIN_PATH, dir);
  for (const auto& [name, bytes] : s.inputs) cmd += fmt::format(" --input {}={}/{}", name, dir, input_file(k, name));
  cmd += fmt::format(" --tiles {} --cores-per-tile {} --slots {} --slot-bytes {} --scheduler {} --seed {} --quarantine-after {} --redundancy {}",
                     o.tiles, o.cores_per_tile, o.slots, o.slot_bytes, to_string(o.scheduler), o.seed, o.quarantine_after,
                     to_string(s.redundancy));
  for (const auto& spec : s.inject) cmd += " --inject " + spec;
  return cmd + " --print";
}

Status write_reproducer(const Case& c, const Verdict& v, const std::string& dir, const std::string& note) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create directory '" + dir + "': " + ec.message());
  const std::string abs = fs::absolute(dir).lexically_normal().string();
  Graph g = c.graph;
  // Constants are written beside graph.dot, never referenced where an earlier reproducer kept them.
  for (DataId d = 0; d < g.data().size(); ++d) g.mutable_data(d).file.clear();
  REDFLOW_RETURN_IF_ERROR(g.write_dot_file(abs + "/graph.dot"));
  nlohmann::json j;
  j["seed"] = c.seed;
  j["outcome"] = to_string(v.outcome);
  j["step"] = v.step;
  j["detail"] = v.detail;
  const RuntimeOptions& o = c.options;
  j["runtime"] = {{"tiles", o.tiles}, {"cores_per_tile", o.cores_per_tile}, {"slots", o.slots}, {"slot_bytes", o.slot_bytes},
                  {"scheduler", to_string(o.scheduler)}, {"seed", o.seed}, {"quarantine_after", o.quarantine_after}};
  j["stop_after_steal_failure"] = c.stop_after_steal_failure;
  j["steps"] = nlohmann::json::array();
  for (std::size_t k = 0; k < c.steps.size(); ++k) {
    const Step& s = c.steps[k];
    nlohmann::json inputs = nlohmann::json::object();
    for (const auto& [name, bytes] : s.inputs) {
      REDFLOW_RETURN_IF_ERROR(write_bytes(abs + "/" + input_file(k, name), bytes.data(), bytes.size()));
      inputs[name] = input_file(k, name);
    }
    j["steps"].push_back({{"redundancy", to_string(s.redundancy)}, {"inject", s.inject}, {"fail", s.fail}, {"inputs", inputs}});
  }
  const std::string text = j.dump(2) + "\n";
  REDFLOW_RETURN_IF_ERROR(write_bytes(abs + "/case.json", text.data(), text.size()));
  std::string cmd = fmt::format("# redflow difftest reproducer (generator seed {}): {}\n# {}, {} execution(s) of one loaded graph. {}\n",
                                c.seed, describe(v), graph_size(c.graph), c.steps.size(), note);
  cmd += "# Replay every execution and compare each with the sequential interpreter:\n";
  cmd += "redflow difftest --replay " + abs + "\n";
  if (!c.steps.empty()) {
    const std::size_t k = v.step >= 0 ? static_cast<std::size_t>(v.step) : c.steps.size() - 1;
    cmd += fmt::format("# Execution {} alone, with `redflow run` (the executions before it ran on the same loaded graph):\n", k);
    cmd += run_command_of(c, k, abs) + "\n";
  }
  return write_bytes(abs + "/command", cmd.data(), cmd.size());
}

Result<Case> read_reproducer(const std::string& dir) {
  Case c;
  auto graph = Graph::from_dot_file(dir + "/graph.dot");
  if (!graph.ok()) return graph.status();
  c.graph = std::move(*graph);
  std::ifstream in(dir + "/case.json");
  if (!in) return Status::IOError("cannot open '" + dir + "/case.json'");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("'" + dir + "/case.json' is not valid JSON");
  try {
    c.seed = j.value("seed", std::uint64_t{0});
    c.stop_after_steal_failure = j.value("stop_after_steal_failure", false);
    const auto& r = j.at("runtime");
    RuntimeOptions& o = c.options;
    o.tiles = r.at("tiles");
    o.cores_per_tile = r.at("cores_per_tile");
    o.slots = r.at("slots");
    o.slot_bytes = r.at("slot_bytes");
    o.scheduler = r.at("scheduler") == "steal" ? Scheduler::kSteal : Scheduler::kHeft;
    o.seed = r.at("seed");
    o.quarantine_after = r.at("quarantine_after");
    o.driver_bytes = std::size_t{64} << 20;
    for (const auto& js : j.at("steps")) {
      Step s;
      auto red = parse_redundancy(js.at("redundancy").get<std::string>());
      if (!red) return Status::InvalidArgument("'" + dir + "/case.json': unknown redundancy '" + js.at("redundancy").get<std::string>() + "'");
      s.redundancy = *red;
      s.inject = js.at("inject").get<std::vector<std::string>>();
      s.fail = js.at("fail");
      for (const auto& [name, file] : js.at("inputs").items()) {
        auto bytes = read_bytes(fs::path(dir) / file.get<std::string>());
        if (!bytes.ok()) return bytes.status();
        s.inputs[name] = std::move(*bytes);
      }
      c.steps.push_back(std::move(s));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument("'" + dir + "/case.json': " + e.what());
  }
  return c;
}

}  // namespace redflow::difftest
