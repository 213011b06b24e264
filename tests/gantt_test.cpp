// to_gantt_svg: Gantt charts of an execution trace and of a HEFT schedule. The
// tests read the SVG back as XML and check rows, boxes, colours and marks,
// and render it with rsvg-convert.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "redflow/redflow.hpp"
#include "svg_check.hpp"
#include "trace_fixture.hpp"

namespace redflow {
namespace {

using testing::parse_xml;
using testing::XmlDocument;
using testing::XmlElement;

// The <g class="actor"> around each box, in drawing order.
std::vector<const XmlElement*> actor_groups(const XmlDocument& d) { return d.find("g", "class", "actor"); }

const XmlElement* box_of(const XmlDocument& d, const XmlElement* group) {
  for (const auto& e : d.elements)
    if (e.name == "rect" && e.attr("class") == "box" && !e.ancestors.empty() && &d.elements[e.ancestors.back()] == group) return &e;
  return nullptr;
}

std::string tooltip_of(const XmlDocument& d, const XmlElement* group) {
  for (const auto& e : d.elements)
    if (e.name == "title" && !e.ancestors.empty() && &d.elements[e.ancestors.back()] == group) return e.text;
  return "";
}

double attr_num(const XmlElement* e, const char* key) { return std::stod(e->attr(key)); }

// Renders the SVG to PNG with rsvg-convert. scripts/bootstrap installs it
// (librsvg2-bin), so a missing rsvg-convert fails the test rather than
// quietly skipping the check.
::testing::AssertionResult renders(const std::string& svg, const std::string& stem) {
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0)
    return ::testing::AssertionFailure() << "rsvg-convert is not installed (scripts/bootstrap installs librsvg2-bin)";
  const auto dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / (stem + std::to_string(getpid()) + ".svg")).string();
  const std::string out = (dir / (stem + std::to_string(getpid()) + ".png")).string();
  std::ofstream(in) << svg;
  const int rc = std::system(("rsvg-convert " + in + " -o " + out + " 2>/dev/null").c_str());
  std::error_code ec;
  const std::uintmax_t png_bytes = std::filesystem::file_size(out, ec);
  std::filesystem::remove(in, ec);
  std::filesystem::remove(out, ec);
  if (rc != 0) return ::testing::AssertionFailure() << "rsvg-convert failed on " << stem << " (exit status " << rc << ")";
  if (png_bytes <= 1000) return ::testing::AssertionFailure() << "rsvg-convert wrote only " << png_bytes << " bytes for " << stem;
  return ::testing::AssertionSuccess();
}

TEST(GanttTrace, WellFormedWithARowPerTileAndTheDriverAndABoxPerExecution) {
  const ExecutionTrace t = testing::sample_trace();
  const std::string svg = to_gantt_svg(t);
  const XmlDocument d = parse_xml(svg);
  ASSERT_EQ(d.error, "") << svg;
  ASSERT_EQ(d.elements[0].name, "svg");
  EXPECT_EQ(d.elements[0].attr("xmlns"), "http://www.w3.org/2000/svg");
  std::vector<std::string> rows;
  for (const auto* r : d.find("g", "class", "row")) rows.push_back(r->attr("data-row"));
  EXPECT_EQ(rows, (std::vector<std::string>{"driver", "tile 0", "tile 1"}));
  const auto groups = actor_groups(d);
  ASSERT_EQ(groups.size(), t.actors.size());
  for (std::size_t i = 0; i < t.actors.size(); ++i) {
    const auto& a = t.actors[i];
    EXPECT_EQ(groups[i]->attr("data-row"), a.tile < 0 ? "driver" : "tile " + std::to_string(a.tile));
    ASSERT_NE(box_of(d, groups[i]), nullptr);
    EXPECT_NE(tooltip_of(d, groups[i]).find(a.name), std::string::npos);
  }
  EXPECT_TRUE(renders(svg, "gantt_trace"));
}

TEST(GanttTrace, BoxesSitInTheirRowAndScaleWithTime) {
  const ExecutionTrace t = testing::sample_trace();
  const XmlDocument d = parse_xml(to_gantt_svg(t));
  ASSERT_EQ(d.error, "");
  std::map<std::string, std::pair<double, double>> row_y;  // row -> [top, bottom)
  for (const auto* r : d.find("g", "class", "row"))
    for (const auto& e : d.elements)
      if (e.name == "rect" && !e.ancestors.empty() && &d.elements[e.ancestors.back()] == r)
        row_y[r->attr("data-row")] = {std::stod(e.attr("y")), std::stod(e.attr("y")) + std::stod(e.attr("height"))};
  const auto groups = actor_groups(d);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto* box = box_of(d, groups[i]);
    const auto [top, bottom] = row_y.at(groups[i]->attr("data-row"));
    EXPECT_GE(attr_num(box, "y"), top);
    EXPECT_LE(attr_num(box, "y") + attr_num(box, "height"), bottom);
  }
  // work.r1 runs 10..40 us, tail 72..95 us: x grows with time, width with duration.
  const auto* r1 = box_of(d, groups[1]);
  const auto* tail = box_of(d, groups[5]);
  EXPECT_LT(attr_num(r1, "x"), attr_num(tail, "x"));
  EXPECT_NEAR(attr_num(r1, "width") / attr_num(tail, "width"), 30.0 / 23.0, 0.05);
}

TEST(GanttTrace, ReplicasAreHatchedAndReexecutionsStealsAndFaultsMarked) {
  const ExecutionTrace t = testing::sample_trace();
  const XmlDocument d = parse_xml(to_gantt_svg(t));
  ASSERT_EQ(d.error, "");
  std::size_t hatched = 0, replicas = 0;
  for (const auto& a : t.actors) replicas += a.replica > 0;
  for (const auto* g : actor_groups(d))
    for (const auto& e : d.elements)
      if (!e.ancestors.empty() && &d.elements[e.ancestors.back()] == g && e.attr("fill") == "url(#hatch)") ++hatched;
  EXPECT_EQ(hatched, replicas);
  EXPECT_EQ(d.find("pattern", "id", "hatch").size(), 1u);
  // Re-executed and faulty boxes have a red outline; the legend explains every marker.
  std::size_t red = 0;
  for (const auto* g : actor_groups(d)) red += box_of(d, g)->attr("stroke") == "#d62728";
  EXPECT_EQ(red, 1u);  // work.r2's second attempt is both
  std::set<std::string> legend;
  for (const auto& e : d.elements)
    if (e.name == "text" && !e.ancestors.empty() && d.elements[e.ancestors.back()].attr("class") == "legend") legend.insert(e.text);
  for (const char* s : {"replica", "re-execution", "stolen", "fault injected", "transfer into this memory"})
    EXPECT_TRUE(legend.count(s)) << s;
  EXPECT_EQ(d.find("g", "class", "mark").size(), t.marks.size());
  EXPECT_EQ(d.find("g", "class", "transfers").size(), 1u);
}

TEST(GanttTrace, ColoursFollowTheFunctionWhenTheGraphIsKnown) {
  Graph g("colours");
  auto x = g.input("x", 4);
  auto a = g.inner("a", 4), b = g.inner("b", 4);
  auto y = g.output("y", 4);
  g.actor("s1", "i32.sort", {x}, a);
  g.actor("s2", "i32.sort", {a}, b);
  g.actor("add", "i32.add", {a, b}, y);
  ExecutionTrace t;
  t.tiles = 1;
  for (ActorId i = 0; i < 3; ++i)
    t.actors.push_back(TracedActor{.actor = i, .name = g.actor(i).name, .original = g.actor(i).name, .tile = 0,
                                   .start_s = i * 1e-3, .end_s = (i + 1) * 1e-3});
  const XmlDocument d = parse_xml(to_gantt_svg(t, &g));
  ASSERT_EQ(d.error, "");
  const auto groups = actor_groups(d);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(box_of(d, groups[0])->attr("fill"), box_of(d, groups[1])->attr("fill"));
  EXPECT_NE(box_of(d, groups[0])->attr("fill"), box_of(d, groups[2])->attr("fill"));
  EXPECT_EQ(groups[0]->attr("data-key"), "i32.sort");
  EXPECT_EQ(d.find("rect", "class", "swatch").size(), 2u);  // one legend entry per function
  // The axis is in milliseconds here.
  bool ms = false;
  for (const auto& e : d.elements) ms |= e.name == "text" && e.text == "time (ms)";
  EXPECT_TRUE(ms);
}

TEST(GanttTrace, AwkwardNamesStayWellFormed) {
  ExecutionTrace t = testing::sample_trace();
  t.actors[0].name = "<a&b> \"quoted\" 'x'";
  t.marks[0].detail = "</svg>";
  const std::string svg = to_gantt_svg(t, nullptr, {.title = "a < b & c"});
  const XmlDocument d = parse_xml(svg);
  EXPECT_EQ(d.error, "");
  EXPECT_TRUE(renders(svg, "gantt_names"));
  const std::string empty = to_gantt_svg(ExecutionTrace{});
  EXPECT_EQ(parse_xml(empty).error, "");
}

TEST(GanttSchedule, TheDemoScheduleHasABoxPerActorInItsScheduledRow) {
  auto g = Graph::from_dot_file(std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Runtime rt({.tiles = 2, .slots = 4, .slot_bytes = 4096});
  auto loaded = rt.load(*g, Registry::with_builtins());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Schedule& s = loaded->heft_schedule();
  const std::string svg = to_gantt_svg(s, loaded->graph(), 2);
  const XmlDocument d = parse_xml(svg);
  ASSERT_EQ(d.error, "") << svg;
  EXPECT_EQ(d.find("g", "class", "row").size(), 3u);
  const auto groups = actor_groups(d);
  ASSERT_EQ(groups.size(), g->actors().size());
  std::map<std::string, const XmlElement*> by_name;
  for (const auto* grp : groups) by_name[tooltip_of(d, grp).substr(0, tooltip_of(d, grp).find(' '))] = grp;
  for (ActorId a = 0; a < g->actors().size(); ++a) {
    const auto* grp = by_name.at(g->actor(a).name);
    const int tile = s.actors[a].tile;
    EXPECT_EQ(grp->attr("data-row"), tile == kDriverTile ? "driver" : "tile " + std::to_string(tile)) << g->actor(a).name;
    EXPECT_EQ(grp->attr("data-key"), g->actor(a).function);
  }
  // Later starts are further right.
  for (ActorId a = 0; a < g->actors().size(); ++a)
    for (ActorId b = 0; b < g->actors().size(); ++b)
      if (s.actors[a].start < s.actors[b].start) {
        EXPECT_LE(attr_num(box_of(d, by_name.at(g->actor(a).name)), "x"), attr_num(box_of(d, by_name.at(g->actor(b).name)), "x"));
      }
  bool title = false;
  for (const auto& e : d.elements) title |= e.name == "text" && e.text == "HEFT schedule of 'pipeline'";
  EXPECT_TRUE(title);
  EXPECT_TRUE(renders(svg, "gantt_schedule"));
}

TEST(GanttSchedule, ReplicasOfTheRedundancyTransformationAreHatched) {
  // A graph as the *-diff transformation writes it: replicas NAME.rK and a compare actor.
  Graph g("redundant");
  auto x = g.input("x", 16);
  auto r1 = g.inner("y.r1", 16), r2 = g.inner("y.r2", 16);
  auto y = g.output("y", 16);
  g.actor("f.r1", "i32.sort", {x}, r1);
  g.actor("f.r2", "i32.sort", {x}, r2);
  g.actor("f.compare", "rf.compare", {r1, r2}, y);
  Schedule s;
  s.actors = {{0, 0, 0, 1e-6}, {1, 1, 0, 1e-6}, {2, kDriverTile, 1e-6, 1.2e-6}};
  s.tile_order = {{0}, {1}};
  s.driver_order = {2};
  s.makespan = 1.2e-6;
  const XmlDocument d = parse_xml(to_gantt_svg(s, g));
  ASSERT_EQ(d.error, "");
  std::size_t hatched = 0;
  for (const auto& e : d.elements) hatched += e.attr("fill") == "url(#hatch)" && !e.ancestors.empty() &&
                                              d.elements[e.ancestors.back()].attr("class") == "actor";
  EXPECT_EQ(hatched, 2u);  // the two replicas, not the compare actor
  const auto groups = actor_groups(d);
  EXPECT_EQ(groups[0]->attr("data-row"), "tile 0");
  EXPECT_EQ(groups[1]->attr("data-row"), "tile 1");
  EXPECT_EQ(groups[2]->attr("data-row"), "driver");
}

}  // namespace
}  // namespace redflow
