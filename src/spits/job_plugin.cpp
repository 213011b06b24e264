// Loading a SPITS job plugin and calling it safely (see job_plugin.hpp).
#include "spits/job_plugin.hpp"

#include <dlfcn.h>

#include <exception>

namespace redflow::spits {

OutBuffer::OutBuffer() : out_{this, &OutBuffer::write, &OutBuffer::set_error} {}

void OutBuffer::write(redflow_spits_out* out, const void* data, std::size_t size) {
  auto* self = static_cast<OutBuffer*>(out->runtime);
  if (size) self->bytes_.append(static_cast<const char*>(data), size);
}

void OutBuffer::set_error(redflow_spits_out* out, const char* message) {
  static_cast<OutBuffer*>(out->runtime)->error_ = message ? message : "";
}

namespace {

// Runs a plugin call, turning an escaping exception into its message.
template <typename F>
bool guarded(F&& f, std::string& why) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    why = std::string("threw: ") + e.what();
  } catch (...) {
    why = "threw a non-standard exception";
  }
  return false;
}

std::string because(const std::string& error) { return error.empty() ? "" : ": " + error; }

}  // namespace

Result<std::unique_ptr<JobPlugin>> JobPlugin::load(const std::string& path) {
  // A bare name would make dlopen search the library path; a job is a file.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return Status::NotFound("cannot load SPITS job '" + path + "': " + (why ? why : "dlopen failed"));
  }
  auto entry = reinterpret_cast<redflow_spits_entry_point>(dlsym(handle, REDFLOW_SPITS_ENTRY_POINT));
  if (!entry) {
    bool newer = dlsym(handle, "redflow_spits_job_v2") != nullptr;
    dlclose(handle);
    return Status::InvalidArgument("SPITS job '" + path + "' has no entry point " REDFLOW_SPITS_ENTRY_POINT "()" +
                                   (newer ? " (it exports redflow_spits_job_v2: built for a newer redflow)"
                                          : " (see include/redflow/spits.hpp)"));
  }
  std::unique_ptr<JobPlugin> p(new JobPlugin());
  p->handle_ = handle;
  p->table_ = entry();
  if (!p->table_) return Status::InvalidArgument("SPITS job '" + path + "': " REDFLOW_SPITS_ENTRY_POINT "() returned NULL");
  if (p->table_->abi_version != REDFLOW_SPITS_ABI_VERSION)
    return Status::InvalidArgument("SPITS job '" + path + "' has ABI version " + std::to_string(p->table_->abi_version) +
                                   "; this redflow runs version " + std::to_string(REDFLOW_SPITS_ABI_VERSION) + " jobs");
  const char* missing = !p->table_->setup           ? "setup"
                        : !p->table_->generate_task ? "generate_task"
                        : !p->table_->execute_task  ? "execute_task"
                        : !p->table_->commit_task   ? "commit_task"
                        : !p->table_->teardown      ? "teardown"
                                                    : nullptr;
  if (missing) return Status::InvalidArgument("SPITS job '" + path + "' has no " + missing + " function (NULL in its table)");
  std::string base = path.substr(path.find_last_of('/') + 1);
  p->name_ = p->table_->name && *p->table_->name ? p->table_->name : base;
  return p;
}

JobPlugin::~JobPlugin() {
  if (set_up_) (void)teardown(false);
  // The plugin stays mapped: a job may have left thread-local destructors or
  // atexit handlers behind, and unmapping their code would crash at exit.
}

Status JobPlugin::failed(const char* function, const std::string& why) const {
  return Status::ActorFailed("SPITS job '" + name_ + "': " + function + " failed" + because(why));
}

Status JobPlugin::setup(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  OutBuffer out;
  std::string why;
  bool ok = guarded([&] { job_ = table_->setup(static_cast<int>(args.size()), argv.data(), out.out()); }, why);
  if (!ok) return failed("setup", why);
  if (!job_) return failed("setup", out.error());
  set_up_ = true;
  return Status::Ok();
}

Result<bool> JobPlugin::generate(std::string& task) {
  gen_.clear();
  int rc = REDFLOW_SPITS_ERROR;
  std::string why;
  if (!guarded([&] { rc = table_->generate_task(job_, gen_.out()); }, why)) return failed("generate_task", why);
  if (rc == REDFLOW_SPITS_DONE) return false;
  if (rc != REDFLOW_SPITS_TASK) return failed("generate_task", gen_.error().empty() ? "returned " + std::to_string(rc) : gen_.error());
  task.swap(gen_.bytes());
  return true;
}

Status JobPlugin::execute(std::string_view task, OutBuffer& out) const {
  out.clear();
  int rc = -1;
  std::string why;
  if (!guarded([&] { rc = table_->execute_task(job_, task.data(), task.size(), out.out()); }, why)) return failed("execute_task", why);
  if (rc != 0) return failed("execute_task", out.error().empty() ? "returned " + std::to_string(rc) : out.error());
  return Status::Ok();
}

Status JobPlugin::commit(std::string_view task, std::string_view result) {
  commit_.clear();
  int rc = -1;
  std::string why;
  bool ok = guarded([&] { rc = table_->commit_task(job_, task.data(), task.size(), result.data(), result.size(), commit_.out()); }, why);
  if (!ok) return failed("commit_task", why);
  if (rc != 0) return failed("commit_task", commit_.error().empty() ? "returned " + std::to_string(rc) : commit_.error());
  return Status::Ok();
}

Status JobPlugin::main(const redflow_spits_runner* runner) {
  OutBuffer out;
  int rc = -1;
  std::string why;
  if (!guarded([&] { rc = table_->main(job_, runner, out.out()); }, why)) return failed("main", why);
  if (rc != 0) return failed("main", out.error().empty() ? "returned " + std::to_string(rc) : out.error());
  return Status::Ok();
}

bool JobPlugin::was_committed(std::string_view task) {
  int rc = 0;
  std::string why;
  if (!guarded([&] { rc = table_->was_committed(job_, task.data(), task.size()); }, why)) return false;
  return rc == 1;
}

Status JobPlugin::teardown(bool completed) {
  set_up_ = false;
  OutBuffer out;
  int rc = -1;
  std::string why;
  if (!guarded([&] { rc = table_->teardown(job_, completed ? 1 : 0, out.out()); }, why)) return failed("teardown", why);
  if (rc != 0) return failed("teardown", out.error().empty() ? "returned " + std::to_string(rc) : out.error());
  return Status::Ok();
}

}  // namespace redflow::spits
