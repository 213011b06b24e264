// `redflow table1`: the paper's Table 1 (section 6.3, stolen actors under work
// stealing) reproduced. Every row runs the paper-profile graph on the paper's
// machine (16 tiles, 8 slots of 160 KiB) with work stealing, 10 times by
// default, verifies the output against an independent reference, and prints
// the paper's actors / average stolen / percent beside ours as a Markdown
// table (docs/performance.md, "The paper's experiment").
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <complex>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "apps/apps.hpp"
#include "cli_common.hpp"

namespace redflow::cli {

namespace {

struct Table1Args {
  std::string rows = "all";
  unsigned runs = 10;
  std::uint64_t seed = 1;       // work stealing's random choices
  std::uint64_t data_seed = 1;  // the input data
  std::string json;
};

// The rows named by --rows: "all", or a comma list of APP (all its sizes) or APP:N.
Result<std::vector<apps::PaperTable1Row>> select_rows(const std::string& text) {
  const auto table = apps::paper_table1();
  if (text == "all") return std::vector<apps::PaperTable1Row>(table.begin(), table.end());
  std::vector<apps::PaperTable1Row> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t colon = item.find(':');
    const std::string app = item.substr(0, colon);
    const std::string n = colon == std::string::npos ? "" : item.substr(colon + 1);
    std::string sizes;
    bool found = false;
    for (const auto& row : table) {
      if (row.app != app) continue;
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(row.n);
      if (n.empty() || n == std::to_string(row.n)) {
        out.push_back(row);
        found = true;
      }
    }
    if (!found)
      return Status::InvalidArgument("--rows " + text + ": '" + item + "' is not a row of the paper's Table 1" +
                                     (sizes.empty() ? " (apps: matmul, fft, bitonic)" : " (" + app + " sizes: " + sizes + ")"));
    at = comma + 1;
  }
  return out;
}

// "" when `out` is the right result of `p`, else what is wrong. References are
// independent of the graph: the textbook formula, FFTW, std::sort.
std::string verify(const apps::AppProblem& p, std::size_t n, const std::vector<std::byte>& out) {
  if (p.app == "matmul") {
    std::vector<std::int32_t> a(n * n), b(n * n), c(n * n);
    std::memcpy(a.data(), p.inputs.at("A").data(), n * n * 4);
    std::memcpy(b.data(), p.inputs.at("B").data(), n * n * 4);
    std::memcpy(c.data(), out.data(), n * n * 4);
    std::mt19937_64 rng(7);
    for (int t = 0; t < 256; ++t) {  // the whole product by the triple loop would take minutes at n = 6000
      const std::size_t i = rng() % n, j = rng() % n;
      std::uint32_t sum = 0;
      for (std::size_t k = 0; k < n; ++k) sum += static_cast<std::uint32_t>(a[i * n + k]) * static_cast<std::uint32_t>(b[k * n + j]);
      if (static_cast<std::int32_t>(sum) != c[i * n + j]) return fmt::format("C[{}][{}] differs from the textbook formula", i, j);
    }
    return "";
  }
  if (p.app == "fft") {
    using cd = std::complex<double>;
    std::vector<cd> x(n), y(n);
    std::memcpy(static_cast<void*>(x.data()), p.inputs.at("X").data(), n * 16);
    std::memcpy(static_cast<void*>(y.data()), out.data(), n * 16);
    const auto ref = apps::fft_reference(x);
    const double err = apps::relative_error(y.data(), ref.data(), n);
    return err < 1e-10 ? "" : fmt::format("relative L2 error {:.3g} against FFTW", err);
  }
  std::vector<std::int32_t> x(n), y(n);
  std::memcpy(x.data(), p.inputs.at("X").data(), n * 4);
  std::memcpy(y.data(), out.data(), n * 4);
  std::sort(x.begin(), x.end());
  return x == y ? "" : "output differs from std::sort";
}

std::string size_label(const apps::PaperTable1Row& r) {
  if (r.app == "matmul") return fmt::format("{}²", r.n);
  return fmt::format("2^{}", std::countr_zero(r.n));
}

int table1_main(const Table1Args& a) {
  auto rows = select_rows(a.rows);
  if (!rows.ok()) return usage_error(rows.status());
  const Registry reg = cli_registry();
  nlohmann::json j;
  j["runs"] = a.runs;
  j["machine"] = {{"tiles", apps::kPaperTiles}, {"slots", apps::kPaperSlots}, {"slot_bytes", apps::kPaperSlotBytes},
                  {"hardware_threads", std::thread::hardware_concurrency()}};
  j["rows"] = nlohmann::json::array();
  fmt::print("| app | input size | paper: actors | ours: actors | paper: average stolen | ours: average stolen (min-max) | paper: % | ours: % | ours: s per run |\n");
  fmt::print("|-----|-----------:|--------------:|-------------:|----------------------:|-------------------------------:|---------:|--------:|----------------:|\n");
  for (const auto& row : *rows) {
    fmt::print(stderr, "table1: {} n={} ({} runs)\n", row.app, row.n, a.runs);
    auto p = apps::make_problem(row.app, row.n, 0, apps::Target{}, a.data_seed, apps::Profile::kPaper);
    if (!p.ok()) return fail(p.status());
    RuntimeOptions o;
    apps::apply_paper_machine(o);
    o.scheduler = Scheduler::kSteal;
    o.seed = a.seed;
    Runtime rt(o);
    auto loaded = rt.load(p->graph, reg);
    if (!loaded.ok()) return fail(loaded.status());
    Inputs in;
    for (const auto& [name, bytes] : p->inputs) in[name] = bytes;
    std::vector<double> stolen, seconds;
    for (unsigned r = 0; r < a.runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      auto out = loaded->execute(in);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (!out.ok()) return fail(out.status());
      if (r == 0) {
        if (std::string why = verify(*p, row.n, out->at(p->output)); !why.empty())
          return fail(Status::Internal(fmt::format("table1: {} n={}: output not verified: {}", row.app, row.n, why)));
      }
      stolen.push_back(static_cast<double>(loaded->last_stats().steals));
    }
    double mean = 0;
    for (double s : stolen) mean += s / static_cast<double>(stolen.size());
    const std::size_t actors = p->graph.actors().size();
    const double percent = 100.0 * mean / static_cast<double>(actors);
    std::sort(seconds.begin(), seconds.end());
    const double median_s = seconds[seconds.size() / 2];
    fmt::print("| {} | {} | {} | {} | {:.1f} | {:.1f} ({}-{}) | {:.1f} % | {:.1f} % | {:.3g} |\n", row.app, size_label(row), row.actors,
               actors, row.stolen, mean, *std::min_element(stolen.begin(), stolen.end()), *std::max_element(stolen.begin(), stolen.end()),
               row.percent, percent, median_s);
    std::fflush(stdout);
    j["rows"].push_back({{"app", row.app},
                         {"n", row.n},
                         {"paper_actors", row.actors},
                         {"paper_stolen", row.stolen},
                         {"paper_percent", row.percent},
                         {"actors", actors},
                         {"stolen", mean},
                         {"stolen_runs", stolen},
                         {"percent", percent},
                         {"median_s", median_s},
                         {"verified", true}});
    if (!a.json.empty()) {  // after every row, so that an interrupted sweep keeps what it measured
      const std::string text = j.dump(2) + "\n";
      if (Status s = write_file(a.json, text.data(), text.size()); !s.ok()) return fail(s);
    }
  }
  return 0;
}

}  // namespace

Command add_table1_command(CLI::App& app) {
  auto a = std::make_shared<Table1Args>();
  auto* sub = app.add_subcommand("table1",
                                 "The paper's Table 1 (stolen actors under work stealing) beside ours: paper-profile graphs on the\n"
                                 "paper's machine (16 tiles, 8 slots of 160 KiB), work stealing, outputs verified.\n"
                                 "Examples:\n"
                                 "  redflow table1                                   # all 16 rows, 10 runs each (slow: matmul 6000^2)\n"
                                 "  redflow table1 --rows fft,bitonic:4194304 --runs 3 --json t1.json");
  sub->add_option("--rows", a->rows, "all, or a comma list of APP (all its sizes) or APP:N, rows of the paper's Table 1")
      ->capture_default_str();
  sub->add_option("--runs", a->runs, "Executions per row (the paper: 10); stolen actors are averaged")
      ->check(CLI::Range(1u, 10000u))
      ->capture_default_str();
  sub->add_option("--seed", a->seed, "Seed of work stealing's random choices")->capture_default_str();
  sub->add_option("--data-seed", a->data_seed, "Seed of the random input data")->capture_default_str();
  sub->add_option("--json", a->json, "Also write the rows as JSON (rewritten after every row)");
  return {sub, [a] { return table1_main(*a); }};
}

}  // namespace redflow::cli
