// Parsing STG files into HEFT problems.
#include "schedule/stg.hpp"

#include <fstream>
#include <limits>

namespace redflow::schedule {

Result<HeftProblem> load_stg(const std::string& path, std::size_t processors) {
  if (processors == 0) return Status::InvalidArgument("STG '" + path + "': need at least one processor");
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot open STG file '" + path + "'");
  auto bad = [&](const std::string& what) { return Status::InvalidArgument("STG '" + path + "': " + what); };

  long long n = -1;
  if (!(in >> n) || n < 0 || n > 100'000'000) return bad("first token must be the task count");
  const std::size_t tasks = static_cast<std::size_t>(n) + 2;  // plus dummy entry and exit

  HeftProblem p;
  p.processors = processors;
  p.cost.resize(tasks);
  p.successors.resize(tasks);
  for (std::size_t t = 0; t < tasks; ++t) {
    long long id = -1, npred = -1;
    double cost = -1;
    if (!(in >> id >> cost >> npred)) return bad("task " + std::to_string(t) + ": expected `id cost npred`");
    if (id != static_cast<long long>(t)) return bad("task " + std::to_string(t) + " has id " + std::to_string(id));
    if (!(cost >= 0) || cost == std::numeric_limits<double>::infinity())
      return bad("task " + std::to_string(t) + " has an invalid cost");
    if (npred < 0 || npred > n + 1) return bad("task " + std::to_string(t) + " has an invalid predecessor count");
    p.cost[t].assign(processors, cost);
    for (long long i = 0; i < npred; ++i) {
      long long pred = -1;
      if (!(in >> pred) || pred < 0 || pred >= static_cast<long long>(tasks) || pred == id)
        return bad("task " + std::to_string(t) + " has an invalid predecessor");
      p.successors[static_cast<std::size_t>(pred)].push_back({t, 0.0});
    }
  }
  if (Status s = check_heft_problem(p); !s.ok()) return bad(s.message());
  return p;
}

}  // namespace redflow::schedule
