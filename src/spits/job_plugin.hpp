// JobPlugin: a SPITS job loaded from its .so, with C++ calls around its C
// function table. Each call turns an error code or an escaping exception into
// a Status naming the job and the function, so nothing a plugin does crosses
// into the runtime as an exception.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "redflow/spits.hpp"

namespace redflow::spits {

// The bytes a job function wrote and the error it gave, behind redflow_spits_out.
class OutBuffer {
 public:
  OutBuffer();
  redflow_spits_out* out() { return &out_; }
  std::string& bytes() { return bytes_; }
  const std::string& error() const { return error_; }
  void clear() {
    bytes_.clear();
    error_.clear();
  }

 private:
  static void write(redflow_spits_out* out, const void* data, std::size_t size);
  static void set_error(redflow_spits_out* out, const char* message);
  redflow_spits_out out_;
  std::string bytes_, error_;
};

class JobPlugin {
 public:
  // dlopen()s the plugin and checks its entry point and ABI version.
  static Result<std::unique_ptr<JobPlugin>> load(const std::string& path);
  ~JobPlugin();
  JobPlugin(const JobPlugin&) = delete;
  JobPlugin& operator=(const JobPlugin&) = delete;

  const std::string& name() const { return name_; }
  bool has_main() const { return table_->main != nullptr; }
  bool has_was_committed() const { return table_->was_committed != nullptr; }

  Status setup(const std::vector<std::string>& args);
  // True with the task in `task`, false when the phase has no more tasks.
  Result<bool> generate(std::string& task);
  // Thread-safe (the job's promise). The result goes to `out`.
  Status execute(std::string_view task, OutBuffer& out) const;
  Status commit(std::string_view task, std::string_view result);
  Status main(const redflow_spits_runner* runner);
  bool was_committed(std::string_view task);
  Status teardown(bool completed);

 private:
  JobPlugin() = default;
  Status failed(const char* function, const std::string& why) const;
  void* handle_ = nullptr;
  const redflow_spits_job* table_ = nullptr;
  void* job_ = nullptr;
  bool set_up_ = false;
  std::string name_;
  OutBuffer gen_, commit_;
};

}  // namespace redflow::spits
