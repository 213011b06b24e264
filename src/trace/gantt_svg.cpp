// Gantt charts in SVG: rows for the driver and the compute tiles, time left to
// right, one box per actor coloured by its function. Both a HEFT schedule
// (what was planned) and an ExecutionTrace (what happened) are first turned
// into the same model, then drawn by one function.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "redflow/redundancy.hpp"
#include "redflow/visualize.hpp"
#include "trace/lanes.hpp"

namespace redflow {

namespace {

struct Box {
  int row = 0;  // 0 = driver, t + 1 = tile t
  double start = 0, end = 0;
  std::string label;     // drawn inside the box when it fits
  std::string key;       // colour: the actor's function
  std::string tooltip;
  bool replica = false;  // hatched
  bool reexecution = false, stolen = false, faulty = false;
};

struct Strip {  // a transfer into a row's memory
  int row = 0;
  double start = 0, end = 0;
  std::string tooltip;
};

struct Mark {
  int row = 0;
  double time = 0;
  std::string what, detail;
};

struct Model {
  std::string title, subtitle;
  unsigned tiles = 0;
  double makespan = 0;
  std::string makespan_label;  // "makespan" or "estimated makespan"
  std::vector<Box> boxes;
  std::vector<Strip> strips;
  std::vector<Mark> marks;
  std::vector<bool> quarantined;  // by row: a tile taken out of service (labelled so)
  std::vector<std::string> hosts;  // by row: "WORKER on HOST" of a tile in a worker process (labelled so)
};

// A successful vote is news, not trouble: it is drawn green, failures red.
bool good_mark(const Mark& k) { return k.what == "vote"; }

// ---- formatting -----------------------------------------------------------

std::string xml(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

struct Unit {
  double scale;
  const char* name;
};
Unit unit_for(double seconds) {
  if (seconds >= 1) return {1, "s"};
  if (seconds >= 1e-3) return {1e3, "ms"};
  if (seconds >= 1e-6) return {1e6, "µs"};
  return {1e9, "ns"};
}

std::string duration(double seconds) {
  const Unit u = unit_for(std::abs(seconds));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s", seconds * u.scale, u.name);
  return buf;
}

std::string bytes_text(std::size_t b) {
  char buf[48];
  if (b >= (std::size_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.3g MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.3g KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

std::string count(std::size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

std::string row_name(int row) { return row == 0 ? "driver" : "tile " + std::to_string(row - 1); }

// ---- colours --------------------------------------------------------------

// Tableau-like qualitative colours, without red (red marks faults).
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#76b7b2", "#edc948", "#b07aa1",
                                    "#ff9da7", "#9c755f", "#a0cbe8", "#8cd17d", "#ffbe7d", "#d4a6c8",
                                    "#86bcb6", "#f1ce63", "#79706e", "#b6992d"};

std::map<std::string, std::string> colours(const std::vector<Box>& boxes) {
  const std::map<std::string, std::string> fixed = {
      {"rf.split", "#c7c7c7"}, {"rf.collect", "#aeb6bf"}, {"rf.reorder", "#d9cbb3"}, {"rf.compare", "#2f4b7c"}};
  std::set<std::string> keys;
  for (const auto& b : boxes) keys.insert(b.key);
  std::map<std::string, std::string> out;
  std::size_t next = 0;
  for (const auto& k : keys) {
    if (auto f = fixed.find(k); f != fixed.end()) out[k] = f->second;
    else out[k] = kPalette[next++ % std::size(kPalette)];
  }
  return out;
}

bool dark(const std::string& hex) {
  auto channel = [&](int i) { return std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16) / 255.0; };
  return 0.299 * channel(0) + 0.587 * channel(1) + 0.114 * channel(2) < 0.5;
}

// ---- drawing ----------------------------------------------------------------

constexpr double kCharW = 6.3;  // average advance of an 11 px sans-serif glyph

// `text` shortened with an ellipsis to fit `width` pixels, or "" if too little fits.
std::string fit(const std::string& text, double width) {
  // Count code points, not bytes (labels may hold µ, ↻ or UTF-8 names).
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  const auto room = static_cast<std::size_t>(std::max(0.0, width / kCharW));
  if (starts.size() <= room) return text;
  if (room < 3) return "";
  return text.substr(0, starts[room - 1]) + "…";
}

double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * p * 1.0000001) return m * p;
  return 10 * p;
}

std::string render(const Model& m, const GanttOptions& options) {
  const double W = std::max(480, options.width);
  // Room for the longest row label ("tile 3 (node7 on host.example)"), about 7 px a character.
  std::size_t longest = 10;
  for (std::size_t r = 0; r < m.hosts.size(); ++r)
    if (!m.hosts[r].empty()) longest = std::max(longest, row_name(static_cast<int>(r)).size() + m.hosts[r].size() + 3);
  const double left = std::max(92.0, 7.0 * static_cast<double>(longest) + 22), right = 28, top = 62;
  const double plot_w = W - left - right;
  const double lane_h = 24, lane_gap = 3, pad = 7;
  const bool strips = !m.strips.empty();
  const double strip_h = strips ? 6 : 0, strip_gap = strips ? 3 : 0;

  // Rows: the driver, then every tile; overlapping boxes in a row get lanes.
  int rows = static_cast<int>(m.tiles) + 1;
  for (const auto& b : m.boxes) rows = std::max(rows, b.row + 1);
  for (const auto& s : m.strips) rows = std::max(rows, s.row + 1);
  std::vector<trace::LanePacker> packers(static_cast<std::size_t>(rows));
  std::vector<std::size_t> lane(m.boxes.size());
  for (std::size_t i : trace::by_start(m.boxes.size(), [&](std::size_t i) { return m.boxes[i].start; }))
    lane[i] = packers[static_cast<std::size_t>(m.boxes[i].row)].place(m.boxes[i].start, m.boxes[i].end);
  std::vector<double> row_y(static_cast<std::size_t>(rows) + 1);
  row_y[0] = top;
  for (int r = 0; r < rows; ++r) {
    const double lanes = static_cast<double>(std::max<std::size_t>(1, packers[static_cast<std::size_t>(r)].lanes()));
    row_y[static_cast<std::size_t>(r) + 1] = row_y[static_cast<std::size_t>(r)] + 2 * pad + lanes * lane_h + (lanes - 1) * lane_gap + strip_gap + strip_h;
  }
  const double plot_bottom = row_y.back();

  // Time axis: a nice step, about one tick per 90 px, the domain a whole number of steps.
  double end = m.makespan;
  for (const auto& b : m.boxes) end = std::max(end, b.end);
  for (const auto& s : m.strips) end = std::max(end, s.end);
  for (const auto& k : m.marks) end = std::max(end, k.time);
  if (!(end > 0)) end = 1e-6;
  const double step = nice_step(end / std::max(2.0, std::floor(plot_w / 90)));
  const double domain = std::ceil(end / step - 1e-9) * step;
  const Unit unit = unit_for(domain);
  auto X = [&](double t) { return left + std::clamp(t / domain, 0.0, 1.0) * plot_w; };

  // Free space right of each box in its lane, for labels too long for the box.
  std::vector<double> room(m.boxes.size(), 0);
  {
    std::map<std::pair<int, std::size_t>, std::vector<std::size_t>> lanes;
    for (std::size_t i : trace::by_start(m.boxes.size(), [&](std::size_t i) { return m.boxes[i].start; }))
      lanes[{m.boxes[i].row, lane[i]}].push_back(i);
    for (const auto& [key, boxes] : lanes)
      for (std::size_t k = 0; k < boxes.size(); ++k) {
        const double right_edge = std::max(X(m.boxes[boxes[k]].start) + 1.5, X(m.boxes[boxes[k]].end));
        room[boxes[k]] = (k + 1 < boxes.size() ? X(m.boxes[boxes[k + 1]].start) : left + plot_w) - right_edge - 6;
      }
  }

  const auto colour = colours(m.boxes);
  bool any_replica = false, any_reexec = false, any_stolen = false, any_faulty = false;
  for (const auto& b : m.boxes) {
    any_replica |= b.replica;
    any_reexec |= b.reexecution;
    any_stolen |= b.stolen;
    any_faulty |= b.faulty;
  }

  // Legend layout (known before the height is).
  struct Item {
    std::string text, kind, fill;
  };
  std::vector<Item> items;
  for (const auto& [key, fill] : colour) items.push_back({key, "swatch", fill});
  if (any_replica) items.push_back({"replica", "replica", ""});
  if (any_reexec) items.push_back({"re-execution", "reexec", ""});
  if (any_stolen) items.push_back({"stolen", "stolen", ""});
  if (any_faulty) items.push_back({"fault injected", "faulty", ""});
  if (strips) items.push_back({"transfer into this memory", "strip", ""});
  const bool any_good_mark = std::any_of(m.marks.begin(), m.marks.end(), good_mark);
  const bool any_bad_mark = std::any_of(m.marks.begin(), m.marks.end(), [](const Mark& k) { return !good_mark(k); });
  if (any_good_mark) items.push_back({"vote (replicas agreed)", "good-mark", ""});
  if (any_bad_mark) items.push_back({"mark (vote failed, quarantine, ...)", "mark", ""});
  const double legend_y0 = plot_bottom + 62;
  std::vector<std::pair<double, double>> item_at;
  double lx = left, ly = legend_y0;
  for (const auto& it : items) {
    const double w = 20 + static_cast<double>(it.text.size()) * kCharW + 18;
    if (lx + w > W - right && lx > left) lx = left, ly += 20;
    item_at.emplace_back(lx, ly);
    lx += w;
  }
  const double H = (items.empty() ? plot_bottom + 40 : ly + 26);

  std::string s;
  auto out = [&](const std::string& text) { s += text; s += '\n'; };
  out("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
  out("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) + "\" viewBox=\"0 0 " + num(W) + " " +
      num(H) + "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"11\">");
  out("<title>" + xml(m.title) + "</title>");
  out("<defs>");
  out("  <pattern id=\"hatch\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" patternTransform=\"rotate(45)\">"
      "<rect width=\"2.2\" height=\"6\" fill=\"#000\" fill-opacity=\"0.25\"/></pattern>");
  out("</defs>");
  out("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>");
  out("<text x=\"16\" y=\"26\" font-size=\"16\" font-weight=\"bold\" fill=\"#222\">" + xml(m.title) + "</text>");
  out("<text x=\"16\" y=\"45\" font-size=\"12\" fill=\"#555\">" + xml(m.subtitle) + "</text>");

  // Row bands and labels.
  for (int r = 0; r < rows; ++r) {
    const double y = row_y[static_cast<std::size_t>(r)], h = row_y[static_cast<std::size_t>(r) + 1] - y;
    out("<g class=\"row\" data-row=\"" + row_name(r) + "\">");
    out("  <rect x=\"" + num(left) + "\" y=\"" + num(y) + "\" width=\"" + num(plot_w) + "\" height=\"" + num(h) + "\" fill=\"" +
        (r % 2 == 0 ? "#f4f5f7" : "#ffffff") + "\"/>");
    out("  <text x=\"" + num(left - 10) + "\" y=\"" + num(y + h / 2 + 4) + "\" text-anchor=\"end\" font-size=\"12\" fill=\"#333\"" +
        (r == 0 ? " font-style=\"italic\"" : "") + ">" + row_name(r) +
        (static_cast<std::size_t>(r) < m.hosts.size() && !m.hosts[static_cast<std::size_t>(r)].empty() ? " (" + xml(m.hosts[static_cast<std::size_t>(r)]) + ")" : "") +
        (static_cast<std::size_t>(r) < m.quarantined.size() && m.quarantined[static_cast<std::size_t>(r)] ? " (quarantined)" : "") + "</text>");
    out("</g>");
  }
  // Grid and axis.
  out("<g class=\"axis\" stroke=\"#d9d9d9\" stroke-width=\"1\">");
  for (double t = 0; t <= domain + step / 2; t += step)
    out("  <line x1=\"" + num(X(t)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(X(t)) + "\" y2=\"" + num(plot_bottom + 5) + "\"/>");
  out("  <line x1=\"" + num(left) + "\" y1=\"" + num(plot_bottom) + "\" x2=\"" + num(left + plot_w) + "\" y2=\"" + num(plot_bottom) +
      "\" stroke=\"#888\"/>");
  out("</g>");
  out("<g class=\"ticks\" fill=\"#444\" text-anchor=\"middle\">");
  for (double t = 0; t <= domain + step / 2; t += step)
    out("  <text x=\"" + num(X(t)) + "\" y=\"" + num(plot_bottom + 18) + "\">" + num(t * unit.scale) + "</text>");
  out("  <text x=\"" + num(left + plot_w / 2) + "\" y=\"" + num(plot_bottom + 34) + "\" fill=\"#555\">time (" + unit.name +
      ")</text>");
  out("</g>");

  // Transfers into each row's memory.
  if (strips) {
    out("<g class=\"transfers\" fill=\"#6b6b6b\">");
    for (const auto& st : m.strips) {
      const double y = row_y[static_cast<std::size_t>(st.row) + 1] - pad - strip_h;
      const double x = X(st.start), w = std::max(1.0, X(st.end) - x);
      out("  <rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(strip_h) + "\"><title>" +
          xml(st.tooltip) + "</title></rect>");
    }
    out("</g>");
  }

  // Actor boxes.
  out("<g class=\"actors\">");
  for (std::size_t i = 0; i < m.boxes.size(); ++i) {
    const Box& b = m.boxes[i];
    const double y = row_y[static_cast<std::size_t>(b.row)] + pad + static_cast<double>(lane[i]) * (lane_h + lane_gap);
    const double x = X(b.start), w = std::max(1.5, X(b.end) - x);
    const std::string fill = colour.at(b.key);
    std::string stroke = "stroke=\"#1f1f1f\" stroke-opacity=\"0.55\" stroke-width=\"0.8\"";
    if (b.replica) stroke = "stroke=\"#1f1f1f\" stroke-width=\"1.1\" stroke-dasharray=\"3,2\"";
    if (b.faulty || b.reexecution) stroke = "stroke=\"#d62728\" stroke-width=\"2\"";
    out("  <g class=\"actor\" data-row=\"" + row_name(b.row) + "\" data-key=\"" + xml(b.key) + "\"><title>" + xml(b.tooltip) + "</title>");
    out("    <rect class=\"box\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(lane_h) +
        "\" rx=\"2\" fill=\"" + fill + "\" " + stroke + "/>");
    if (b.replica)
      out("    <rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(lane_h) +
          "\" rx=\"2\" fill=\"url(#hatch)\"/>");
    if (b.stolen)
      out("    <polygon points=\"" + num(x) + "," + num(y) + " " + num(x + std::min(8.0, w)) + "," + num(y) + " " + num(x) + "," +
          num(y + std::min(8.0, lane_h)) + "\" fill=\"#1a1a1a\"/>");
    if (b.faulty)
      out("    <polygon points=\"" + num(x + w) + "," + num(y) + " " + num(x + w - std::min(9.0, w)) + "," + num(y) + " " + num(x + w) +
          "," + num(y + 9) + "\" fill=\"#d62728\"/>");
    // The label: inside the box if it fits; else beside it, smaller, if the lane
    // is free to its right; else shortened inside the box.
    const std::string inside = fit(b.label, w - 8);
    const std::string beside = fit(b.label, room[i] * 11 / 10);
    const double text_y = y + lane_h / 2 + 4;
    if (inside != b.label && beside == b.label) {
      out("    <text x=\"" + num(x + w + 3) + "\" y=\"" + num(text_y) + "\" font-size=\"10\" fill=\"#444\">" + xml(beside) + "</text>");
    } else if (!inside.empty()) {
      const std::string halo = b.replica ? " stroke=\"" + fill + "\" stroke-width=\"3\" paint-order=\"stroke\"" : "";
      out("    <text x=\"" + num(x + 4 + (b.stolen ? 3 : 0)) + "\" y=\"" + num(text_y) + "\" fill=\"" + (dark(fill) ? "#ffffff" : "#1a1a1a") +
          "\"" + halo + ">" + xml(inside) + "</text>");
    }
    out("  </g>");
  }
  out("</g>");

  // Marks.
  if (!m.marks.empty()) {
    out("<g class=\"marks\">");
    for (const auto& k : m.marks) {
      const double y0 = row_y[static_cast<std::size_t>(std::clamp(k.row, 0, rows - 1))];
      const double y1 = row_y[static_cast<std::size_t>(std::clamp(k.row, 0, rows - 1)) + 1];
      out("  <g class=\"mark\"><title>" + xml(k.what + ": " + k.detail + " at " + duration(k.time)) + "</title>");
      const std::string colour = good_mark(k) ? "#2ca02c" : "#d62728";
      out("    <line x1=\"" + num(X(k.time)) + "\" y1=\"" + num(y0 + 1) + "\" x2=\"" + num(X(k.time)) + "\" y2=\"" + num(y1 - 1) +
          "\" stroke=\"" + colour + "\" stroke-width=\"1.5\"/>");
      out("    <circle cx=\"" + num(X(k.time)) + "\" cy=\"" + num(y0 + 4) + "\" r=\"3\" fill=\"" + colour + "\"/>");
      out("  </g>");
    }
    out("</g>");
  }

  // The makespan.
  if (m.makespan > 0) {
    const double x = X(m.makespan);
    out("<g class=\"makespan\">");
    out("  <line x1=\"" + num(x) + "\" y1=\"" + num(top - 4) + "\" x2=\"" + num(x) + "\" y2=\"" + num(plot_bottom) +
        "\" stroke=\"#222\" stroke-width=\"1\" stroke-dasharray=\"4,3\"/>");
    const bool near_right = x > left + plot_w * 0.7;
    out("  <text x=\"" + num(near_right ? x - 4 : x + 4) + "\" y=\"" + num(top - 6) + "\" font-size=\"10\" fill=\"#222\"" +
        (near_right ? " text-anchor=\"end\"" : "") + ">" + xml(m.makespan_label + " " + duration(m.makespan)) + "</text>");
    out("</g>");
  }

  // Legend.
  if (!items.empty()) {
    out("<g class=\"legend\">");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const auto& it = items[i];
      const auto [x, y] = item_at[i];
      const std::string sq = "x=\"" + num(x) + "\" y=\"" + num(y - 11) + "\" width=\"14\" height=\"14\" rx=\"2\"";
      if (it.kind == "swatch") {
        out("  <rect class=\"swatch\" " + sq + " fill=\"" + it.fill + "\" stroke=\"#1f1f1f\" stroke-opacity=\"0.55\" stroke-width=\"0.8\"/>");
      } else if (it.kind == "replica") {
        out("  <rect " + sq + " fill=\"#ffffff\" stroke=\"#1f1f1f\" stroke-width=\"1.1\" stroke-dasharray=\"3,2\"/>");
        out("  <rect " + sq + " fill=\"url(#hatch)\"/>");
      } else if (it.kind == "reexec" || it.kind == "faulty") {
        out("  <rect " + sq + " fill=\"#ffffff\" stroke=\"#d62728\" stroke-width=\"2\"/>");
        if (it.kind == "faulty")
          out("  <polygon points=\"" + num(x + 14) + "," + num(y - 11) + " " + num(x + 5) + "," + num(y - 11) + " " + num(x + 14) + "," +
              num(y - 2) + "\" fill=\"#d62728\"/>");
      } else if (it.kind == "stolen") {
        out("  <rect " + sq + " fill=\"#ffffff\" stroke=\"#1f1f1f\" stroke-opacity=\"0.55\"/>");
        out("  <polygon points=\"" + num(x) + "," + num(y - 11) + " " + num(x + 8) + "," + num(y - 11) + " " + num(x) + "," + num(y - 3) +
            "\" fill=\"#1a1a1a\"/>");
      } else if (it.kind == "strip") {
        out("  <rect x=\"" + num(x) + "\" y=\"" + num(y - 6) + "\" width=\"14\" height=\"6\" fill=\"#6b6b6b\"/>");
      } else if (it.kind == "mark" || it.kind == "good-mark") {
        out("  <line x1=\"" + num(x + 7) + "\" y1=\"" + num(y - 12) + "\" x2=\"" + num(x + 7) + "\" y2=\"" + num(y + 3) +
            "\" stroke=\"" + (it.kind == "mark" ? "#d62728" : "#2ca02c") + "\" stroke-width=\"1.5\"/>");
      }
      out("  <text x=\"" + num(x + 20) + "\" y=\"" + num(y) + "\" fill=\"#333\">" + xml(it.text) + "</text>");
    }
    out("</g>");
  }
  out("</svg>");
  return s;
}

bool replica_name(const std::string& name) {
  return name.size() > 3 && name[name.size() - 3] == '.' && name[name.size() - 2] == 'r' && name.back() >= '1' && name.back() <= '9';
}

int row_of(int tile) { return tile < 0 ? 0 : tile + 1; }

}  // namespace

std::string to_gantt_svg(const ExecutionTrace& trace, const Graph* graph, const GanttOptions& options) {
  Model m;
  m.tiles = trace.tiles;
  m.makespan = trace.makespan_s;
  m.makespan_label = "makespan";
  std::size_t steals = 0, reexecutions = 0, faults = 0;
  for (const auto& a : trace.actors) {
    Box b;
    b.row = row_of(a.tile);
    b.start = a.start_s;
    b.end = std::max(a.start_s, a.end_s);
    std::string function;
    if (graph != nullptr && a.actor < graph->actors().size() && graph->actor(a.actor).name == a.name)
      function = graph->actor(a.actor).function;
    b.key = function.empty() ? (a.original.empty() ? a.name : a.original) : function;
    b.replica = a.replica > 0 || replica_name(a.name);
    b.reexecution = a.attempt > 0;
    b.stolen = a.stolen;
    b.faulty = a.faulty;
    steals += a.stolen;
    reexecutions += a.attempt > 0;
    faults += a.faulty;
    // A *-same replica keeps the actor's name: show which run it is.
    b.label = (b.reexecution ? "↻ " : "") + a.name + (a.replica > 0 && !replica_name(a.name) ? " #" + std::to_string(a.replica) : "");
    b.tooltip = a.name + (function.empty() ? "" : " (" + function + ")") + " on " + row_name(b.row) + ": " + duration(a.start_s) +
                " → " + duration(a.end_s) + " (" + duration(a.end_s - a.start_s) + ")";
    if (a.replica > 0) b.tooltip += ", replica " + std::to_string(a.replica);
    if (a.attempt > 0) b.tooltip += ", re-execution " + std::to_string(a.attempt);
    if (a.stolen) b.tooltip += ", stolen";
    if (a.faulty) b.tooltip += ", fault injected";
    m.boxes.push_back(std::move(b));
  }
  for (const auto& t : trace.transfers) {
    Strip st;
    st.row = row_of(t.to_tile);
    st.start = t.start_s;
    st.end = std::max(t.start_s, t.end_s);
    st.tooltip = t.data + ": " + (t.from_tile < 0 ? std::string("main memory") : "tile " + std::to_string(t.from_tile)) + " → " +
                 (t.to_tile < 0 ? std::string("main memory") : "tile " + std::to_string(t.to_tile)) + ", " + bytes_text(t.bytes) + ", " +
                 duration(t.end_s - t.start_s);
    m.strips.push_back(std::move(st));
  }
  for (const auto& k : trace.marks) m.marks.push_back({row_of(k.tile), k.time_s, k.what, k.detail});
  m.quarantined.assign(trace.tiles + 1, false);
  m.hosts.assign(trace.tiles + 1, std::string());
  for (std::size_t t = 0; t < trace.tile_hosts.size() && t + 1 < m.hosts.size(); ++t) m.hosts[t + 1] = trace.tile_hosts[t];
  for (const auto& k : trace.marks)
    if (k.what == "quarantine" && row_of(k.tile) < static_cast<int>(m.quarantined.size())) m.quarantined[static_cast<std::size_t>(row_of(k.tile))] = true;

  const std::string name = graph != nullptr ? graph->name() : std::string();
  m.title = !options.title.empty() ? options.title : (name.empty() ? std::string("Execution") : "Execution of '" + name + "'");
  if (!trace.failure.empty()) m.title = "FAILED: " + m.title + ": " + trace.failure;
  m.subtitle = (trace.scheduler.empty() ? std::string() : "scheduler " + trace.scheduler + " · ") +
               (trace.redundancy.empty() ? std::string() : "redundancy " + trace.redundancy + " · ") + count(trace.tiles, "tile") + " × " +
               count(trace.cores_per_tile, "core") + " + driver · " + count(trace.actors.size(), "actor execution") + ", " +
               count(trace.transfers.size(), "transfer");
  if (steals) m.subtitle += ", " + std::to_string(steals) + " stolen";
  if (reexecutions) m.subtitle += ", " + std::to_string(reexecutions) + " re-executed";
  if (faults) m.subtitle += ", " + count(faults, "fault") + " injected";
  return render(m, options);
}

std::string to_gantt_svg(const Schedule& schedule, const Graph& graph, unsigned tiles, const GanttOptions& options) {
  Model m;
  m.tiles = tiles > 0 ? tiles : static_cast<unsigned>(schedule.tile_order.size());
  m.makespan = schedule.makespan;
  m.makespan_label = "estimated makespan";
  for (ActorId id = 0; id < schedule.actors.size() && id < graph.actors().size(); ++id) {
    const ScheduledActor& sa = schedule.actors[id];
    const ActorNode& a = graph.actor(id);
    Box b;
    b.row = row_of(sa.tile);
    b.start = sa.start;
    b.end = std::max(sa.start, sa.finish);
    b.key = a.function;
    const unsigned runs = a.redundancy ? replica_count(*a.redundancy) : 1;
    b.replica = replica_name(a.name) || runs > 1;
    b.label = a.name + (runs > 1 ? " ×" + std::to_string(runs) : "");
    b.tooltip = a.name + " (" + a.function + ") on " + row_name(b.row) + ": " + duration(sa.start) + " → " + duration(sa.finish) +
                " (estimated " + duration(sa.finish - sa.start) + ")";
    if (runs > 1) b.tooltip += std::string(", runs ") + to_string(*a.redundancy);
    m.boxes.push_back(std::move(b));
  }
  m.title = !options.title.empty() ? options.title : "HEFT schedule of '" + graph.name() + "'";
  m.subtitle = count(m.tiles, "tile") + " + driver · " + count(m.boxes.size(), "actor") + " · times estimated from work hints and data sizes (docs/scheduling.md)";
  return render(m, options);
}

}  // namespace redflow
