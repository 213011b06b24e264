// `redflow bench`: build an application graph (or an overhead shape), run it
// with the runtime, verify its output, and time it against the best direct
// code on the same number of threads, in the same process (docs/performance.md).
#include <fmt/format.h>
#include <sys/resource.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "apps/apps.hpp"
#include "cli_common.hpp"

namespace redflow::cli {

namespace {

using cd = std::complex<double>;

struct BenchArgs {
  std::string app;
  std::size_t n = 0;  // 0: the app's default
  std::size_t block = 0;
  std::string shape = "chain";
  std::size_t bytes = 0;
  RuntimeArgs runtime;  // --tiles, --slots, ... as `redflow run` has them
  std::string schedulers = "heft";  // --scheduler: one, or a comma list
  std::string redundancy = "none";
  unsigned runs = 5;
  std::uint64_t data_seed = 1;
  std::string json;
  bool no_baseline = false;
  std::string fftw_wisdom = "default";
  std::string fftw_planning = "measure";
  std::string profile = "fast";
};

std::size_t default_n(const std::string& app) {
  if (app == "matmul") return 1024;
  if (app == "fft") return std::size_t{1} << 20;
  if (app == "bitonic") return std::size_t{1} << 22;
  return 100000;  // overhead: actors
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// "12.3 ms", "1.23 s", "45.6 us".
std::string human(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// CPU time of this process and of the whole machine, to tell how much of the
// machine other processes used while we measured (a shared machine skews times).
struct CpuSample {
  double wall = 0, self = 0, busy = 0;  // seconds
};

CpuSample cpu_sample() {
  CpuSample s;
  s.wall = now_s();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  s.self = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) {
    const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    s.busy = (user + nice + system + irq + softirq + steal) / hz;
  }
  return s;
}

// Cores' worth of CPU that other processes used between a and b.
double others_load(const CpuSample& a, const CpuSample& b) {
  const double wall = b.wall - a.wall;
  if (wall <= 0) return 0;
  return std::max(0.0, (b.busy - a.busy) - (b.self - a.self)) / wall;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::string default_wisdom_path() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = cache && *cache ? std::filesystem::path(cache) : home ? std::filesystem::path(home) / ".cache" : "";
  if (dir.empty()) return "";
  return (dir / "redflow" / "fftw-wisdom").string();
}

// One redundancy configuration's measurements.
struct ConfigRun {
  std::size_t runtime = 0;  // index into the runtimes (one per scheduler)
  Scheduler scheduler = Scheduler::kHeft;
  Redundancy redundancy = Redundancy::kNone;
  std::vector<double> times, makespans, steals, transfers, transfer_bytes;
  bool verified = false;
  std::string mismatch;  // why not verified
  Outputs outputs;         // from the warm-up; the timed runs write into them (execute_into)
  OutputBuffers buffers;
};

// The reference (baseline) side of one application.
class Baseline {
 public:
  virtual ~Baseline() = default;
  virtual std::string name() const = 0;
  virtual void run() = 0;  // one timed execution
  // "" when `out` is the right answer, else what is wrong.
  virtual std::string check(const std::vector<std::byte>& out) const = 0;
};

class MatmulBaseline : public Baseline {
 public:
  MatmulBaseline(const apps::AppProblem& p, std::size_t n, unsigned threads) : n_(n), threads_(threads), direct_(n, threads) {
    a_ = as_i32(p.inputs.at("A"));
    b_ = as_i32(p.inputs.at("B"));
    c_.resize(n * n);
    run();  // the reference result
    ref_ = c_;
  }
  std::string name() const override { return fmt::format("direct blocked int32 kernel, {} threads", threads_); }
  void run() override { direct_.run(a_.data(), b_.data(), c_.data()); }
  std::string check(const std::vector<std::byte>& out) const override {
    if (out.size() != n_ * n_ * 4) return "output has the wrong size";
    std::vector<std::int32_t> c = as_i32(out);
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i] != ref_[i]) return fmt::format("C[{}][{}] = {}, the direct kernel gives {}", i / n_, i % n_, c[i], ref_[i]);
    // Independent of the shared kernel: 64 entries by the textbook formula.
    std::mt19937_64 rng(7);
    for (int t = 0; t < 64; ++t) {
      const std::size_t i = rng() % n_, j = rng() % n_;
      std::uint32_t sum = 0;
      for (std::size_t k = 0; k < n_; ++k)
        sum += static_cast<std::uint32_t>(a_[i * n_ + k]) * static_cast<std::uint32_t>(b_[k * n_ + j]);
      if (static_cast<std::int32_t>(sum) != c[i * n_ + j])
        return fmt::format("C[{}][{}] = {}, the textbook formula gives {}", i, j, c[i * n_ + j], static_cast<std::int32_t>(sum));
    }
    return "";
  }
  // OpenBLAS sgemm on the same sizes (float): the ceiling, for reference; 0
  // when OpenBLAS cannot be opened.
  double sgemm_median(unsigned runs) const {
    std::vector<float> a(a_.size()), b(b_.size()), c(n_ * n_);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(a_[i] & 0xff);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(b_[i] & 0xff);
    std::vector<double> t;
    for (unsigned r = 0; r <= runs; ++r) {
      const double t0 = now_s();
      if (!apps::sgemm_ceiling(a.data(), b.data(), c.data(), n_, threads_)) return 0;
      if (r > 0) t.push_back(now_s() - t0);
    }
    return median(t);
  }

 private:
  static std::vector<std::int32_t> as_i32(const std::vector<std::byte>& bytes) {
    std::vector<std::int32_t> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
  }
  std::size_t n_;
  unsigned threads_;
  apps::MatmulDirect direct_;
  std::vector<std::int32_t> a_, b_, c_, ref_;
};

class FftBaseline : public Baseline {
 public:
  FftBaseline(const apps::AppProblem& p, std::size_t n, unsigned threads, bool timed) : n_(n), threads_(threads) {
    const auto& x = p.inputs.at("X");
    if (timed) {
      const double t0 = now_s();
      direct_ = std::make_unique<apps::FftDirect>(n, threads);
      plan_s_ = now_s() - t0;
      std::memcpy(static_cast<void*>(direct_->input()), x.data(), x.size());
      direct_->run();
      ref_.assign(direct_->output(), direct_->output() + n);
    } else {
      std::vector<cd> in(n);
      std::memcpy(static_cast<void*>(in.data()), x.data(), x.size());
      ref_ = apps::fft_reference(in);
    }
  }
  std::string name() const override { return fmt::format("FFTW3 out-of-place, {} threads", threads_); }
  void run() override { direct_->run(); }
  std::string check(const std::vector<std::byte>& out) const override {
    if (out.size() != n_ * 16) return "output has the wrong size";
    std::vector<cd> y(n_);
    std::memcpy(static_cast<void*>(y.data()), out.data(), out.size());
    const double err = apps::relative_error(y.data(), ref_.data(), n_);
    // Both sides are O(eps log n) off the exact transform; a wrong one is O(1) off.
    if (!(err < kTolerance)) return fmt::format("relative L2 error {:.3g} against FFTW (tolerance {:.0e})", err, kTolerance);
    return "";
  }
  double plan_s() const { return plan_s_; }
  static constexpr double kTolerance = 1e-10;

 private:
  std::size_t n_;
  unsigned threads_;
  std::unique_ptr<apps::FftDirect> direct_;
  std::vector<cd> ref_;
  double plan_s_ = 0;
};

class SortBaseline : public Baseline {
 public:
  SortBaseline(const apps::AppProblem& p, std::size_t n, unsigned threads) : n_(n), threads_(threads) {
    in_.resize(n);
    std::memcpy(in_.data(), p.inputs.at("X").data(), n * 4);
    work_ = in_;
    apps::sort_direct(work_.data(), n, threads);
    ref_ = work_;
  }
  std::string name() const override { return fmt::format("oneTBB parallel_sort, {} threads", threads_); }
  void prepare() { std::memcpy(work_.data(), in_.data(), n_ * 4); }  // untimed: the sort works in place
  void run() override { apps::sort_direct(work_.data(), n_, threads_); }
  std::string check(const std::vector<std::byte>& out) const override {
    if (out.size() != n_ * 4) return "output has the wrong size";
    for (std::size_t i = 0; i < n_; ++i) {
      std::int32_t v;
      std::memcpy(&v, out.data() + 4 * i, 4);
      if (v != ref_[i]) return fmt::format("Y[{}] = {}, parallel_sort gives {}", i, v, ref_[i]);
    }
    return "";
  }

 private:
  std::size_t n_;
  unsigned threads_;
  std::vector<std::int32_t> in_, work_, ref_;
};

class OverheadBaseline : public Baseline {
 public:
  OverheadBaseline(apps::Shape shape, std::size_t n, unsigned threads) : tbb_(shape, n), threads_(threads) {}
  std::string name() const override { return fmt::format("oneTBB flow graph of empty continue_nodes, {} threads", threads_); }
  void run() override { tbb_.run(); }
  std::string check(const std::vector<std::byte>&) const override { return ""; }

 private:
  apps::TbbShape tbb_;
  unsigned threads_;
};

Result<std::vector<Scheduler>> parse_schedulers(const std::string& text) {
  std::vector<Scheduler> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    if (item == "heft") {
      out.push_back(Scheduler::kHeft);
    } else if (item == "steal") {
      out.push_back(Scheduler::kSteal);
    } else {
      return Status::InvalidArgument("--scheduler " + text + ": '" + item + "' is neither heft nor steal");
    }
    at = comma + 1;
  }
  return out;
}

int bench_main(const BenchArgs& a) {
  const bool overhead = a.app == "overhead";
  if (!overhead && a.app != "matmul" && a.app != "fft" && a.app != "bitonic")
    return usage_error(Status::InvalidArgument("unknown app '" + a.app + "' (expected matmul, fft, bitonic or overhead)"));
  auto configs = parse_redundancy_list(a.redundancy);
  if (!configs.ok()) return usage_error(Status::InvalidArgument("--redundancy: " + configs.status().message()));
  auto schedulers = parse_schedulers(a.schedulers);
  if (!schedulers.ok()) return usage_error(schedulers.status());
  std::optional<apps::Shape> shape;
  if (overhead) {
    shape = apps::parse_shape(a.shape);
    if (!shape) return usage_error(Status::InvalidArgument("--shape " + a.shape + ": expected chain, fanout, tree or wavefront"));
  }
  const std::size_t n = a.n != 0 ? a.n : default_n(a.app);
  auto options = runtime_options(a.runtime);
  if (!options.ok()) return usage_error(options.status());
  options->redundancy = configs->front();
  RuntimeOptions& o = *options;
  const unsigned threads = o.tiles * o.cores_per_tile;
  tbb::global_control tbb_threads(tbb::global_control::max_allowed_parallelism, threads);
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.runtime.libs); !s.ok()) return fail(s);

  const apps::Target target{.slot_bytes = o.slot_bytes, .slots = o.slots, .tiles = o.tiles};
  apps::AppProblem problem;
  if (overhead) {
    problem.app = "overhead";
    problem.graph = apps::overhead_graph(*shape, n, a.bytes);
    problem.inputs["X"] = std::vector<std::byte>(a.bytes);
    problem.output = "Y";
  } else {
    auto profile = apps::parse_profile(a.profile);
    if (!profile.ok()) return usage_error(profile.status());
    auto p = apps::make_problem(a.app, n, a.block, target, a.data_seed, *profile);
    if (!p.ok()) return usage_error(p.status());
    problem = std::move(*p);
  }

  std::string wisdom;
  if (a.app == "fft") {
    apps::set_fft_planning(a.fftw_planning == "measure" ? apps::FftPlanning::kMeasure : apps::FftPlanning::kEstimate);
    wisdom = a.fftw_wisdom == "default" ? default_wisdom_path() : a.fftw_wisdom;
    if (!wisdom.empty()) apps::import_fft_wisdom(wisdom);  // a missing file is fine: plans are made and saved below
  }

  // One runtime per scheduler, all measured in turn in the same process.
  const std::size_t actors = problem.graph.actors().size();
  std::vector<std::unique_ptr<Runtime>> runtimes;  // declared first: they outlive their loaded graphs
  std::vector<LoadedGraph> loaded;
  double load_s = 0;
  for (Scheduler sched : *schedulers) {
    RuntimeOptions so = o;
    so.scheduler = sched;
    runtimes.push_back(std::make_unique<Runtime>(so));
    const double l0 = now_s();
    auto lg = runtimes.back()->load(problem.graph, reg);
    if (loaded.empty()) load_s = now_s() - l0;
    if (!lg.ok()) return fail(lg.status());
    for (Redundancy r : *configs)
      if (Status s = lg->usable(r); !s.ok())
        return usage_error(Status::InvalidArgument("--redundancy " + std::string(to_string(r)) + ": " + s.message()));
    loaded.push_back(std::move(*lg));
  }

  // The reference result comes from the baseline code, computed even with --no-baseline (then untimed).
  std::unique_ptr<Baseline> baseline;
  double baseline_plan_s = 0;
  if (a.app == "matmul") {
    baseline = std::make_unique<MatmulBaseline>(problem, n, threads);
  } else if (a.app == "fft") {
    auto fb = std::make_unique<FftBaseline>(problem, n, threads, !a.no_baseline);
    baseline_plan_s = fb->plan_s();
    baseline = std::move(fb);
  } else if (a.app == "bitonic") {
    baseline = std::make_unique<SortBaseline>(problem, n, threads);
  } else if (!a.no_baseline) {
    baseline = std::make_unique<OverheadBaseline>(*shape, n, threads);
  }
  if (a.app == "fft" && !wisdom.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(wisdom).parent_path(), ec);
    apps::export_fft_wisdom(wisdom);
  }

  Inputs inputs;
  for (const auto& [name, bytes] : problem.inputs) inputs[name] = bytes;

  // Warm-up and verification of every configuration.
  std::vector<ConfigRun> runs;
  for (std::size_t k = 0; k < loaded.size(); ++k)
    for (Redundancy r : *configs) {
    ConfigRun c;
    c.runtime = k;
    c.scheduler = (*schedulers)[k];
    c.redundancy = r;
    ExecuteOptions eo;
    eo.redundancy = r;
    auto out = loaded[k].execute(inputs, eo);
    if (!out.ok()) return fail(Status(out.status()));
    const auto& st = loaded[k].last_stats();
    if (overhead) {
      const std::size_t expected = (*loaded[k].executed_graph(r))->actors().size();  // usable: checked at load
      c.mismatch = st.actors_executed == expected ? "" : fmt::format("{} actors executed of {}", st.actors_executed, expected);
    } else {
      c.mismatch = baseline->check(out->at(problem.output));
    }
    c.verified = c.mismatch.empty();
    c.outputs = std::move(*out);
    for (auto& [name, bytes] : c.outputs) c.buffers.emplace(name, std::span<std::byte>(bytes));
    runs.push_back(std::move(c));
  }

  // Timed runs, interleaved so that a slow phase of a shared machine hits both sides.
  std::vector<double> base_times;
  const CpuSample cpu0 = cpu_sample();
  for (unsigned r = 0; r < a.runs; ++r) {
    for (ConfigRun& c : runs) {
      const double t0 = now_s();
      ExecuteOptions eo;
      eo.redundancy = c.redundancy;
      // Into the caller's memory, as the baselines write into theirs (docs/performance.md).
      const Status out = loaded[c.runtime].execute_into(inputs, c.buffers, eo);
      const double t = now_s() - t0;
      if (!out.ok()) return fail(out);
      const auto& st = loaded[c.runtime].last_stats();
      if (overhead && st.actors_executed != (*loaded[c.runtime].executed_graph(c.redundancy))->actors().size()) c.verified = false;
      c.times.push_back(t);
      c.makespans.push_back(st.makespan_s);
      c.steals.push_back(static_cast<double>(st.steals));
      c.transfers.push_back(static_cast<double>(st.transfers));
      c.transfer_bytes.push_back(static_cast<double>(st.transfer_bytes));
    }
    if (baseline && !a.no_baseline) {
      if (auto* s = dynamic_cast<SortBaseline*>(baseline.get())) s->prepare();
      const double t0 = now_s();
      baseline->run();
      base_times.push_back(now_s() - t0);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let the baseline's threads go idle
    }
  }
  const CpuSample cpu1 = cpu_sample();
  double sgemm_s = 0;
  if (a.app == "matmul" && !a.no_baseline) sgemm_s = static_cast<MatmulBaseline*>(baseline.get())->sgemm_median(a.runs);

  const double base_s = median(base_times);
  const ConfigRun& first = runs.front();
  const double first_s = median(first.times);
  nlohmann::json j;
  j["app"] = a.app;
  j["n"] = n;
  j["profile"] = a.profile;
  j["machine_profile"] = a.runtime.machine;
  if (overhead) {
    j["shape"] = a.shape;
    j["bytes"] = a.bytes;
  }
  j["actors"] = actors;
  j["scheduler"] = to_string(first.scheduler);
  j["tiles"] = o.tiles;
  j["cores_per_tile"] = o.cores_per_tile;
  j["slots"] = o.slots;
  j["slot_bytes"] = o.slot_bytes;
  j["runs"] = a.runs;
  j["redundancy"] = to_string(first.redundancy);
  j["redflow_s"] = first_s;
  j["makespan_s"] = median(first.makespans);
  j["baseline"] = baseline && !a.no_baseline ? baseline->name() : "";
  j["baseline_s"] = base_times.empty() ? nlohmann::json(nullptr) : nlohmann::json(base_s);
  j["ratio"] = base_times.empty() ? nlohmann::json(nullptr) : nlohmann::json(base_s / first_s);
  bool all_verified = true;
  for (const ConfigRun& c : runs) all_verified = all_verified && c.verified;
  j["verified"] = all_verified;
  j["steals"] = mean(first.steals);
  j["transfers"] = mean(first.transfers);
  j["transfer_bytes"] = mean(first.transfer_bytes);
  j["load_s"] = load_s;
  if (overhead) {
    j["redflow_ns_per_actor"] = first_s * 1e9 / static_cast<double>(actors);
    if (!base_times.empty()) j["baseline_ns_per_actor"] = base_s * 1e9 / static_cast<double>(actors);
  }
  if (a.app == "matmul" && !a.no_baseline) j["sgemm_s"] = sgemm_s;
  if (a.app == "fft" && !a.no_baseline) j["baseline_plan_s"] = baseline_plan_s;
  j["configs"] = nlohmann::json::array();
  for (const ConfigRun& c : runs) {
    const double t = median(c.times);
    // normalized: against the first redundancy configuration under the same scheduler.
    const ConfigRun& ref = runs[c.runtime * configs->size()];
    j["configs"].push_back({{"scheduler", to_string(c.scheduler)},
                            {"redundancy", to_string(c.redundancy)},
                            {"redflow_s", t},
                            {"makespan_s", median(c.makespans)},
                            {"ratio", base_times.empty() ? nlohmann::json(nullptr) : nlohmann::json(base_s / t)},
                            {"normalized", t / median(ref.times)},
                            {"verified", c.verified},
                            {"steals", mean(c.steals)},
                            {"transfers", mean(c.transfers)},
                            {"transfer_bytes", mean(c.transfer_bytes)}});
  }
  j["machine"] = {{"cpu", cpu_model()},
                  {"hardware_threads", std::thread::hardware_concurrency()},
                  {"others_load", others_load(cpu0, cpu1)}};

  std::string what = overhead ? fmt::format("overhead {} n={}", a.shape, n) : fmt::format("{} n={}", a.app, n);
  for (const ConfigRun& c : runs) {
    const double t = median(c.times);
    fmt::print("{} {} tiles={} redundancy={}: redflow {} (makespan {}){}, {}, steals {:.1f}, transfers {:.1f}\n", what,
               to_string(c.scheduler), o.tiles, to_string(c.redundancy), human(t), human(median(c.makespans)),
               base_times.empty() ? "" : fmt::format(", ratio baseline/redflow {:.2f}", base_s / t),
               c.verified ? "verified" : "NOT verified: " + c.mismatch, mean(c.steals), mean(c.transfers));
  }
  if (!base_times.empty()) fmt::print("  baseline: {}: {}\n", baseline->name(), human(base_s));
  if (sgemm_s > 0) fmt::print("  OpenBLAS sgemm (float, for reference): {}\n", human(sgemm_s));
  const double others = others_load(cpu0, cpu1);
  if (others > 0.25)
    fmt::print(stderr, "redflow: warning: other processes used {:.1f} cores during the measurement; times are skewed\n", others);
  if (!a.json.empty()) {
    const std::string text = j.dump(2) + "\n";
    if (Status s = write_file(a.json, text.data(), text.size()); !s.ok()) return fail(s);
  }
  if (!all_verified) {
    for (const ConfigRun& c : runs)
      if (!c.verified)
        return fail(Status::Internal(fmt::format("{} ({}, {}): output not verified: {}", what, to_string(c.scheduler),
                                                 to_string(c.redundancy), c.mismatch)));
  }
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* sub = app.add_subcommand("bench", "Run an application graph, verify it, and time it against the best direct code on as many threads.\n"
                                          "Examples:\n"
                                          "  redflow bench matmul --n 2048 --scheduler heft,steal --json mm.json\n"
                                          "  redflow bench fft --n 4194304\n"
                                          "  redflow bench bitonic --n 16777216 --redundancy none,2x-same,3x-diff\n"
                                          "  redflow bench overhead --shape wavefront --n 100000\n"
                                          "Runtime flags are those of `redflow run`; the baseline gets tiles x cores-per-tile threads.");
  sub->add_option("app", a->app, "matmul, fft, bitonic or overhead")->required();
  sub->add_option("--n", a->n,
                  "Elements: matrix side (matmul), points (fft, power of two), int32 (bitonic, power of two), "
                  "actors (overhead); default 1024, 2^20, 2^22, 100000");
  sub->add_option("--block", a->block, "Block size as in `redflow gen` (default: chosen from the slots and tiles)");
  sub->add_option("--profile", a->profile, "fast (ours) or paper (the paper's graphs; use with --machine paper; docs/apps.md)")
      ->capture_default_str();
  sub->add_option("--shape", a->shape, "overhead: chain, fanout, tree or wavefront")->capture_default_str();
  sub->add_option("--bytes", a->bytes, "overhead: bytes per data node")->capture_default_str();
  add_runtime_options(sub, a->runtime);
  // bench measures several schedulers in one process: its --scheduler takes a list.
  sub->remove_option(sub->get_option("--scheduler"));
  sub->add_option("--scheduler", a->schedulers, "heft, steal, or a comma list measured in turn (heft,steal)")->capture_default_str();
  sub->add_option("--redundancy", a->redundancy,
                  "Redundancy configuration, or a comma list measured in turn (none, 2x-same, 3x-same, 2x-diff, 3x-diff)")
      ->capture_default_str();
  sub->add_option("--runs", a->runs, "Timed runs (after one warm-up); medians are reported")->check(CLI::Range(1u, 100000u))->capture_default_str();
  sub->add_option("--data-seed", a->data_seed, "Seed of the random input data")->capture_default_str();
  sub->add_option("--json", a->json, "Write the results as JSON (keys: docs/performance.md)");
  sub->add_flag("--no-baseline", a->no_baseline, "Do not time the baseline (its result is still used to verify)");
  sub->add_option("--fftw-wisdom", a->fftw_wisdom, "fft: FFTW wisdom file, read and updated (\"\" for none; default ~/.cache/redflow/fftw-wisdom)")
      ->capture_default_str();
  sub->add_option("--fftw-planning", a->fftw_planning, "fft: FFTW planning for the leaves and the baseline")
      ->check(CLI::IsMember({"measure", "estimate"}))
      ->capture_default_str();
  return {sub, [a] { return bench_main(*a); }};
}

}  // namespace redflow::cli
