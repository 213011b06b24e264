// Checks on DOT text before cgraph parses it, and the exponent rewrite
// (dot_input.hpp says why each exists).
#include "graph/dot_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>

namespace redflow::dot {
namespace {

bool is_id_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '.' || c == '-' || u >= 0x80;
}

// Walks DOT text the way cgraph's lexer splits it (strings, HTML strings,
// comments, `#` lines), counting lines, and reports the first thing cgraph
// would mishandle. Only lengths and braces matter here; the grammar is left
// to cgraph.
class DotPrecheck {
 public:
  DotPrecheck(std::string_view text, std::string_view input_name) : text_(text), input_name_(input_name) {}

  Status run() {
    REDFLOW_RETURN_IF_ERROR(check_dot_size(text_.size(), input_name_));
    // agmemread() takes a C string: a NUL would silently end the input there.
    if (std::size_t nul = text_.find('\0'); nul != std::string_view::npos) {
      advance_to(nul);
      return fail("a NUL byte (DOT is text)");
    }
    std::size_t depth = 0;
    bool opened = false;  // the graph's '{' has been seen
    bool closed = false;  // ... and its matching '}'
    for (;;) {
      if (Status s = skip_blank(); !s.ok()) return s;
      if (at_ >= text_.size()) break;
      const char c = text_[at_];
      if (closed) {
        // cgraph reads one graph and ignores the rest, and the rest then
        // stays in its lexer for the next parse.
        return fail(fmt::format("text after the graph's closing '}}': '{}'", excerpt()));
      }
      if (c == '"') {
        if (Status s = quoted_chain(); !s.ok()) return s;
      } else if (c == '<') {
        if (Status s = html_string(); !s.ok()) return s;
      } else if (is_id_char(c)) {
        const std::size_t start = at_;
        while (at_ < text_.size() && is_id_char(text_[at_])) ++at_;
        if (at_ - start > kMaxDotTokenBytes) return too_long("an identifier", at_ - start, line_);
      } else {
        if (c == '{') {
          opened = true;
          if (++depth > kMaxDotNesting) {
            return fail(fmt::format("subgraphs nested more than {} deep (kMaxDotNesting)", kMaxDotNesting));
          }
        } else if (c == '}' && depth > 0) {
          closed = --depth == 0 && opened;
        }
        ++at_;
      }
    }
    return Status::Ok();
  }

 private:
  Status fail(const std::string& what) const { return fail_at(what, line_); }
  Status fail_at(const std::string& what, std::size_t line) const {
    return Status::InvalidGraph(fmt::format("cannot parse DOT: {}: {} in line {}", input_name_, what, line));
  }
  Status too_long(const char* what, std::size_t bytes, std::size_t line) const {
    return fail_at(fmt::format("{} of {} bytes, longer than the {} bytes one DOT token may have (kMaxDotTokenBytes)",
                               what, bytes, kMaxDotTokenBytes),
                   line);
  }

  // Moves to `to`, counting the lines passed.
  void advance_to(std::size_t to) {
    to = std::min(to, text_.size());
    line_ += static_cast<std::size_t>(std::count(text_.begin() + static_cast<std::ptrdiff_t>(at_),
                                                 text_.begin() + static_cast<std::ptrdiff_t>(to), '\n'));
    at_ = to;
  }

  // Skips white space and comments: /* */, // and # to the end of the line.
  Status skip_blank() {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        advance_to(at_ + 1);
      } else if (text_.substr(at_, 2) == "//" || c == '#') {  // cgraph reads '#' anywhere as a line comment
        advance_to(text_.find('\n', at_));
      } else if (text_.substr(at_, 2) == "/*") {
        const std::size_t end = text_.find("*/", at_ + 2);
        if (end == std::string_view::npos) return fail("an unterminated /* comment starting");
        advance_to(end + 2);
      } else {
        break;
      }
    }
    return Status::Ok();
  }

  // "..." [+ "..."]*: cgraph joins the pieces into one token, one copy per '+'.
  Status quoted_chain() {
    const std::size_t start = at_, start_line = line_;
    for (;;) {
      const std::size_t open_line = line_;
      std::size_t j = at_ + 1;
      while (j < text_.size() && text_[j] != '"') j += text_[j] == '\\' ? 2 : 1;
      if (j >= text_.size()) return fail_at("an unterminated quoted string starting", open_line);
      advance_to(j + 1);
      if (at_ - start > kMaxDotTokenBytes) return too_long("a quoted string", at_ - start, start_line);
      const std::size_t after = at_, after_line = line_;
      if (Status s = skip_blank(); !s.ok()) return s;
      if (at_ < text_.size() && text_[at_] == '+') {
        ++at_;
        if (Status s = skip_blank(); !s.ok()) return s;
        if (at_ < text_.size() && text_[at_] == '"') continue;
      }
      at_ = after;  // not a continuation: leave what follows to the main loop
      line_ = after_line;
      return Status::Ok();
    }
  }

  // <...> with nested <...>, as cgraph reads HTML-like labels.
  Status html_string() {
    const std::size_t start = at_, start_line = line_;
    std::size_t depth = 0, j = at_;
    for (; j < text_.size(); ++j) {
      depth += text_[j] == '<' ? 1 : 0;
      if (text_[j] == '>' && --depth == 0) break;
    }
    if (j >= text_.size()) return fail_at("an unterminated <...> string starting", start_line);
    advance_to(j + 1);
    if (at_ - start > kMaxDotTokenBytes) return too_long("an HTML string", at_ - start, start_line);
    return Status::Ok();
  }

  // Up to 20 printable characters at the cursor, for messages.
  std::string excerpt() const {
    std::string out;
    for (std::size_t i = at_; i < text_.size() && out.size() < 20 && text_[i] != '\n'; ++i) {
      const auto u = static_cast<unsigned char>(text_[i]);
      out += std::isprint(u) ? text_[i] : '?';
    }
    return out;
  }

  std::string_view text_;
  std::string_view input_name_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
};

// Length of an unquoted number with an exponent ("8e9", "1.5E-3") at the
// start of `s`, ending at a DOT delimiter; 0 if there is none.
std::size_t exponent_number_length(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  bool mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa = digits() || mantissa;
  }
  if (!mantissa || i >= s.size() || (s[i] != 'e' && s[i] != 'E')) return 0;
  ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (!digits()) return 0;
  if (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && std::strchr(",;]}", s[i]) == nullptr) return 0;
  return i;
}

}  // namespace

Status check_dot_size(std::uintmax_t bytes, std::string_view input_name) {
  if (bytes <= kMaxDotInputBytes) return Status::Ok();
  return Status::InvalidGraph(fmt::format("cannot parse DOT: {}: {} bytes, more than the {} bytes redflow reads "
                                          "(kMaxDotInputBytes)",
                                          input_name, bytes, kMaxDotInputBytes));
}

Status check_dot_input(std::string_view text, std::string_view input_name) {
  return DotPrecheck(text, input_name).run();
}

std::string quote_exponent_numbers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  auto copy_until = [&](std::string_view end) {
    std::size_t stop = text.find(end, i);
    stop = stop == std::string_view::npos ? text.size() : stop + end.size();
    out.append(text.substr(i, stop - i));
    i = stop;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {  // quoted string; \" does not end it
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (c == '<') {  // HTML string: nested <...>
      int depth = 0;
      std::size_t j = i;
      for (; j < text.size(); ++j) {
        depth += text[j] == '<' ? 1 : text[j] == '>' ? -1 : 0;
        if (depth == 0) break;
      }
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (text.substr(i, 2) == "//" || c == '#') {
      copy_until("\n");
    } else if (text.substr(i, 2) == "/*") {
      copy_until("*/");
    } else if (c == '=') {
      out += c;
      ++i;
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) out += text[i++];
      if (std::size_t n = exponent_number_length(text.substr(i)); n > 0) {
        out += '"';
        out.append(text.substr(i, n));
        out += '"';
        i += n;
      }
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

Status errno_error(const std::string& what, const std::string& path) {
  return Status::IOError(fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
}

}  // namespace redflow::dot
