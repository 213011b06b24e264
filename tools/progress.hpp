// A progress bar on stderr for long runs (`run --repeat`, campaigns,
// benchmarks). It draws only when its stream is a terminal and there is more
// than one step, so pipes, files and CI logs stay clean, and it redraws at
// most ten times a second:
//
//   redflow::cli::Progress bar("run", repeat);   // "run [=====>    ] 41/100  0.8 s  ETA 1.1 s"
//   for (...) { ...; bar.advance(); }
//   bar.finish();                                 // or let the destructor do it
//
// advance() and note() may be called from several threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace redflow::cli {

class Progress {
 public:
  // `what` names the work ("run", "bench fft"); `total` is the number of steps.
  Progress(std::string what, std::uint64_t total, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::uint64_t steps = 1);
  // Text shown after the counts, e.g. "3 faults detected".
  void note(std::string text);
  // Draws the final state and ends the line (only when active).
  void finish();
  // Whether this bar draws at all (its stream is a terminal, total > 1).
  bool active() const { return active_; }

  // True if `out` is a terminal.
  static bool is_terminal(std::FILE* out);

 private:
  void draw(bool final);  // with mutex_ held

  std::string what_;
  std::uint64_t total_;
  std::FILE* out_;
  bool active_;
  bool finished_ = false;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::string note_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace redflow::cli
