// redflow.Client: a Python program's handle on a long-lived `redflow
// server` (include/redflow/client.hpp): submit the words of a one-shot
// command, ask a job's state, wait for it, cancel it, fetch its files.
// Jobs come back as dicts; redflow/cluster.py adds futures that resolve to
// NumPy arrays on top. Calls on one Client are serialized (the C++ Client
// is one per thread); waiting releases the GIL.
#include <pybind11/stl.h>

#include <mutex>

#include "bindings.hpp"
#include "common.hpp"
#include "redflow/client.hpp"

namespace redflow::python {
namespace {

struct PyClient {
  Client client;
  std::mutex busy;
};

py::dict job_dict(const JobInfo& j) {
  py::dict d;
  d["id"] = j.id;
  d["state"] = to_string(j.state);
  d["finished"] = finished(j.state);
  d["args"] = j.args;
  d["cwd"] = j.cwd;
  d["exit_status"] = j.exit_status;
  d["starts"] = j.starts;
  d["message"] = j.message;
  d["report"] = j.report_json.empty() ? py::object(py::none()) : py::module_::import("json").attr("loads")(j.report_json);
  d["workers"] = j.workers;
  d["workers_asked"] = j.workers_asked;
  d["time_limit_s"] = j.time_limit_s;
  return d;
}

// Runs `call` on the client, the GIL released, one call at a time.
template <typename Call>
auto on_client(PyClient& self, Call&& call) {
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(self.busy);
  return call(self.client);
}

}  // namespace

void bind_client(py::module_& m) {
  py::class_<PyClient>(m, "Client", "A handle on a long-lived `redflow server` (docs/server.md).")
      .def(py::init([](const std::string& server_file, const std::string& endpoint, double timeout_s) {
             if (server_file.empty() == endpoint.empty())
               throw py::value_error("Client: give the server's server_file or its client endpoint (one of the two)");
             ClientOptions o;
             o.server_file = server_file;
             o.endpoint = endpoint;
             o.timeout_s = timeout_s;
             Result<Client> c = [&] {
               py::gil_scoped_release release;
               return Client::connect(o);
             }();
             return std::unique_ptr<PyClient>(new PyClient{value_or_raise(std::move(c)), {}});
           }),
           py::kw_only(), py::arg("server_file") = "", py::arg("endpoint") = "", py::arg("timeout_s") = 10.0)
      .def(
          "submit",
          [](PyClient& self, const std::vector<std::string>& args, const std::string& cwd, std::uint32_t workers, double time_limit_s) {
            return value_or_raise(on_client(self, [&](Client& c) { return c.submit(args, cwd, {.workers = workers, .time_limit_s = time_limit_s}); }));
          },
          py::arg("args"), py::arg("cwd"), py::kw_only(), py::arg("workers") = 0, py::arg("time_limit_s") = 0.0,
          "Queues a job: the words of a one-shot command ([\"run\", \"g.dot\", \"--input\", \"X=x.npy\", ...], "
          "[\"spits\", \"job.so\", ...]) with paths relative to `cwd`; returns its id.")
      .def(
          "status", [](PyClient& self, std::uint64_t id) { return job_dict(value_or_raise(on_client(self, [&](Client& c) { return c.status(id); }))); },
          py::arg("id"))
      .def(
          "wait",
          [](PyClient& self, std::uint64_t id, double timeout_s) {
            return job_dict(value_or_raise(on_client(self, [&](Client& c) { return c.wait(id, timeout_s); })));
          },
          py::arg("id"), py::arg("timeout_s") = 600.0, "Returns the job once it has finished; redflow.Error after timeout_s.")
      .def(
          "cancel", [](PyClient& self, std::uint64_t id) { return job_dict(value_or_raise(on_client(self, [&](Client& c) { return c.cancel(id); }))); },
          py::arg("id"))
      .def(
          "fetch",
          [](PyClient& self, std::uint64_t id) {
            std::vector<JobFile> files = value_or_raise(on_client(self, [&](Client& c) { return c.fetch(id); }));
            py::dict out;
            for (const JobFile& f : files)
              out[py::str(f.name)] = py::bytes(reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size());
            return out;
          },
          py::arg("id"), "A finished job's files, {path as its words gave it: bytes}, and its report as \"report.json\".")
      .def("jobs", [](PyClient& self) {
        py::list out;
        for (const JobInfo& j : value_or_raise(on_client(self, [&](Client& c) { return c.list(); }))) out.append(job_dict(j));
        return out;
      });
}

}  // namespace redflow::python
