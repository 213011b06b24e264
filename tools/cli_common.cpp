// Shared helpers of the `redflow` subcommands.
#include "cli_common.hpp"

#include "apps/paper.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

namespace redflow::cli {

int fail(const Status& s) {
  fmt::print(stderr, "redflow: error: {}\n", s.ToString());
  return s.code() == Status::Code::kGaveUp ? kGaveUp : kFailed;
}

int usage_error(const Status& s) {
  fmt::print(stderr, "redflow: error: {}\n", s.ToString());
  return kUsageError;
}

namespace {
std::string& command_name_storage() {
  static std::string name = "redflow";
  return name;
}
}  // namespace

const std::string& command_name() { return command_name_storage(); }
void set_command_name(std::string name) {
  if (!name.empty()) command_name_storage() = std::move(name);
}

int load_refused(const Status& s) { return s.code() == Status::Code::kInvalidArgument ? usage_error(s) : fail(s); }

Result<std::vector<std::byte>> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

Status write_file(const std::string& path, const void* data, std::size_t size) {
  const std::string tmp = path + ".redflow-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IOError("cannot write '" + path + "'");
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) {
      std::remove(tmp.c_str());
      return Status::IOError("cannot write '" + path + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError("cannot rename '" + tmp + "' to '" + path + "'");
  }
  return Status::Ok();
}

Result<std::pair<std::string, std::string>> split_binding(const std::string& text, const char* flag) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return Status::InvalidArgument(std::string(flag) + " expects NAME=FILE, got '" + text + "'");
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Status load_libs(Registry& reg, const std::vector<std::string>& libs) {
  // dlopen searches the library path for a bare name: "--lib my_actors.so" means the file here.
  for (const auto& lib : libs) REDFLOW_RETURN_IF_ERROR(reg.load_plugin(lib.find('/') == std::string::npos ? "./" + lib : lib));
  return Status::Ok();
}

void add_runtime_options(CLI::App* cmd, RuntimeArgs& a) {
  if (a.tiles == 0) a.tiles = std::max(1u, std::thread::hardware_concurrency());
  cmd->add_option("--scheduler", a.scheduler, "heft (offline, Algorithm 2; redundant HEFT for *-diff) or steal (online random work stealing)")
      ->check(CLI::IsMember({"heft", "steal"}))
      ->capture_default_str();
  cmd->add_flag("--heft-static", a.heft_static,
                "HEFT walks its plan as made: no idle tile takes over the actors of a tile that fell behind "
                "(docs/scheduling.md, \"HEFT under load\"; for comparisons; default: HEFT adapts)");
  auto* tiles = cmd->add_option("--tiles", a.tiles, "Compute tiles (default: one per hardware thread)")->check(CLI::Range(1u, 1024u))->capture_default_str();
  auto* cores = cmd->add_option("--cores-per-tile", a.cores_per_tile, "Worker threads per tile (width of ctx.parallel_for)")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  auto* slots = cmd->add_option("--slots", a.slots, "Memory slots per tile")->check(CLI::Range(2u, 1u << 20))->capture_default_str();
  auto* slot_bytes = cmd->add_option("--slot-bytes", a.slot_bytes, "Bytes per slot; larger data nodes are handled by the driver")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40))
      ->capture_default_str();
  // The machine flags it sets cannot be given as well: which one would win is not obvious.
  cmd->add_option("--machine", a.machine,
                  "default (the flags above) or paper: the paper's Kalray Bostan, 16 tiles of 1 core with 8 slots of "
                  "160 KiB (sets --tiles, --cores-per-tile, --slots, --slot-bytes)")
      ->check(CLI::IsMember({"default", "paper"}))
      ->excludes(tiles)
      ->excludes(cores)
      ->excludes(slots)
      ->excludes(slot_bytes)
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of work stealing's random choices")->capture_default_str();
  cmd->add_option("--inject", a.inject,
                  "Inject faults on compute tiles (repeatable; default: none): bitflip:p=P[,seed=S] | faulty-tile:T | slow-tile:T,factor=F | "
                  "crash-tile:T[,after=K] (tile T dies after K actors; its work is re-run elsewhere)")
      ->type_name("SPEC");
  cmd->add_option("--quarantine-after", a.quarantine_after,
                  "Lost votes in one execution that take a tile out of service, on probation: a known-answer test after that "
                  "execution (and before each later one) puts it back when it passes (0: never)")
      ->capture_default_str();
  cmd->add_option("--probation-rounds", a.probation_rounds,
                  "Failed known-answer tests in a row that quarantine a tile on probation for the rest of the run (0: the first "
                  "suspicion does)")
      ->capture_default_str();
  cmd->add_option("--crash-limit", a.crash_limit,
                  "Tiles (worker processes) an actor may lose while it runs on them before it is poisoned: named in the error, not "
                  "retried, and the run exits 3")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--require-protection", a.require_protection,
               "Refuse a --redundancy under which some actor would run once on the driver, unprotected (data larger than a slot, "
               "more inputs than slots), and fail a run whose replicas cannot all run on distinct tiles (too few in service; "
               "default: warn, run, and say DEGRADED)");
  cmd->add_option("--tile-transport", a.tile_transport,
                  "direct (tiles called on their runner threads) or wire (every tile a worker on a thread of this process, "
                  "reached over ZeroMQ as a `redflow worker` is: the production path in one process; slower)")
      ->check(CLI::IsMember({"direct", "wire"}))
      ->capture_default_str();
  cmd->add_flag("--eager-schedules", a.eager_schedules,
               "Compute every redundancy configuration's schedule and state at load, as the paper does (default: the "
               "--redundancy one at load, the others when first used)");
  cmd->add_option("--lib", a.libs, "Actor plugin .so to load (repeatable; docs/actors.md; default: built-in actors only)")
      ->type_name("PLUGIN.so")
      ->check(readable_file());
}

Result<RuntimeOptions> runtime_options(const RuntimeArgs& a) {
  RuntimeOptions o;
  o.tiles = a.tiles;
  o.cores_per_tile = a.cores_per_tile;
  o.slots = a.slots;
  o.slot_bytes = a.slot_bytes;
  o.seed = a.seed;
  o.scheduler = a.scheduler == "steal" ? Scheduler::kSteal : Scheduler::kHeft;
  o.heft_adapts = !a.heft_static;
  o.quarantine_after = a.quarantine_after;
  o.probation_rounds = a.probation_rounds;
  o.crash_limit = a.crash_limit;
  if (a.machine == "paper") apps::apply_paper_machine(o);
  o.require_protection = a.require_protection;
  o.tile_transport = a.tile_transport == "wire" ? TileTransport::kWire : TileTransport::kDirect;
  o.eager_schedules = a.eager_schedules;
  for (const auto& spec : a.inject) REDFLOW_RETURN_IF_ERROR(parse_fault_spec(spec, o.faults));
  REDFLOW_RETURN_IF_ERROR(check_fault_tiles(o.faults, o.tiles));
  return o;
}

Result<InputFiles> read_inputs(const Graph& graph, const std::vector<std::string>& bindings) {
  InputFiles f;
  for (const auto& binding : bindings) {
    auto nf = split_binding(binding, "--input");
    if (!nf.ok()) return nf.status();
    auto [name, file] = *nf;
    auto d = graph.find_data(name);
    if (!d || graph.data(*d).kind != DataKind::kInput)
      return Status::InvalidArgument("--input " + binding + ": graph '" + graph.name() + "' has no input data node '" + name + "'");
    if (f.bytes.count(name))
      return Status::InvalidArgument("--input " + binding + ": input data node '" + name + "' is given twice (one --input per node)");
    auto bytes = read_file(file);
    if (!bytes.ok()) return Status::IOError("--input " + binding + ": " + bytes.status().message());
    if (file.ends_with(".npy")) {
      auto data = npy_data_for(file, *bytes, graph.data(*d));
      if (!data.ok()) return Status::InvalidArgument("--input " + binding + ": " + data.status().message());
      *bytes = std::vector<std::byte>(data->begin(), data->end());
    } else if (bytes->size() != graph.data(*d).bytes)
      return Status::InvalidArgument(fmt::format("--input {}: file '{}' has {} bytes, input data node '{}' declares {}", binding, file,
                                                 bytes->size(), name, graph.data(*d).bytes));
    f.bytes[name] = std::move(*bytes);
  }
  for (const auto& [name, bytes] : f.bytes) f.inputs[name] = bytes;
  return f;
}

void warn_unprotected(const LoadedGraph& loaded, const std::vector<Redundancy>& configs) {
  for (Redundancy r : configs) {
    std::string text = describe_unprotected(loaded.unprotected_actors(r), r);
    if (!text.empty()) spdlog::warn("{} --require-protection makes this an error.", text);
  }
}

Status check_output_format(const DataNode& node, const std::string& file) {
  if (file.ends_with(".npy") && node.type == ElementType::kNone)
    return Status::InvalidArgument("--output " + node.name + "=" + file + ": data node '" + node.name +
                                   "' has no type=, so the .npy dtype is unknown: declare it in the graph (e.g. type=i32, docs/dot.md)");
  return Status::Ok();
}

Result<std::map<std::string, std::string>> read_output_bindings(const Graph& graph, const std::vector<std::string>& bindings) {
  std::map<std::string, std::string> output_files;
  for (const auto& binding : bindings) {
    auto nf = split_binding(binding, "--output");
    if (!nf.ok()) return nf.status();
    auto d = graph.find_data(nf->first);
    if (!d || graph.data(*d).kind != DataKind::kOutput)
      return Status::InvalidArgument("--output " + binding + ": graph '" + graph.name() + "' has no output data node '" + nf->first + "'");
    if (Status s = check_output_format(graph.data(*d), nf->second); !s.ok()) return s;
    if (!output_files.emplace(nf->first, nf->second).second)
      return Status::InvalidArgument("--output " + binding + ": output data node '" + nf->first + "' is given twice (one --output per node)");
  }
  return output_files;
}

std::vector<std::byte> output_file_bytes(const DataNode& node, const std::string& file, const std::vector<std::byte>& bytes) {
  return file.ends_with(".npy") ? to_npy(node.type, bytes) : bytes;
}

void add_group(std::vector<Command>& commands, const char* title, std::initializer_list<Command> group) {
  for (Command c : group) {
    c.parser->group(title);
    commands.push_back(std::move(c));
  }
}

}  // namespace redflow::cli
