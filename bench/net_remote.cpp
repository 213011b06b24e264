// Remote tiles, measured (docs/remote.md, "Figures"). Starts its
// own `redflow tile` worker processes on loopback and prints one JSON line:
//   dispatch   empty actors (independent chains of 4-byte nodes) on 2 worker
//              processes: actors/s; the same graph on 2 local tiles beside it
//   bandwidth  8 MB data nodes moved between the driver and a worker (the
//              input sent in, the output read back: the two hops of a relayed
//              tile-to-tile transfer), MB/s, as a fraction of a plain loopback
//              TCP socket pair moving the same bytes in the same run: over
//              the whole makespan (its 8 adds included), and over the time
//              beyond the same graph's on 2 local tiles (the hops alone,
//              which include the worker's checksum of each add's output);
//              and the driver's bytes alone: an 8 MB value sent into a
//              worker's slot and read back through the tile protocol, no
//              actor run (driver_send / driver_read, best of 16 each);
//              --bandwidth-only runs just this; --driver-bytes-only just
//              the driver's bytes and the TCP pair (--times N each, 16)
//   worker to worker  an 8 MB value moved from one worker's slot to
//              another's, fetched over the workers' peer sockets beside
//              relayed by the driver, each as a fraction of the loopback TCP
//              socket pair (the faster of a measurement before and after)
//   recovery   time from kill -9 (and from SIGSTOP) of a worker to the tile
//              server declaring it lost, when its waiting calls answer `lost`
//              and the engine hands its actors on; and a 3000-actor graph's
//              makespan with and without a kill 50 ms in (noisy: the rest of
//              the graph goes on meanwhile)
//   matmul     the matmul graph of --matmul-dot over 2 workers vs 2 local tiles
//   elastic    (--elastic-only runs just this) a straggler: 8 matmul chains
//              on 2 workers, one slowed 100 times (slow-tile fault injection),
//              makespan with speculative copies beside without them; and a
//              join: 32 chains of 16 on 1 worker, beside 1 worker with a
//              second started as the execution starts; both schedulers
//   peer       (--peer-only runs just this) empty actors whose inputs often
//              live on the other worker: a butterfly 64 wide, stage k's actor
//              i reading i and i XOR 2^(k mod 6) of stage k-1, so values move
//              worker to worker; actors/s and the fetches made, pipelined
//              (--depth) beside one message at a time, both schedulers
//   NET_REMOTE_NO_SPECULATION=1: dispatch with speculative copies off (their cost)
//   net_remote --cli build/redflow [--actors 20000] [--elastic-only] [--matmul-dot m.dot --matmul-inputs A=a.bin,B=b.bin]
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <xxhash.h>

#include "net/remote_tile.hpp"
#include "net/tile_server.hpp"
#include "apps/overhead_shapes.hpp"
#include "redflow/redflow.hpp"

using namespace redflow;
using Clock = std::chrono::steady_clock;

namespace {

std::string g_cli;
std::vector<pid_t> g_children;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

pid_t spawn_worker(const std::string& endpoint, std::size_t slot_bytes, unsigned slots) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string sb = std::to_string(slot_bytes), sl = std::to_string(slots);
    execl(g_cli.c_str(), g_cli.c_str(), "--log-level", "error", "worker", "--connect", endpoint.c_str(), "--slots", sl.c_str(),
          "--slot-bytes", sb.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  g_children.push_back(pid);
  return pid;
}

void reap_all() {
  for (pid_t p : g_children) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
  g_children.clear();
}

Registry bench_registry() {
  Registry reg = Registry::with_builtins();
  reg.add("noop", [](ActorContext&) {});
  return reg;
}

// `actors` noop actors in stages of 64: stage k's actor i reads the values
// of i and i XOR 2^(k mod 6) of stage k-1, so wherever the stages run, some
// of what an actor reads was made on the other tile.
Graph butterfly(std::size_t actors, std::size_t bytes) {
  constexpr std::size_t kWidth = 64;
  Graph g("butterfly");
  const DataId x = g.input("X", bytes);
  std::vector<DataId> prev(kWidth, x), next(kWidth);
  const std::size_t stages = actors / kWidth;
  for (std::size_t k = 0; k < stages; ++k) {
    for (std::size_t i = 0; i < kWidth; ++i) {
      const std::string n = std::to_string(k) + "_" + std::to_string(i);
      next[i] = k + 1 == stages ? g.output("Y" + std::to_string(i), bytes) : g.inner("d" + n, bytes);
      const std::size_t partner = i ^ (std::size_t{1} << (k % 6));
      if (k == 0) {
        g.actor("a" + n, "noop", {x}, next[i]);
      } else {
        g.actor("a" + n, "noop", {prev[i], prev[partner]}, next[i]);
      }
    }
    std::swap(prev, next);
  }
  return g;
}

RuntimeOptions options(unsigned local, unsigned remote, std::size_t slot_bytes, unsigned slots, Scheduler s) {
  RuntimeOptions o;
  o.tiles = local + remote;
  o.slots = slots;
  o.slot_bytes = slot_bytes;
  o.scheduler = s;
  if (remote > 0) {
    o.cluster.listen = "tcp://127.0.0.1:*";
    o.cluster.min_workers = remote;
    o.cluster.on_listening = [=](const std::string& e) {
      for (unsigned i = 0; i < remote; ++i) spawn_worker(e, slot_bytes, slots);
    };
  }
  return o;
}

// Best of `runs` executions, seconds.
double best(LoadedGraph& g, const Inputs& in, int runs) {
  double t = 1e30;
  for (int i = 0; i < runs; ++i) {
    auto out = g.execute(in);
    if (!out.ok()) {
      fmt::print(stderr, "net_remote: {}\n", out.status().ToString());
      std::exit(1);
    }
    t = std::min(t, g.last_stats().makespan_s);
  }
  return t;
}

double dispatch_rate(std::size_t actors, unsigned remote, unsigned local, unsigned depth = RuntimeOptions{}.pipeline_depth, Scheduler s = Scheduler::kSteal) {
  const std::vector<std::byte> x(4);
  RuntimeOptions o = options(local, remote, 4096, 64, s);
  o.pipeline_depth = depth;
  if (std::getenv("NET_REMOTE_NO_SPECULATION") != nullptr) o.speculate_after_s = 0;
  Runtime rt(o);
  auto g = rt.load(apps::independent_chains(actors, 64, 4), bench_registry());
  if (!g.ok()) {
    fmt::print(stderr, "net_remote: {}\n", g.status().ToString());
    std::exit(1);
  }
  const double t = best(*g, {{"X", x}}, 3);
  return static_cast<double>(actors) / t;
}

// `count` chains of `length` i32.matmul of n x n int32 (X times B, then
// that times B...): real work, so a slowed worker's actors really take longer.
Graph matmul_chains(std::size_t count, std::size_t length, std::size_t n) {
  Graph g("matmul_chains");
  const std::size_t bytes = n * n * 4;
  const DataId x = g.input("X", bytes), b = g.input("B", bytes);
  for (std::size_t c = 0; c < count; ++c) {
    DataId prev = x;
    for (std::size_t i = 0; i < length; ++i) {
      const std::string name = std::to_string(c) + "_" + std::to_string(i);
      const DataId next = i + 1 == length ? g.output("Y" + std::to_string(c), bytes) : g.inner("d" + name, bytes);
      g.actor("m" + name, "i32.matmul", {prev, b}, next).work(static_cast<double>(2 * n * n * n));
      prev = next;
    }
  }
  return g;
}

struct Elastic {
  double makespan = 0;
  std::uint64_t copies = 0, wins = 0, joined = 0, joined_actors = 0;
};

// One execution of the matmul chains on `remote` workers (one more started
// as it starts when `join`), worker tile 1 slowed `slow` times when > 1.
Elastic elastic_run(Scheduler s, unsigned remote, bool join, double slow, double speculate_after_s, std::size_t chains, std::size_t length) {
  constexpr std::size_t n = 256, bytes = n * n * 4;
  std::vector<std::byte> x(bytes), b(bytes);
  for (std::size_t i = 0; i < bytes; ++i) x[i] = static_cast<std::byte>(i * 7), b[i] = static_cast<std::byte>(i * 13);
  RuntimeOptions o = options(0, remote, bytes, 8, s);
  o.speculate_after_s = speculate_after_s;
  std::string endpoint;
  auto spawn = o.cluster.on_listening;
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    spawn(e);
  };
  Runtime rt(o);
  auto g = rt.load(matmul_chains(chains, length, n), bench_registry());
  if (!g.ok()) {
    fmt::print(stderr, "net_remote: {}\n", g.status().ToString());
    std::exit(1);
  }
  ExecuteOptions eo;
  if (slow > 1) {
    FaultInjection f;
    f.slow_tiles = {{1, slow}};
    eo.faults = f;
  }
  if (join) spawn_worker(endpoint, bytes, 8);
  auto out = g->execute({{"X", x}, {"B", b}}, eo);
  if (!out.ok()) {
    fmt::print(stderr, "net_remote: {}\n", out.status().ToString());
    std::exit(1);
  }
  const ExecutionStats& st = g->last_stats();
  Elastic e{st.makespan_s, st.speculative_copies, st.speculative_wins, st.joined_tiles, 0};
  if (st.tiles.size() > remote) e.joined_actors = st.tiles[remote].actors;
  return e;
}

void elastic() {
  for (Scheduler s : {Scheduler::kSteal, Scheduler::kHeft}) {
    const Elastic without = elastic_run(s, 2, false, 100, 0, 8, 4);
    reap_all();
    const Elastic with = elastic_run(s, 2, false, 100, RuntimeOptions{}.speculate_after_s, 8, 4);
    reap_all();
    const Elastic alone = elastic_run(s, 1, false, 1, RuntimeOptions{}.speculate_after_s, 32, 16);
    reap_all();
    const Elastic joined = elastic_run(s, 1, true, 1, RuntimeOptions{}.speculate_after_s, 32, 16);
    reap_all();
    fmt::print("{{\"scheduler\": \"{}\", \"straggler_makespan_s\": {:.3f}, \"with_speculation_s\": {:.3f}, \"speedup\": {:.2f}, "
               "\"copies\": {}, \"wins\": {}, \"one_worker_s\": {:.3f}, \"with_a_join_s\": {:.3f}, \"join_speedup\": {:.2f}, "
               "\"joined\": {}, \"joined_tile_actors\": {}}}\n",
               to_string(s), without.makespan, with.makespan, without.makespan / with.makespan, with.copies, with.wins, alone.makespan,
               joined.makespan, alone.makespan / joined.makespan, joined.joined, joined.joined_actors);
  }
}

// A plain TCP socket pair on loopback moving `bytes` `times`: MB/s.
double loopback_tcp(std::size_t bytes, int times) {
  int server = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len);
  listen(server, 1);
  std::thread reader([&] {
    int c = accept(server, nullptr, nullptr);
    std::vector<char> buf(1 << 20);
    std::size_t total = 0;
    while (total < bytes * static_cast<std::size_t>(times)) {
      const ssize_t n = read(c, buf.data(), buf.size());
      if (n <= 0) break;
      total += static_cast<std::size_t>(n);
    }
    const char ack = 1;
    [[maybe_unused]] ssize_t w = write(c, &ack, 1);
    close(c);
  });
  int client = socket(AF_INET, SOCK_STREAM, 0);
  connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  std::vector<char> data(bytes, 7);
  const auto t0 = Clock::now();
  for (int i = 0; i < times; ++i) {
    std::size_t sent = 0;
    while (sent < bytes) {
      const ssize_t n = write(client, data.data() + sent, bytes - sent);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
  }
  char ack;
  [[maybe_unused]] ssize_t r = read(client, &ack, 1);
  const double t = since(t0);
  reader.join();
  close(client);
  close(server);
  return static_cast<double>(bytes) * times / t / 1e6;
}

// A chain of i32.add over 8 MB nodes on two workers: the 8 MB input goes to
// a worker and the 8 MB output comes back (work-first keeps the chain on one
// tile, so these two hops are what is measured, per execution). The
// makespan holds the adds too, so the same graph also runs on 2 local
// tiles (which read main memory in place: no transfer) and `local_s` is its
// makespan: the remote run's time beyond it is what the hops cost.
double tile_to_tile(std::size_t bytes, int steps, std::uint64_t& moved, double& remote_s, double& local_s) {
  Graph g("bandwidth");
  const DataId x = g.input("X", bytes);
  DataId prev = x;
  for (int i = 0; i < steps; ++i) {
    const DataId next = i + 1 == steps ? g.output("Y", bytes) : g.inner("d" + std::to_string(i), bytes);
    g.actor("a" + std::to_string(i), "i32.add", {prev, prev}, next);
    prev = next;
  }
  const std::vector<std::byte> in(bytes);
  auto timed = [&](unsigned local, unsigned remote) {
    Runtime rt(options(local, remote, bytes, 4, Scheduler::kSteal));
    auto loaded = rt.load(g, bench_registry());
    if (!loaded.ok()) {
      fmt::print(stderr, "net_remote: {}\n", loaded.status().ToString());
      std::exit(1);
    }
    best(*loaded, {{"X", in}}, 1);
    const double t = best(*loaded, {{"X", in}}, 3);
    if (remote > 0) moved = loaded->last_stats().transfer_bytes;
    return t;
  };
  remote_s = timed(0, 2);
  local_s = timed(2, 0);
  return static_cast<double>(moved) / remote_s / 1e6;
}

// An 8 MB value in worker 0's slot placed in worker 1's slot `times` times,
// straight through the tile protocol (no graph, so nothing but the transfer
// is timed): `direct`, worker 1 fetches it from worker 0's peer socket (the
// TLM-to-TLM transfer); else the driver reads it from worker 0 and sends it
// to worker 1 (the relay). MB/s of value moved.
// A tile server with `workers` worker processes of 2 slots of `bytes` each, all welcomed.
std::unique_ptr<net::TileServer> serve_workers(unsigned workers, std::size_t bytes) {
  net::TileServerOptions so;
  so.workers = workers;
  so.slots = 2;
  so.slot_bytes = bytes;
  auto server = net::TileServer::start(so);
  if (!server.ok()) std::exit(1);
  for (unsigned i = 0; i < workers; ++i) spawn_worker((*server)->endpoint(), bytes, 2);
  if (!(*server)->wait_for_workers(20).ok()) std::exit(1);
  return std::move(*server);
}

double worker_to_worker(std::size_t bytes, int times, bool direct) {
  auto server = serve_workers(2, bytes);
  net::RemoteTile t0(*server, 0, 0), t1(*server, 1, 1);
  runtime::Tile* const peers[] = {&t0, &t1};
  t0.set_peers(peers);
  t1.set_peers(peers);
  t1.set_peer_transfers(direct);
  std::vector<std::byte> value(bytes, std::byte{7});
  runtime::DataNodeMessage m;
  m.tag = runtime::DataTag{1, 1, 0};
  m.bytes = bytes;
  m.payload = value;
  if (!t0.data_node(m).ok()) std::exit(1);
  m.payload = {};
  m.source_tile = 0;
  m.source_slot = 0;
  m.slot = 1;
  double fastest = 1e9;
  for (int i = 0; i < times + 1; ++i) {  // the first warms the peer link
    const auto t = Clock::now();
    if (Status s = t1.data_node(m); !s.ok()) {
      fmt::print(stderr, "net_remote: {}\n", s.ToString());
      std::exit(1);
    }
    if (i > 0) fastest = std::min(fastest, since(t));
  }
  server.reset();
  reap_all();
  return static_cast<double>(bytes) / fastest / 1e6;
}

// The driver's own bytes, straight through the tile protocol (no graph, so
// no actor's run or checksum is timed): an 8 MB value from main memory
// placed in a worker's slot (hashed as it is sent, checked by the worker,
// in pieces) and read back (in chunks, checked by the driver), `times`
// each after one to warm up. MB/s of value moved, best of `times`, each way.
struct DriverBytes {
  double send_MBps = 0, read_MBps = 0;
};
DriverBytes driver_to_worker(std::size_t bytes, int times) {
  auto server = serve_workers(1, bytes);
  net::RemoteTile t0(*server, 0, 0);
  runtime::Tile* const peers[] = {&t0};
  t0.set_peers(peers);
  std::vector<std::byte> value(bytes, std::byte{7}), back(bytes);
  runtime::DataNodeMessage m;
  m.tag = runtime::DataTag{1, 1, 0};
  m.bytes = bytes;
  m.payload = value;
  runtime::ReadSlotMessage r{0, m.tag, bytes, 0, runtime::kWholeValue, XXH3_64bits(value.data(), bytes), true};
  double send_s = 1e9, read_s = 1e9;
  for (int i = 0; i < times + 1; ++i) {
    auto t = Clock::now();
    if (Status s = t0.data_node(m); !s.ok()) {
      fmt::print(stderr, "net_remote: {}\n", s.ToString());
      std::exit(1);
    }
    if (i > 0) send_s = std::min(send_s, since(t));
    t = Clock::now();
    const bool read = t0.read_slot(r, back);
    if (i > 0) read_s = std::min(read_s, since(t));  // the read alone: not the check below
    if (!read || back != value) {
      fmt::print(stderr, "net_remote: the value read back from the worker is not the one sent\n");
      std::exit(1);
    }
  }
  server.reset();
  reap_all();
  return {static_cast<double>(bytes) / send_s / 1e6, static_cast<double>(bytes) / read_s / 1e6};
}

// Prints the direct and the relayed rate against loopback TCP (`tcp`,
// measured just before; measured again after, and the faster is used).
void print_worker_to_worker(std::size_t bytes, double tcp) {
  const double direct = worker_to_worker(bytes, 8, true), relayed = worker_to_worker(bytes, 8, false);
  tcp = std::max(tcp, loopback_tcp(bytes, 32));
  fmt::print("{{\"worker_to_worker_{}MB_direct_MBps\": {:.1f}, \"relayed_by_driver_MBps\": {:.1f}, \"loopback_tcp_MBps\": {:.1f}, "
             "\"direct_fraction_of_tcp\": {:.3f}, \"relayed_fraction_of_tcp\": {:.3f}}}\n",
             bytes >> 20, direct, relayed, tcp, direct / tcp, relayed / tcp);
}

// Two workers and one local tile, heartbeat timeout `hb` s; a chain-heavy
// graph of i32.add. Returns (makespan without a kill, with a kill of one
// worker `at` s into the run); their difference is the recovery's cost:
// detection (the heartbeat timeout) plus re-running what was lost.
std::pair<double, double> recovery(double hb, double at, std::uint64_t& lost, std::uint64_t& recomputed) {
  const std::size_t bytes = 64 << 10;
  Graph g("recovery");
  const DataId x = g.input("X", bytes);
  std::vector<DataId> pool{x};
  for (int a = 0; a < 3000; ++a) {
    const DataId in0 = pool[pool.size() > 4 ? pool.size() - 1 - a % 4 : 0];
    const DataId in1 = pool[pool.size() > 8 ? pool.size() - 1 - (a * 7) % 8 : 0];
    const DataId out = a + 1 == 3000 ? g.output("Y", bytes) : g.inner("d" + std::to_string(a), bytes);
    g.actor("a" + std::to_string(a), "i32.add", {in0, in1}, out);
    pool.push_back(out);
  }
  for (DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == DataKind::kInner && g.data(d).consumers.empty()) g.mutable_data(d).kind = DataKind::kOutput;
  const std::vector<std::byte> in(bytes, std::byte{1});
  auto run = [&](bool kill_one) {
    RuntimeOptions o = options(1, 2, bytes, 16, Scheduler::kSteal);
    o.cluster.heartbeat_timeout_s = hb;
    Runtime rt(o);
    auto loaded = rt.load(g, bench_registry());
    if (!loaded.ok()) {
      fmt::print(stderr, "net_remote: {}\n", loaded.status().ToString());
      std::exit(1);
    }
    best(*loaded, {{"X", in}}, 1);  // warm
    std::thread killer;
    if (kill_one) killer = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(at));
      kill(g_children.back(), SIGKILL);
    });
    const double t = best(*loaded, {{"X", in}}, 1);
    if (killer.joinable()) killer.join();
    lost += loaded->last_stats().lost_tiles;
    recomputed += loaded->last_stats().recomputed_actors;
    reap_all();
    return t;
  };
  const double plain = run(false);
  return {plain, run(true)};
}

// Time from kill -9 (or SIGSTOP) of a worker to the tile server declaring
// it lost, which is when every call waiting on it answers `lost` and the
// engine hands its actors to other tiles. Median of `trials`.
double detection(double hb, bool freeze, int trials) {
  std::vector<double> times;
  for (int i = 0; i < trials; ++i) {
    net::TileServerOptions so;
    so.workers = 1;
    so.heartbeat_timeout_s = hb;
    so.slots = 2;
    auto server = net::TileServer::start(so);
    if (!server.ok()) std::exit(1);
    const pid_t pid = spawn_worker((*server)->endpoint(), 4096, 2);
    if (!(*server)->wait_for_workers(20).ok()) std::exit(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the WELCOME, beating
    const auto t0 = Clock::now();
    kill(pid, freeze ? SIGSTOP : SIGKILL);
    while (!(*server)->lost(0)) std::this_thread::sleep_for(std::chrono::microseconds(200));
    times.push_back(since(t0));
    reap_all();
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
// The butterfly on 2 workers: actors/s (best of 3) and the values fetched
// worker to worker in that execution.
std::pair<double, std::uint64_t> peer_rate(std::size_t actors, unsigned depth, Scheduler s) {
  const std::vector<std::byte> x(4);
  RuntimeOptions o = options(0, 2, 4096, 64, s);
  o.pipeline_depth = depth;
  Runtime rt(o);
  auto g = rt.load(butterfly(actors, 4), bench_registry());
  if (!g.ok()) {
    fmt::print(stderr, "net_remote: {}\n", g.status().ToString());
    std::exit(1);
  }
  double t = 1e30;
  std::uint64_t fetched = 0;
  for (int i = 0; i < 3; ++i) {
    const double s0 = best(*g, {{"X", x}}, 1);
    if (s0 < t) {
      t = s0;
      fetched = 0;
      for (const TileStats& ts : g->last_stats().tiles) fetched += ts.peer_bytes_in / 4;
    }
  }
  reap_all();
  return {static_cast<double>(actors) / t, fetched};
}

void print_peer(std::size_t actors, unsigned depth) {
  for (Scheduler s : {Scheduler::kSteal, Scheduler::kHeft}) {
    const auto [rate, fetched] = peer_rate(actors, depth, s);
    const auto [rate1, fetched1] = peer_rate(actors, 1, s);
    fmt::print("{{\"peer_scheduler\": \"{}\", \"actors_per_s\": {:.0f}, \"peer_fetches\": {}, \"depth_1_actors_per_s\": {:.0f}, "
               "\"depth_1_peer_fetches\": {}, \"ratio\": {:.2f}}}\n",
               s == Scheduler::kSteal ? "steal" : "heft", rate, fetched, rate1, fetched1, rate / rate1);
  }
}

}  // namespace

// The driver <-> worker bytes (the "bandwidth" figures) and loopback TCP
// measured in the same run.
struct Bandwidth {
  double relay_MBps = 0, tcp_MBps = 0, hops_MBps = 0, remote_s = 0, local_s = 0;
  std::uint64_t moved = 0;
  DriverBytes driver;

  // The JSON fields of the bandwidth line, without braces.
  std::string fields() const {
    return fmt::format("\"driver_worker_MBps\": {:.1f}, \"loopback_tcp_MBps\": {:.1f}, \"bandwidth_fraction\": {:.3f}, \"bytes_moved\": {}, "
                       "\"makespan_2_workers_s\": {:.4f}, \"makespan_2_local_tiles_s\": {:.4f}, \"driver_worker_hops_MBps\": {:.1f}, "
                       "\"hops_fraction\": {:.3f}, \"driver_send_MBps\": {:.1f}, \"driver_read_MBps\": {:.1f}, "
                       "\"send_fraction\": {:.3f}, \"read_fraction\": {:.3f}",
                       relay_MBps, tcp_MBps, relay_MBps / tcp_MBps, moved, remote_s, local_s, hops_MBps, hops_MBps / tcp_MBps,
                       driver.send_MBps, driver.read_MBps, driver.send_MBps / tcp_MBps, driver.read_MBps / tcp_MBps);
  }
};

Bandwidth measure_bandwidth(std::size_t bytes) {
  Bandwidth b;
  b.relay_MBps = tile_to_tile(bytes, 8, b.moved, b.remote_s, b.local_s);
  // The hops alone: the remote makespan beyond the same graph's on local tiles.
  b.hops_MBps = b.remote_s > b.local_s ? static_cast<double>(b.moved) / (b.remote_s - b.local_s) / 1e6 : 0;
  reap_all();
  b.driver = driver_to_worker(bytes, 16);
  b.tcp_MBps = loopback_tcp(bytes, 32);
  return b;
}

int main(int argc, char** argv) {
  reuse_freed_buffers();  // as the redflow command does: this process is the driver
  std::size_t actors = 20000;
  bool dispatch_only = false, elastic_only = false, transfer_only = false, peer_only = false, bandwidth_only = false, driver_bytes_only = false;
  int times = 16;
  unsigned depth = RuntimeOptions{}.pipeline_depth;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cli" && i + 1 < argc) g_cli = argv[++i];
    else if (a == "--actors" && i + 1 < argc) actors = std::stoul(argv[++i]);
    else if (a == "--dispatch-only") dispatch_only = true;
    else if (a == "--elastic-only") elastic_only = true;
    else if (a == "--transfer-only") transfer_only = true;
    else if (a == "--peer-only") peer_only = true;
    else if (a == "--bandwidth-only") bandwidth_only = true;
    else if (a == "--driver-bytes-only") driver_bytes_only = true;
    else if (a == "--times" && i + 1 < argc) times = std::max(1, std::stoi(argv[++i]));
    else if (a == "--depth" && i + 1 < argc) depth = static_cast<unsigned>(std::stoul(argv[++i]));
  }
  if (g_cli.empty()) {
    fmt::print(stderr, "usage: net_remote --cli PATH/TO/redflow [--actors N] [--depth D] [--dispatch-only | --elastic-only | --transfer-only | --peer-only | --bandwidth-only | --driver-bytes-only [--times N]]\n");
    return 2;
  }
  if (elastic_only) {
    elastic();
    return 0;
  }
  if (peer_only) {
    print_peer(actors, depth);
    return 0;
  }
  if (transfer_only) {
    const std::size_t mb8 = std::size_t{8} << 20;
    print_worker_to_worker(mb8, loopback_tcp(mb8, 32));
    return 0;
  }
  if (bandwidth_only) {
    fmt::print("{{{}}}\n", measure_bandwidth(std::size_t{8} << 20).fields());
    return 0;
  }
  if (driver_bytes_only) {
    const std::size_t mb8 = std::size_t{8} << 20;
    const DriverBytes d = driver_to_worker(mb8, times);
    const double tcp = loopback_tcp(mb8, 32);
    fmt::print("{{\"driver_send_MBps\": {:.1f}, \"driver_read_MBps\": {:.1f}, \"loopback_tcp_MBps\": {:.1f}, \"send_fraction\": {:.3f}, "
               "\"read_fraction\": {:.3f}}}\n",
               d.send_MBps, d.read_MBps, tcp, d.send_MBps / tcp, d.read_MBps / tcp);
    return 0;
  }
  // Pipelined dispatch (--depth, default RuntimeOptions' 32) beside one
  // message at a time (depth 1, the baseline), both schedulers, same run.
  const double remote_rate = dispatch_rate(actors, 2, 0, depth);
  reap_all();
  const double unpipelined = dispatch_rate(actors, 2, 0, 1);
  reap_all();
  const double heft_rate = dispatch_rate(actors, 2, 0, depth, Scheduler::kHeft);
  reap_all();
  const double heft_unpipelined = dispatch_rate(actors, 2, 0, 1, Scheduler::kHeft);
  reap_all();
  fmt::print("{{\"dispatch_actors_per_s_2_workers\": {:.0f}, \"depth_1\": {:.0f}, \"ratio\": {:.2f}, "
             "\"heft\": {:.0f}, \"heft_depth_1\": {:.0f}, \"heft_ratio\": {:.2f}}}\n",
             remote_rate, unpipelined, remote_rate / unpipelined, heft_rate, heft_unpipelined, heft_rate / heft_unpipelined);
  if (dispatch_only) return 0;
  const double local_rate = dispatch_rate(actors, 0, 2);
  const std::size_t mb8 = std::size_t{8} << 20;
  const Bandwidth bandwidth = measure_bandwidth(mb8);
  print_worker_to_worker(mb8, bandwidth.tcp_MBps);
  const double hb = 0.5;
  std::uint64_t lost = 0, recomputed = 0;
  const auto [plain, killed] = recovery(hb, 0.05, lost, recomputed);
  fmt::print("{{\"heartbeat_timeout_s\": {}, \"lost_after_kill9_s\": {:.4f}, \"lost_after_sigstop_s\": {:.4f}, "
             "\"makespan_s\": {:.3f}, \"makespan_with_kill_s\": {:.3f}, \"lost_tiles\": {}, \"recomputed_actors\": {}}}\n",
             hb, detection(hb, false, 5), detection(hb, true, 3), plain, killed, lost, recomputed);
  fmt::print("{{\"dispatch_actors_per_s_2_workers\": {:.0f}, \"dispatch_actors_per_s_2_local_tiles\": {:.0f}, {}}}\n", remote_rate,
             local_rate, bandwidth.fields());
  elastic();
  return 0;
}
