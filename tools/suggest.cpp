// The command line's own errors, phrased to teach: a misspelt flag or
// subcommand gets the nearest known one, a file that cannot be read gets the
// operating system's reason. CLI11's defaults ("The following arguments were
// not expected", "A subcommand is required", "File does not exist") say
// neither.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cli_common.hpp"
#include "graph/suggest.hpp"

namespace redflow::cli {

namespace {

// "--name" for every long option of `app`, with the subcommand's path for the --help hint.
void long_flags(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& name : opt->get_lnames()) out.push_back("--" + name);
}

// The first argument that looks like a flag and that no option of `app` or
// of `sub` knows.
std::string unknown_flag(const std::vector<std::string>& known, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), arg) == known.end()) return arg;
  }
  return "";
}

}  // namespace

CLI::Validator readable_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return fmt::format("cannot open '{}': {}", path, std::strerror(errno));
        struct stat st {};
        const bool dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
        ::close(fd);
        return dir ? fmt::format("'{}' is a directory, not a file", path) : std::string();
      },
      "FILE");
}

int report_parse_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  // Success "errors" (--help, --version) print as CLI11 prints them.
  if (e.get_exit_code() == 0) return const_cast<CLI::App&>(app).exit(e);
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands({})) {
    if (s->parsed()) sub = s;
  }
  if (sub == nullptr) {
    // No subcommand was recognised: the first word that is not a flag was meant to be one.
    std::vector<std::string> names;
    for (const CLI::App* s : app.get_subcommands({})) names.push_back(s->get_name());
    for (int i = 1; i < argc; ++i) {
      std::string word = argv[i];
      if (word.starts_with("-")) {
        if (word == "--log-level" && i + 1 < argc) ++i;  // the global option's value
        continue;
      }
      std::string best = nearest_name(word, names);
      fmt::print(stderr, "redflow: error: unknown command '{}'{}; the commands are {}\n", word,
                 best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best), fmt::join(names, ", "));
      return kUsageError;
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::vector<std::string> known;
    long_flags(app, known);
    if (sub != nullptr) long_flags(*sub, known);
    const std::string flag = unknown_flag(known, argc, argv);
    if (!flag.empty()) {
      std::string best = nearest_name(flag, known);
      const std::string help = sub != nullptr ? "redflow " + sub->get_name() + " --help" : "redflow --help";
      fmt::print(stderr, "redflow: error: unknown option '{}'{}; '{}' lists every option\n", flag,
                 best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best), help);
      return kUsageError;
    }
  }
  fmt::print(stderr, "redflow: error: {}\n", e.what());
  if (sub != nullptr) fmt::print(stderr, "Run 'redflow {} --help' for its options.\n", sub->get_name());
  return kUsageError;
}

}  // namespace redflow::cli
