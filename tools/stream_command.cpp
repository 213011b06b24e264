// `redflow stream PROGRAM.dot`: run a SCORE stream program in this process
// (docs/streams.md), with one thread per operator or on a worker pool, or over
// worker processes (--listen / --address-file with --min-workers, placed by
// --place), and write its profile (tokens per stream, busy time per operator).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "cli_common.hpp"
#include "cluster_flags.hpp"
#include "cluster_launch.hpp"
#include "dashboard_flag.hpp"
#include "progress.hpp"
#include "report_flag.hpp"
#include "redflow/stream.hpp"
#include "redflow/visualize.hpp"
#include "stream/profile.hpp"
#include "stream/stream_worker.hpp"

namespace redflow::cli {

namespace {
struct StreamArgs {
  std::string program, mode = "pool", profile, trace, gantt, report_json;
  unsigned threads = 0;
  std::size_t stream_buffer_bytes = stream::RunOptions{}.stream_buffer_bytes;
  bool print = false;
  std::vector<std::string> outputs;  // --output NAME=FILE
  // Over worker processes:
  stream::ClusterOptions cluster;  // cluster.cluster: --listen, --min-workers, --wait, ... (empty listen here: not over workers)
  std::string place_profile;
  bool no_aggregate = false, one_level = false, no_direct_links = false;
  LaunchArgs launch;
  DashboardArgs dashboard;
};

// Another starter of the same command line won the --address-file: serve it a node.
int serve_node(const StreamArgs& a, const LaunchPlan& plan, const stream::OperatorRegistry& reg) {
  stream::StreamWorkerOptions w;
  w.connect = plan.driver.endpoint;
  w.threads = a.threads;
  w.security.key_file = a.cluster.cluster.key_file;
  w.security.server_public_key = plan.driver.server_public_key;
  fmt::print(stderr, "redflow: {} serves a stream node of the driver at {}\n", plan.who, w.connect);
  if (Status s = stream::run_stream_worker(w, reg); !s.ok()) return fail(s);
  return 0;
}

// The token size of the stream into operator `at` (8 when none comes in).
std::size_t token_bytes_into(const stream::Program& program, std::size_t at) {
  std::size_t token = 8;
  for (const auto& s : program.streams())
    if (s.to == at) token = s.token_bytes;
  return token;
}

// --output NAME=FILE, checked before anything runs: NAME is a collect
// operator of the program, named once, by file.
Result<std::map<std::string, std::string>> stream_output_bindings(const stream::Program& program, const std::vector<std::string>& bindings) {
  std::map<std::string, std::string> files;
  for (const auto& binding : bindings) {
    auto nf = split_binding(binding, "--output");
    if (!nf.ok()) return nf.status();
    const std::size_t at = program.find(nf->first);
    if (at == std::string::npos || program.instances()[at].op != "collect") {
      std::string collects;
      for (const auto& i : program.instances())
        if (i.op == "collect") collects += (collects.empty() ? "" : ", ") + i.name;
      return Status::InvalidArgument("--output " + binding + ": the program has no collect operator '" + nf->first + "' (its collect operators: " +
                                     (collects.empty() ? std::string("none") : collects) + ")");
    }
    if (!files.emplace(nf->first, nf->second).second)
      return Status::InvalidArgument("--output " + binding + ": operator '" + nf->first + "' is given twice (one --output per operator)");
  }
  return files;
}

// Writes a collect operator's tokens to FILE: raw, or a NumPy array for a
// .npy file (8-byte tokens as uint64, as --print shows them; others as uint8).
Status write_stream_output(const std::string& file, std::size_t token, const Bytes& tokens) {
  if (!file.ends_with(".npy")) return write_file(file, tokens.data(), tokens.size());
  const Bytes npy = to_npy(token == 8 ? ElementType::kU64 : ElementType::kU8, tokens);
  return write_file(file, npy.data(), npy.size());
}

void print_nodes(const stream::RunResult& r) {
  for (std::size_t n = 0; n < r.nodes.size(); ++n) {
    const auto& node = r.nodes[n];
    fmt::print("  node {} '{}' on {}: {} operators, {:.3f} s, {} bytes in, {} bytes out, {} bytes straight to other nodes, at most {} bytes waiting to be read:",
               n, node.worker, node.host, node.operators, node.seconds, node.bytes_in, node.bytes_out, node.bytes_to_nodes, node.most_waiting_bytes);
    for (const auto& o : r.operators)
      if (o.node == static_cast<int>(n)) fmt::print(" {}", o.name);
    fmt::print("\n");
  }
  if (r.nodes.empty()) return;
  fmt::print("  checkpoints: {} taken\n", r.checkpoints);
  for (const auto& loss : r.losses)
    fmt::print("  node '{}' lost {:.3f} s in ({}): the others went on from checkpoint {}, running again {:.3f} s later\n", loss.worker, loss.lost_s, loss.why,
               loss.checkpoint, loss.resumed_s);
}

}  // namespace

Command add_stream_command(CLI::App& app) {
  auto a = std::make_shared<StreamArgs>();
  auto* sub = app.add_subcommand("stream", "Run a stream program: operators connected by FIFO streams of tokens, until end of stream (docs/streams.md).");
  sub->footer("The program is DOT: operators are nodes with operator=NAME (and args=\"k=v ...\"), streams are edges with\n"
              "token=BYTES (and from_port=, to_port= when an operator has several). `collect` operators gather the results.\n"
              "Examples:\n"
              "  redflow stream examples/streams/sum.dot --print\n"
              "  redflow stream examples/streams/sum.dot --output all=all.npy --output total=total.bin\n"
              "  redflow stream examples/streams/feedback.dot --mode threads --profile prof.json\n"
              "  redflow stream examples/streams/compute_heavy.dot --trace run.json --gantt run.svg   (open run.json in ui.perfetto.dev)\n"
              "Over worker processes (one node each; tokens that cross nodes go through this driver):\n"
              "  redflow stream examples/streams/sum.dot --listen 'tcp://127.0.0.1:*' --min-workers 2 --place smart\n"
              "      (then, twice: redflow worker --connect ADDR)\n"
              "  redflow stream p.dot --address-file /shared/job.addr --min-workers 3 --place topological   (start it 4 times)\n"
              "  redflow stream p.dot --listen 'tcp://127.0.0.1:*' --min-workers 4 --place smart_min --place-profile prof.json\n"
              "Exit status: 0 when every operator finished; 1 on an invalid program, an operator error, a deadlock,\n"
              "or a worker lost mid-stream (the error names it and its operators).");
  sub->add_option("program", a->program, "The stream program (.dot)")->required()->check(readable_file());
  sub->add_option("--mode", a->mode, "threads: one thread per operator (the paper's); pool: operators fired on a pool of worker threads when tokens arrive")
      ->check(CLI::IsMember({"pool", "threads"}))
      ->capture_default_str();
  sub->add_option("--threads", a->threads, "Worker threads of the pool (default: one per hardware thread)")->check(CLI::Range(1u, 1024u));
  sub->add_option("--stream-buffer", a->stream_buffer_bytes,
                  "Bytes of tokens a stream holds before its producer waits for the consumer (back-pressure; a stream a program needs "
                  "fuller grows when every operator waits; 0: unbounded) (docs/streams.md, \"Back-pressure\")")
      ->capture_default_str()
      ->type_name("BYTES");
  sub->add_option("--output,-o", a->outputs,
                  "Write the tokens collect operator NAME gathered to FILE: raw bytes, or a NumPy array if FILE ends in .npy "
                  "(8-byte tokens as uint64, others as uint8) (repeatable; default: not written)")
      ->type_name("NAME=FILE");
  sub->add_flag("--print", a->print, "Print what each collect operator gathered (8-byte tokens as unsigned integers, others as hex)");
  sub->add_option("--profile", a->profile, "Write tokens per stream and busy time per operator as JSON (the placement's back-annotation)")
      ->type_name("FILE.json");
  sub->add_option("--trace", a->trace, "Write when each operator fired as Chrome/Perfetto trace JSON: a process per node, a thread per operator")
      ->type_name("FILE.json");
  add_report_flag(sub, a->report_json);
  sub->add_option("--gantt", a->gantt, "Write the same as a Gantt chart (SVG): a row per node, a box per firing span")->type_name("FILE.svg");
  auto* cluster = "Over worker processes";
  a->cluster.cluster.listen.clear();  // the flag's default: run in this process
  a->cluster.cluster.min_workers = 0;
  add_cluster_flags(sub, a->cluster.cluster, {.workers = "nodes (one worker process each)", .min_default = "default with --address-file or a launcher: the processes started; required with --listen"});
  sub->add_option("--address-file", a->launch.address_file,
                  "Rendezvous: the first starter of this command line becomes the driver and publishes where it listens here; "
                  "the others serve it a node each")
      ->type_name("FILE")
      ->group(cluster);
  sub->add_option("--place", a->cluster.place, "Placement: naive, topological, smart, smart_min, smart_max (docs/streams.md)")->capture_default_str()->group(cluster);
  sub->add_option("--place-profile", a->place_profile, "smart_min/smart_max: the profile of an earlier run (--profile) to weigh by")
      ->check(readable_file())
      ->type_name("FILE.json")
      ->group(cluster);
  sub->add_option("--seed", a->cluster.seed, "Seed of naive placement and of METIS")->capture_default_str()->group(cluster);
  sub->add_option("--checkpoint-every", a->cluster.checkpoint_every_s,
                  "Seconds between checkpoints of every operator's state (0: none); a lost node's operators then move to the others and the "
                  "run goes on from the last one (docs/streams.md, \"When a node is lost\")")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->type_name("S")
      ->group(cluster);
  sub->add_flag("--no-aggregate", a->no_aggregate, "Send every token in its own message (to measure what aggregation saves)")->group(cluster);
  sub->add_flag("--no-direct-links", a->no_direct_links,
                "Send tokens between nodes through the driver (a star) instead of straight from node to node (to measure what direct links save)")
      ->group(cluster);
  sub->add_flag("--one-level", a->one_level, "Put and take every arriving token under the inbox's lock (to measure what two-level buffering saves)")
      ->group(cluster);
  add_dashboard_flags(sub, a->dashboard);
  return {sub, [a] {
            auto reg = stream::OperatorRegistry::with_builtins();
            if (Status s = a->cluster.cluster.validate(); !s.ok()) return usage_error(s);
            auto algo = stream::parse_place_algo(a->cluster.place);
            if (!algo.ok()) return usage_error(Status::InvalidArgument("--place: " + algo.status().message()));
            if ((*algo == stream::PlaceAlgo::kSmartMin || *algo == stream::PlaceAlgo::kSmartMax) && a->place_profile.empty())
              return usage_error(Status::InvalidArgument("--place " + a->cluster.place + " needs --place-profile FILE.json (written by --profile)"));
            auto plan = plan_launch(a->launch);
            if (!plan.ok()) return fail(plan.status());
            if (plan->worker) return serve_node(*a, *plan, reg);
            auto program = stream::Program::from_dot_file(a->program, reg);
            if (!program.ok()) return fail(program.status());
            auto output_files = stream_output_bindings(*program, a->outputs);
            if (!output_files.ok()) return usage_error(output_files.status());
            stream::RunOptions o;
            o.mode = a->mode == "threads" ? stream::Mode::kThreadPerOperator : stream::Mode::kPool;
            o.threads = a->threads;
            o.stream_buffer_bytes = a->stream_buffer_bytes;
            o.trace = !a->trace.empty() || !a->gantt.empty();
            const bool remote = !a->cluster.cluster.listen.empty() || plan->launched;
            if (!remote && a->cluster.cluster.min_workers > 0)
              return usage_error(Status::InvalidArgument("--min-workers needs --listen ADDR or --address-file FILE"));
            auto dashboard = RunDashboard::start(a->dashboard, std::filesystem::path(a->program).stem().string(), 1, "stream");
            if (!dashboard.ok()) return usage_error(dashboard.status());
            RunDashboard* board = dashboard->get();
            // The streams page, live: each stream's tokens and where they queue up.
            if (board != nullptr) o.on_sample = [board](const std::vector<stream::StreamProfile>& sample) { board->streams(sample); };
            Result<stream::RunResult> result = Status::Ok();
            if (remote) {
              stream::ClusterOptions c = a->cluster;
              if (c.cluster.listen.empty()) c.cluster.listen = "tcp://127.0.0.1:*";
              if (c.cluster.min_workers == 0) c.cluster.min_workers = plan->tiles;
              if (c.cluster.min_workers == 0)
                return usage_error(Status::InvalidArgument("--listen and --address-file need --min-workers N: how many worker processes to run on"));
              c.aggregate = !a->no_aggregate;
              c.two_level = !a->one_level;
              c.direct_links = !a->no_direct_links;
              if (!a->place_profile.empty()) {
                auto bytes = read_file(a->place_profile);
                if (!bytes.ok()) return fail(bytes.status());
                c.profile_json.assign(reinterpret_cast<const char*>(bytes->data()), bytes->size());
              }
              PublishedAddress* address = plan->address.get();
              c.cluster.on_listening = [n = c.cluster.min_workers, address, security = net::SecurityOptions{c.cluster.key_file, c.cluster.authorized_keys_file}](const std::string& endpoint) {
                if (address != nullptr) {
                  if (Status s = address->publish(endpoint, security); !s.ok()) fmt::print(stderr, "redflow: {}\n", s.message());
                  fmt::print(stderr, "redflow: listening on {} (published in {}); waiting for {} stream worker(s)\n", endpoint, address->path(), n);
                  return;
                }
                fmt::print(stderr, "redflow: listening on {}; waiting for {} stream worker(s): {} worker --connect {}\n", endpoint, n, command_name(), endpoint);
              };
              auto bar = std::make_shared<Progress>("stream", c.cluster.min_workers);
              c.on_progress = [bar, board, seen = 0u](unsigned done, std::uint64_t relayed) mutable {
                if (board != nullptr) {
                  board->count("nodes done", done);
                  board->count("MB of tokens between nodes", static_cast<double>(relayed) / 1e6);
                }
                bar->advance(done - seen);
                seen = done;
                bar->note(fmt::format("nodes done, {:.1f} MB of tokens between nodes", static_cast<double>(relayed) / 1e6));
              };
              result = stream::run_cluster(*program, o, c);
              bar->finish();
            } else {
              result = stream::run(*program, o);
            }
            if (!result.ok()) {
              const int code = fail(result.status());
              if (board != nullptr) board->end(result.status());
              return code;
            }
            if (board != nullptr) board->count_stream_run(program->instances().size(), *result);
            for (const auto& [name, file] : *output_files) {
              // A collect operator that gathered nothing has no entry: an empty file.
              const Bytes& tokens = result->outputs[name];
              if (Status s = write_stream_output(file, token_bytes_into(*program, program->find(name)), tokens); !s.ok()) return fail(s);
            }
            std::uint64_t tokens = 0;
            for (const auto& s : result->streams) tokens += s.tokens;
            const std::string how = remote ? fmt::format("{} nodes, {} placement", result->nodes.size(), a->cluster.place)
                                           : a->mode == "threads" ? "one thread per operator" : "worker pool";
            fmt::print("stream: {} operators, {} streams, {} tokens in {:.3f} s ({})\n", program->instances().size(), program->streams().size(),
                       tokens, result->seconds, how);
            print_nodes(*result);
            if (a->print)
              for (const auto& [name, bytes] : result->outputs) {
                fmt::print("{}:", name);
                const std::size_t token = token_bytes_into(*program, program->find(name));
                for (std::size_t i = 0; i + token <= bytes.size(); i += token) {
                  if (token == 8) {
                    std::uint64_t v;
                    std::memcpy(&v, bytes.data() + i, 8);
                    fmt::print(" {}", v);
                  } else {
                    fmt::print(" ");
                    for (std::size_t b = 0; b < token; ++b) fmt::print("{:02x}", std::to_integer<unsigned>(bytes[i + b]));
                  }
                }
                fmt::print("\n");
              }
            for (const auto& [file, text] : {std::pair{a->trace, o.trace ? to_chrome_trace(*result) : ""},
                                             std::pair{a->gantt, o.trace && !a->gantt.empty() ? to_gantt_svg(*result, {.title = a->program}) : ""}})
              if (!file.empty())
                if (Status s = write_file(file, text.data(), text.size()); !s.ok()) return fail(s);
            if (Status s = write_report(a->report_json, report(*result, a->program)); !s.ok()) return fail(s);
            if (!a->profile.empty()) {
              const std::string text = stream::profile_json(*result);
              if (Status s = write_file(a->profile, text.data(), text.size()); !s.ok()) return fail(s);
            }
            if (board != nullptr) board->end(Status::Ok());
            return 0;
          }};
}

}  // namespace redflow::cli
