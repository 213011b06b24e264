// The table of actor functions, and loading more of them from plugins.
#include "redflow/registry.hpp"

#include <dlfcn.h>

#include <charconv>

namespace redflow {

Registry& Registry::add(std::string name, ActorFunction function) {
  ActorSpec spec;
  spec.function = std::move(function);
  return add(std::move(name), std::move(spec));
}

Registry& Registry::add(std::string name, ActorSpec spec) {
  auto [it, inserted] = specs_.try_emplace(std::move(name));
  if (inserted) {
    it->second = std::move(spec);
  } else if (status_.ok()) {
    status_ = Status::InvalidArgument("actor function '" + it->first + "' is registered twice (a registry keeps the first; give the second another name)");
  }
  return *this;
}

const ActorSpec* Registry::find(std::string_view name) const {
  auto it = specs_.find(name);
  return it == specs_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, spec] : specs_) out.push_back(name);
  return out;
}

Status Registry::load_plugin(const std::string& path) {
  // RTLD_NODELETE keeps the code mapped after dlclose-less exit paths, so
  // functions registered from it stay valid as long as the Registry does.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* err = dlerror();
    return Status::IOError("cannot load actor plugin '" + path + "': " + (err ? err : "unknown error"));
  }
  using Entry = int (*)(Registry*);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "redflow_register_actors"));
  if (entry == nullptr) {
    return Status::NotFound("actor plugin '" + path +
                            "' has no entry point 'redflow_register_actors' (define it with REDFLOW_PLUGIN)");
  }
  const bool was_ok = status_.ok();
  const int rc = entry(this);
  if (was_ok && !status_.ok()) return Status::InvalidArgument("actor plugin '" + path + "': " + status_.message());
  if (rc != 0) {
    return Status::Internal("actor plugin '" + path + "' failed to register its actors (returned " +
                            std::to_string(rc) + ")");
  }
  return Status::Ok();
}

std::optional<std::string_view> ActorContext::find_arg(std::string_view args, std::string_view key) {
  while (!args.empty()) {
    std::size_t comma = args.find(',');
    std::string_view item = args.substr(0, comma);
    std::size_t eq = item.find('=');
    std::string_view k = item.substr(0, eq);
    while (!k.empty() && k.front() == ' ') k.remove_prefix(1);
    while (!k.empty() && k.back() == ' ') k.remove_suffix(1);
    if (k == key) return eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (comma == std::string_view::npos) break;
    args.remove_prefix(comma + 1);
  }
  return std::nullopt;
}

std::optional<std::uint64_t> ActorContext::find_arg_u64(std::string_view args, std::string_view key) {
  auto v = find_arg(args, key);
  if (!v) return std::nullopt;
  std::uint64_t out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) return std::nullopt;
  return out;
}

}  // namespace redflow
