// Parsing STG files into HEFT problems.
#include "schedule/stg.hpp"

#include <fstream>
#include <limits>

namespace redflow::schedule {

Result<HeftProblem> parse_stg(std::istream& in, const std::string& name, std::size_t processors) {
  if (processors == 0) return Status::InvalidArgument("STG '" + name + "': need at least one processor");
  auto bad = [&](const std::string& what) { return Status::InvalidArgument("STG '" + name + "': " + what); };

  long long n = -1;
  if (!(in >> n) || n < 0 || n > 100'000'000) return bad("first token must be the task count");
  const std::size_t tasks = static_cast<std::size_t>(n) + 2;  // plus dummy entry and exit

  // The vectors grow with the tasks actually read: the count alone must not
  // make a 20-byte file allocate gigabytes.
  HeftProblem p;
  p.processors = processors;
  for (std::size_t t = 0; t < tasks; ++t) {
    long long id = -1, npred = -1;
    double cost = -1;
    if (!(in >> id >> cost >> npred)) return bad("task " + std::to_string(t) + ": expected `id cost npred`");
    if (id != static_cast<long long>(t)) return bad("task " + std::to_string(t) + " has id " + std::to_string(id));
    if (!(cost >= 0) || cost == std::numeric_limits<double>::infinity())
      return bad("task " + std::to_string(t) + " has an invalid cost");
    if (npred < 0 || npred > id) return bad("task " + std::to_string(t) + " has an invalid predecessor count");
    p.cost.emplace_back(processors, cost);
    p.successors.emplace_back();
    for (long long i = 0; i < npred; ++i) {
      long long pred = -1;
      // STG numbers tasks in topological order: predecessors come first.
      if (!(in >> pred) || pred < 0 || pred >= id)
        return bad("task " + std::to_string(t) + " has an invalid predecessor (not an earlier task)");
      p.successors[static_cast<std::size_t>(pred)].push_back({t, 0.0});
    }
  }
  if (Status s = check_heft_problem(p); !s.ok()) return bad(s.message());
  return p;
}

Result<HeftProblem> load_stg(const std::string& path, std::size_t processors) {
  if (processors == 0) return Status::InvalidArgument("STG '" + path + "': need at least one processor");
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot open STG file '" + path + "'");
  return parse_stg(in, path, processors);
}

}  // namespace redflow::schedule
