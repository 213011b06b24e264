// The progress bar of long runs; see progress.hpp.
#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace redflow::cli {

namespace {

std::string seconds_text(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  const auto m = static_cast<long>(s / 60);
  return fmt::format("{}m{:02d}s", m, static_cast<int>(s - 60.0 * static_cast<double>(m)));
}

int columns(std::FILE* out) {
  winsize ws{};
  if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

bool Progress::is_terminal(std::FILE* out) { return out != nullptr && isatty(fileno(out)) == 1; }

Progress::Progress(std::string what, std::uint64_t total, std::FILE* out)
    : what_(std::move(what)), total_(total), out_(out), active_(total > 1 && is_terminal(out)),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {
  if (active_) {
    std::lock_guard<std::mutex> lock(mutex_);
    draw(false);
  }
}

Progress::~Progress() { finish(); }

void Progress::advance(std::uint64_t steps) {
  done_.fetch_add(steps, std::memory_order_relaxed);
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_ || now - last_draw_ < std::chrono::milliseconds(100)) return;
  draw(false);
}

void Progress::note(std::string text) {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  note_ = std::move(text);
}

void Progress::finish() {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  draw(true);
  finished_ = true;
  std::fputc('\n', out_);
  std::fflush(out_);
}

void Progress::draw(bool final) {
  last_draw_ = std::chrono::steady_clock::now();
  const std::uint64_t done = std::min(done_.load(std::memory_order_relaxed), total_);
  const double elapsed = std::chrono::duration<double>(last_draw_ - start_).count();
  std::string tail = fmt::format(" {}/{}  {}", done, total_, seconds_text(elapsed));
  if (!final && done > 0 && done < total_)
    tail += "  ETA " + seconds_text(elapsed / static_cast<double>(done) * static_cast<double>(total_ - done));
  if (!note_.empty()) tail += "  " + note_;
  const int cols = columns(out_);
  const int room = cols - static_cast<int>(what_.size() + tail.size()) - 4;
  std::string bar;
  if (room >= 10) {
    const int width = std::min(room, 40);
    const int filled = total_ == 0 ? width : static_cast<int>(static_cast<double>(width) * static_cast<double>(done) / static_cast<double>(total_));
    bar = " [" + std::string(static_cast<std::size_t>(filled), '=') + (filled < width ? ">" : "") +
          std::string(static_cast<std::size_t>(std::max(0, width - filled - 1)), ' ') + "]";
  }
  // \r: back to the start of the line; \033[K: erase what an older, longer line left.
  std::string line = what_ + bar + tail;
  if (static_cast<int>(line.size()) >= cols) line.resize(static_cast<std::size_t>(std::max(0, cols - 1)));
  fmt::print(out_, "\r{}\033[K", line);
  std::fflush(out_);
}

}  // namespace redflow::cli
