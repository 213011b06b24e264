// parse_wfformat (workflow.hpp): WfFormat JSON, every schema version, into a Workflow.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "apps/workflow.hpp"

namespace redflow::apps {

namespace {

using json = nlohmann::json;

Status bad(const std::string& what) { return Status::InvalidArgument("WfFormat: " + what); }

// A string field, or an error naming where it is missing.
Result<std::string> text(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return bad(where + ": no \"" + key + "\"");
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return bad(where + ": \"" + key + "\" is not a string");
}

// A number field (the first of `keys` present), or `fallback` when none is.
Result<double> number(const json& j, std::initializer_list<const char*> keys, const std::string& where, double fallback) {
  for (const char* key : keys) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_number() || it->get<double>() < 0) return bad(where + ": \"" + key + "\" is not a number >= 0");
    return it->get<double>();
  }
  return fallback;
}

Result<std::vector<std::string>> strings(const json& j, const char* key, const std::string& where) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end()) return out;
  if (!it->is_array()) return bad(where + ": \"" + key + "\" is not a list");
  for (const auto& e : *it) {
    if (!e.is_string()) return bad(where + ": \"" + key + "\" holds a non-string");
    out.push_back(e.get<std::string>());
  }
  return out;
}

void add_unique(std::vector<std::string>& list, const std::string& s) {
  if (std::find(list.begin(), list.end(), s) == list.end()) list.push_back(s);
}

// 1.5 and later: specification (structure) and execution (runtimes).
Status read_specification(const json& wf, Workflow& w, std::map<std::string, std::vector<std::string>>& children) {
  const json& spec = wf["specification"];
  if (!spec.contains("tasks") || !spec["tasks"].is_array()) return bad("workflow.specification has no \"tasks\" list");
  if (spec.contains("files")) {
    if (!spec["files"].is_array()) return bad("workflow.specification.files is not a list");
    for (const auto& f : spec["files"]) {
      auto id = text(f, "id", "a file of workflow.specification.files");
      if (!id.ok()) return id.status();
      auto size = number(f, {"sizeInBytes"}, "file '" + *id + "'", 0);
      if (!size.ok()) return size.status();
      w.file_bytes[*id] = static_cast<std::uint64_t>(*size);
    }
  }
  for (const auto& t : spec["tasks"]) {
    WorkflowTask task;
    auto id = text(t, "id", "a task of workflow.specification.tasks");
    if (!id.ok()) return id.status();
    task.id = *id;
    task.name = t.value("name", task.id);
    const std::string where = "task '" + task.id + "'";
    for (auto [key, list] : {std::pair{"parents", &task.parents}, std::pair{"inputFiles", &task.inputs}, std::pair{"outputFiles", &task.outputs}}) {
      auto l = strings(t, key, where);
      if (!l.ok()) return l.status();
      *list = std::move(*l);
    }
    auto c = strings(t, "children", where);
    if (!c.ok()) return c.status();
    children[task.id] = std::move(*c);
    for (const auto& f : task.inputs)
      if (!w.file_bytes.count(f)) return bad(where + ": input file '" + f + "' is not in workflow.specification.files");
    for (const auto& f : task.outputs)
      if (!w.file_bytes.count(f)) return bad(where + ": output file '" + f + "' is not in workflow.specification.files");
    w.tasks.push_back(std::move(task));
  }
  std::map<std::string, double> runtime;
  if (wf.contains("execution") && wf["execution"].contains("tasks") && wf["execution"]["tasks"].is_array())
    for (const auto& t : wf["execution"]["tasks"]) {
      auto id = text(t, "id", "a task of workflow.execution.tasks");
      if (!id.ok()) return id.status();
      auto s = number(t, {"runtimeInSeconds", "runtime"}, "the execution of task '" + *id + "'", 0);
      if (!s.ok()) return s.status();
      runtime[*id] = *s;
    }
  for (auto& task : w.tasks) task.runtime_s = runtime.count(task.id) ? runtime[task.id] : 0;
  return Status::Ok();
}

// 1.0-1.4: tasks (or jobs) with their files inline, parents by name (or id).
Status read_tasks(const json& wf, Workflow& w, std::map<std::string, std::vector<std::string>>& children) {
  const char* key = wf.contains("tasks") ? "tasks" : "jobs";
  if (!wf.contains(key) || !wf[key].is_array()) return bad("workflow has no \"specification\", \"tasks\" or \"jobs\"");
  std::map<std::string, std::string> id_of;  // a task's name or id -> its id here
  for (const auto& t : wf[key]) {
    WorkflowTask task;
    auto name = text(t, "name", std::string("a task of workflow.") + key);
    if (!name.ok()) return name.status();
    task.name = *name;
    task.id = task.name;
    if (t.contains("id")) {
      auto id = text(t, "id", "task '" + task.name + "'");
      if (!id.ok()) return id.status();
      task.id = *id;
    }
    const std::string where = "task '" + task.name + "'";
    auto runtime = number(t, {"runtimeInSeconds", "runtime"}, where, 0);
    if (!runtime.ok()) return runtime.status();
    task.runtime_s = *runtime;
    auto parents = strings(t, "parents", where);
    if (!parents.ok()) return parents.status();
    task.parents = std::move(*parents);
    auto c = strings(t, "children", where);
    if (!c.ok()) return c.status();
    children[task.id] = std::move(*c);
    if (t.contains("files")) {
      if (!t["files"].is_array()) return bad(where + ": \"files\" is not a list");
      for (const auto& f : t["files"]) {
        auto file = text(f, "name", where + ": a file");
        if (!file.ok()) return file.status();
        const std::string id = f.value("path", std::string()) + *file;
        auto size = number(f, {"sizeInBytes", "size"}, where + ": file '" + id + "'", 0);
        if (!size.ok()) return size.status();
        w.file_bytes.emplace(id, static_cast<std::uint64_t>(*size));
        const std::string link = f.value("link", std::string());
        if (link == "input") add_unique(task.inputs, id);
        else if (link == "output") add_unique(task.outputs, id);
        else return bad(where + ": file '" + id + "' has link \"" + link + "\", not \"input\" or \"output\"");
      }
    }
    id_of.emplace(task.name, task.id);
    id_of.emplace(task.id, task.id);
    w.tasks.push_back(std::move(task));
  }
  // Parents and children may name tasks by name: by id from here on.
  auto resolve = [&](std::vector<std::string>& list, const std::string& where, const char* what) -> Status {
    for (auto& ref : list) {
      auto it = id_of.find(ref);
      if (it == id_of.end()) return bad(where + ": " + what + " '" + ref + "' is not a task of the workflow");
      ref = it->second;
    }
    return Status::Ok();
  };
  for (auto& task : w.tasks) REDFLOW_RETURN_IF_ERROR(resolve(task.parents, "task '" + task.name + "'", "parent"));
  for (auto& [id, list] : children) REDFLOW_RETURN_IF_ERROR(resolve(list, "task '" + id + "'", "child"));
  return Status::Ok();
}

}  // namespace

Result<Workflow> parse_wfformat(std::string_view json_text) {
  json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return bad("not a JSON object");
  if (!doc.contains("workflow") || !doc["workflow"].is_object()) return bad("no \"workflow\" object");
  Workflow w;
  w.name = doc.value("name", std::string("workflow"));
  w.schema_version = doc.contains("schemaVersion") && doc["schemaVersion"].is_string() ? doc["schemaVersion"].get<std::string>() : "";
  const json& wf = doc["workflow"];
  std::map<std::string, std::vector<std::string>> children;
  REDFLOW_RETURN_IF_ERROR(wf.contains("specification") ? read_specification(wf, w, children) : read_tasks(wf, w, children));

  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < w.tasks.size(); ++i)
    if (!index.emplace(w.tasks[i].id, i).second) return bad("two tasks have the id '" + w.tasks[i].id + "'");
  for (auto& task : w.tasks)
    for (const auto& p : task.parents)
      if (!index.count(p)) return bad("task '" + task.id + "': parent '" + p + "' is not a task of the workflow");
  for (const auto& [id, list] : children)
    for (const auto& c : list) {
      auto it = index.find(c);
      if (it == index.end()) return bad("task '" + id + "': child '" + c + "' is not a task of the workflow");
      add_unique(w.tasks[it->second].parents, id);
    }
  // One writer per file; a file's writer is a parent of each reader.
  std::map<std::string, std::string> writer;
  for (const auto& task : w.tasks)
    for (const auto& f : task.outputs)
      if (auto [it, fresh] = writer.emplace(f, task.id); !fresh && it->second != task.id)
        return bad("file '" + f + "' is written by two tasks, '" + it->second + "' and '" + task.id + "'");
  for (auto& task : w.tasks)
    for (const auto& f : task.inputs)
      if (auto it = writer.find(f); it != writer.end()) {
        if (it->second == task.id) return bad("task '" + task.id + "' reads the file '" + f + "' it writes");
        add_unique(task.parents, it->second);
      }
  // No cycle: the tasks left out of the order hold one, walked back to name it.
  const std::vector<std::size_t> order = task_order(w);
  if (order.size() < w.tasks.size()) {
    std::vector<bool> placed(w.tasks.size(), false);
    for (std::size_t i : order) placed[i] = true;
    std::size_t at = 0;
    while (placed[at]) ++at;
    std::vector<std::size_t> path;
    std::set<std::size_t> seen;
    while (seen.insert(at).second) {  // step to a parent not placed (each such task has one): the walk must come round
      path.push_back(at);
      for (const auto& p : w.tasks[at].parents)
        if (!placed[index[p]]) {
          at = index[p];
          break;
        }
    }
    // path[j] = at, each next one a parent of the one before: parent -> child order is at, path[k], ..., path[j+1], at.
    std::string cycle = w.tasks[at].id;
    for (auto it = std::find(path.begin(), path.end(), at) + 1; it != path.end(); ++it) cycle = w.tasks[*it].id + " -> " + cycle;
    return bad("the workflow has a cycle: " + w.tasks[at].id + " -> " + cycle);
  }
  return w;
}

}  // namespace redflow::apps
