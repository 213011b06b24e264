// redflow.spits_run: a SPITS bag of tasks written as Python callables, run
// by the embedded SPITS runtime (include/redflow/spits.hpp) with the same
// guarantees as a C++ job: every task committed exactly once, failing
// tasks struck and set aside after `strikes` failures, a commit log that
// lets a stopped job resume where it was.
//
// How: this module is itself a SPITS job plugin. It exports the job entry
// point, whose functions call the Python callables of the job being run;
// spits_run hands the runtime this module's own path, which dlopen finds
// already loaded. Tasks and results cross as pickles (generate must give
// the same tasks in the same order each time, as the log checks them).
// One Python job runs at a time in a process.
#include <dlfcn.h>
#include <pybind11/stl.h>

#include <mutex>
#include <string>

#include "bindings.hpp"
#include "common.hpp"
#include "redflow/spits.hpp"

namespace redflow::python {
namespace {

// The job being run: its callables and the pickle functions, touched only
// with the GIL held.
struct PythonJob {
  py::object tasks;    // an iterator of task objects
  py::object execute;  // execute(task) -> result
  py::object commit;   // commit(task, result)
  py::object dumps, loads;
};
PythonJob* current = nullptr;
std::mutex running;  // one Python job at a time

// The Python exception being handled, with its traceback, into `out`.
void report(py::error_already_set& e, redflow_spits_out* out, const char* function) {
  out->error(out, (std::string("Python ") + function + " raised:\n" + traceback_of(e)).c_str());
}

void write_pickle(const PythonJob& job, const py::object& value, redflow_spits_out* out) {
  const py::bytes pickled = job.dumps(value, 4);
  char* data = nullptr;
  py::ssize_t size = 0;
  PyBytes_AsStringAndSize(pickled.ptr(), &data, &size);
  out->write(out, data, static_cast<std::size_t>(size));
}

py::object unpickle(const PythonJob& job, const void* data, std::size_t size) {
  return job.loads(py::bytes(static_cast<const char*>(data), size));
}

// On the Job Manager: the job spits_run is running. On a Task Manager in a
// worker process (python3 -m redflow.worker), where no spits_run runs: a
// job of its own whose execute is the function the args name (the file of
// its module and its qualified name), imported here.
void* job_setup(int argc, const char* const* argv, redflow_spits_out* out) {
  if (current != nullptr) return current;
  if (argc != 3) {
    out->error(out, "no Python job is being run here (call redflow.spits_run, with listen= for Task Managers in workers)");
    return nullptr;
  }
  py::gil_scoped_acquire gil;
  try {
    py::module_ util = py::module_::import("importlib.util");
    py::object spec = util.attr("spec_from_file_location")("redflow_spits_job", argv[1]);
    if (spec.is_none()) throw py::value_error(std::string("no Python module at ") + argv[1]);
    py::object module = util.attr("module_from_spec")(spec);
    spec.attr("loader").attr("exec_module")(module);
    py::object execute = module;
    const std::string qualname = argv[2];
    for (std::size_t at = 0; at <= qualname.size();) {
      const std::size_t dot = std::min(qualname.find('.', at), qualname.size());
      execute = execute.attr(py::str(qualname.substr(at, dot - at)));
      at = dot + 1;
    }
    py::module_ pickle = py::module_::import("pickle");
    return new PythonJob{py::none(), execute, py::none(), pickle.attr("dumps"), pickle.attr("loads")};
  } catch (py::error_already_set& e) {
    report(e, out, "job import");
    return nullptr;
  }
}

int job_generate(void* state, redflow_spits_out* task) {
  py::gil_scoped_acquire gil;
  auto& job = *static_cast<PythonJob*>(state);
  try {
    py::object next = py::reinterpret_steal<py::object>(PyIter_Next(job.tasks.ptr()));
    if (!next) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return REDFLOW_SPITS_DONE;
    }
    write_pickle(job, next, task);
    return REDFLOW_SPITS_TASK;
  } catch (py::error_already_set& e) {
    report(e, task, "task generator");
    return REDFLOW_SPITS_ERROR;
  }
}

int job_execute(void* state, const void* task, std::size_t task_size, redflow_spits_out* result) {
  py::gil_scoped_acquire gil;
  auto& job = *static_cast<PythonJob*>(state);
  try {
    write_pickle(job, job.execute(unpickle(job, task, task_size)), result);
    return 0;
  } catch (py::error_already_set& e) {
    report(e, result, "execute");
    return REDFLOW_SPITS_ERROR;
  }
}

int job_commit(void* state, const void* task, std::size_t task_size, const void* result, std::size_t result_size, redflow_spits_out* out) {
  py::gil_scoped_acquire gil;
  auto& job = *static_cast<PythonJob*>(state);
  try {
    job.commit(unpickle(job, task, task_size), unpickle(job, result, result_size));
    return 0;
  } catch (py::error_already_set& e) {
    report(e, out, "commit");
    return REDFLOW_SPITS_ERROR;
  }
}

int job_teardown(void* state, int, redflow_spits_out*) {
  if (state != nullptr && state != current) {  // a worker's own job (job_setup)
    py::gil_scoped_acquire gil;
    delete static_cast<PythonJob*>(state);
  }
  return 0;
}

const redflow_spits_job kJobTable = {
    .abi_version = REDFLOW_SPITS_ABI_VERSION,
    .name = "python",
    .setup = job_setup,
    .generate_task = job_generate,
    .execute_task = job_execute,
    .commit_task = job_commit,
    .teardown = job_teardown,
    .main = nullptr,
    .was_committed = nullptr,
};

py::dict report_dict(const spits::Report& r) {
  py::dict d;
  d["job"] = r.job;
  d["generated"] = r.generated;
  d["committed"] = r.committed;
  d["from_log"] = r.from_log;
  d["resubmissions"] = r.resubmissions;
  d["duplicates"] = r.duplicates;
  d["strikes"] = r.strikes;
  d["seconds"] = r.seconds;
  py::list poisoned;
  for (const auto& p : r.poisoned) {
    py::dict t;
    t["id"] = p.id;
    t["strikes"] = p.strikes;
    t["last_error"] = p.last_error;
    poisoned.append(t);
  }
  d["poisoned"] = poisoned;
  py::list managers;
  for (const auto& t : r.task_managers) {
    py::dict m;
    m["name"] = t.name;
    m["host"] = t.host;
    m["lost"] = t.lost;
    m["results"] = t.results;
    m["committed"] = t.committed;
    managers.append(m);
  }
  d["task_managers"] = managers;
  return d;
}

std::string module_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&job_generate), &info) == 0 || info.dli_fname == nullptr)
    throw std::runtime_error("spits_run: cannot find the redflow module's own file");
  return info.dli_fname;
}

}  // namespace

void bind_spits(py::module_& m) {
  m.def(
      "spits_run",
      [](py::iterable tasks, py::object execute, py::object commit, const std::string& name, unsigned task_managers, unsigned workers,
         unsigned strikes, const std::string& log, const std::string& listen, unsigned min_workers, double wait_s,
         double heartbeat_timeout_s, py::object on_listening) {
        std::unique_lock<std::mutex> only_one(running, std::try_to_lock);
        if (!only_one.owns_lock()) throw py::value_error("spits_run: another Python SPITS job is running in this process");
        for (const auto& [what, fn] : {std::pair<const char*, py::object&>{"execute", execute}, {"commit", commit}})
          if (!PyCallable_Check(fn.ptr())) throw py::type_error(std::string("spits_run: ") + what + " is not callable");
        std::vector<std::string> args = {name};
        if (!listen.empty()) {
          // Task Managers in workers import execute: it must be a module's function.
          const std::string qualname = py::getattr(execute, "__qualname__", py::str("")).cast<std::string>();
          py::object module = py::module_::import("sys").attr("modules").attr("get")(py::getattr(execute, "__module__", py::none()));
          py::object file = module.is_none() ? py::object(py::none()) : py::getattr(module, "__file__", py::none());
          if (qualname.empty() || qualname.find("<") != std::string::npos || file.is_none())
            throw py::value_error("spits_run with listen: execute must be a function defined at the top of a module file "
                                  "(Task Managers in worker processes import it), not " + std::string(py::repr(execute)));
          args.push_back(file.cast<std::string>());
          args.push_back(qualname);
        }
        py::module_ pickle = py::module_::import("pickle");
        PythonJob job{py::iter(tasks), execute, commit, pickle.attr("dumps"), pickle.attr("loads")};
        spits::Options o;
        o.task_managers = task_managers;
        o.workers = workers;
        o.strikes = strikes;
        o.log_path = log;
        o.cluster.listen = listen;
        o.cluster.min_workers = min_workers;
        o.cluster.wait_s = wait_s;
        o.cluster.heartbeat_timeout_s = heartbeat_timeout_s;
        if (!on_listening.is_none()) {
          o.cluster.on_listening = on_listening_callback(std::move(on_listening), "redflow.spits_run on_listening");
        }
        const std::string plugin = module_path();
        current = &job;
        Result<spits::Report> r = [&] {
          py::gil_scoped_release release;
          return spits::run_job(plugin, args, o);
        }();
        current = nullptr;
        return report_dict(value_or_raise(std::move(r)));
      },
      py::arg("tasks"), py::arg("execute"), py::arg("commit"), py::kw_only(), py::arg("name") = "python-job", py::arg("task_managers") = 1,
      py::arg("workers") = 2, py::arg("strikes") = 3, py::arg("log") = "", py::arg("listen") = "", py::arg("min_workers") = 0,
      py::arg("wait_s") = 60.0, py::arg("heartbeat_timeout_s") = 2.0, py::arg("on_listening") = py::none(),
      "Runs a bag of tasks: execute(task) -> result on `workers` threads of each of `task_managers` Task Managers (any "
      "number of times per task), commit(task, result) exactly once per task, on one thread. `tasks` is an iterable of "
      "picklable objects, the same ones in the same order on every run of the job. With log=PATH, a job run again "
      "with the same PATH and name commits only what the log does not hold. A task whose execute raised `strikes` "
      "times is set aside (the report's 'poisoned'); a raising commit or task generator ends the job with "
      "redflow.Error. With listen (\"tcp://127.0.0.1:*\"), `python3 -m redflow.worker --connect` processes join as "
      "Task Managers (min_workers waited for; on_listening(endpoint) says where), importing execute from its module; "
      "one lost mid-job gives its tasks back to the queue. Returns the report as a dict.");
}

}  // namespace redflow::python

// The SPITS entry point (include/redflow/spits.hpp): this module is the job
// plugin spits_run hands the runtime. Visible, unlike the module's other symbols.
extern "C" __attribute__((visibility("default"))) const redflow_spits_job* redflow_spits_job_v1(void) {
  return &redflow::python::kJobTable;
}
