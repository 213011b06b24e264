// mat.cols and mat.hcat: strided copies the driver runs to cut matrices into
// contiguous column panels and to put column blocks back side by side;
// mat.hcat.tile is mat.hcat on a compute tile, for pieces that fit its slots
// (so that several tiles share the copy instead of the driver's one core).
#include "apps/rearrange.hpp"

#include <cstring>
#include <string>

#include "apps/actor_util.hpp"

namespace redflow::apps {
namespace {

using detail::arg_positive;
using detail::arg_u64;

struct ColsShape {
  std::size_t rows = 0, cols = 0, first = 0, width = 0, elem = 0;
};

// Derives the geometry of mat.cols from sizes and args, or says what is wrong.
std::string cols_shape(std::size_t in_bytes, std::size_t out_bytes, std::string_view args, ColsShape* s) {
  std::uint64_t cols = 0, first = 0, elem = 0;
  if (auto e = arg_positive(args, "cols", &cols); !e.empty()) return e;
  if (auto e = arg_u64(args, "first", &first); !e.empty()) return e;
  if (auto e = arg_positive(args, "elem", &elem); !e.empty()) return e;
  const std::size_t row_bytes = cols * elem;
  if (row_bytes / elem != cols || in_bytes % row_bytes != 0)
    return "input 0 has " + std::to_string(in_bytes) + " bytes, not whole rows of " + std::to_string(cols) + " x " +
           std::to_string(elem) + "-byte elements";
  const std::size_t rows = in_bytes / row_bytes;
  if (rows == 0) return "input 0 is empty";
  if (out_bytes % (rows * elem) != 0)
    return "output has " + std::to_string(out_bytes) + " bytes, not " + std::to_string(rows) + " rows of whole elements";
  const std::size_t width = out_bytes / (rows * elem);
  if (first > cols || width > cols - first)
    return "columns [" + std::to_string(first) + ", " + std::to_string(first + width) + ") lie beyond the input's " +
           std::to_string(cols) + " columns";
  *s = {rows, cols, first, width, elem};
  return "";
}

std::string check_cols(const ActorShape& s) {
  if (auto e = detail::expect_inputs(s.input_bytes.size(), 1); !e.empty()) return e;
  ColsShape shape;
  return cols_shape(s.input_bytes[0], s.output_bytes, s.args, &shape);
}

void run_cols(ActorContext& ctx) {
  ColsShape s;
  if (ctx.num_inputs() != 1) {
    ctx.fail("expects 1 input");
    return;
  }
  if (auto e = cols_shape(ctx.input_bytes(0).size(), ctx.output_bytes().size(), ctx.args(), &s); !e.empty()) {
    ctx.fail(e);
    return;
  }
  const std::byte* in = ctx.input_bytes(0).data();
  std::byte* out = ctx.output_bytes().data();
  const std::size_t run = s.width * s.elem, stride = s.cols * s.elem, skip = s.first * s.elem;
  ctx.parallel_chunks(0, s.rows, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r) std::memcpy(out + r * run, in + r * stride + skip, run);
  });
}

// mat.hcat: widths of the inputs, or a message.
std::string hcat_shape(std::span<const std::size_t> in_bytes, std::size_t out_bytes, std::string_view args,
                       std::size_t* rows, std::size_t* elem) {
  std::uint64_t r = 0, e = 0;
  if (auto m = arg_positive(args, "rows", &r); !m.empty()) return m;
  if (auto m = arg_positive(args, "elem", &e); !m.empty()) return m;
  if (in_bytes.empty()) return "expects at least 1 input, got 0";
  std::size_t sum = 0;
  for (std::size_t p = 0; p < in_bytes.size(); ++p) {
    if (in_bytes[p] % (r * e) != 0)
      return "input " + std::to_string(p) + " has " + std::to_string(in_bytes[p]) + " bytes, not " + std::to_string(r) +
             " rows of whole " + std::to_string(e) + "-byte elements";
    sum += in_bytes[p];
  }
  if (sum != out_bytes)
    return "inputs hold " + std::to_string(sum) + " bytes but the output has " + std::to_string(out_bytes);
  *rows = r;
  *elem = e;
  return "";
}

std::string check_hcat(const ActorShape& s) {
  std::size_t rows = 0, elem = 0;
  return hcat_shape(s.input_bytes, s.output_bytes, s.args, &rows, &elem);
}

void run_hcat(ActorContext& ctx) {
  // At most a handful of inputs in practice; the sizes live on the stack.
  constexpr std::size_t kMaxInputs = 4096;
  std::size_t sizes[kMaxInputs];
  const std::size_t k = ctx.num_inputs();
  if (k > kMaxInputs) {
    ctx.fail("more than " + std::to_string(kMaxInputs) + " inputs");
    return;
  }
  for (std::size_t p = 0; p < k; ++p) sizes[p] = ctx.input_bytes(p).size();
  std::size_t rows = 0, elem = 0;
  if (auto e = hcat_shape({sizes, k}, ctx.output_bytes().size(), ctx.args(), &rows, &elem); !e.empty()) {
    ctx.fail(e);
    return;
  }
  std::byte* out = ctx.output_bytes().data();
  const std::size_t out_row = ctx.output_bytes().size() / rows;
  ctx.parallel_chunks(0, rows, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r) {
      std::byte* dst = out + r * out_row;
      for (std::size_t p = 0; p < k; ++p) {
        const std::size_t run = sizes[p] / rows;
        std::memcpy(dst, ctx.input_bytes(p).data() + r * run, run);
        dst += run;
      }
    }
  });
}

}  // namespace

void register_rearrange_actors(Registry& reg) {
  reg.add("mat.cols", ActorSpec{run_cols, check_cols, /*on_driver=*/true,
                                "columns [first, first + W) of a row-major matrix, contiguous (args: cols=C,first=F,elem=E)"});
  reg.add("mat.hcat", ActorSpec{run_hcat, check_hcat, /*on_driver=*/true,
                                "row-major matrices with R rows side by side (args: rows=R,elem=E)"});
  reg.add("mat.hcat.tile", ActorSpec{run_hcat, check_hcat, /*on_driver=*/false,
                                     "mat.hcat on a compute tile (inputs and output must fit its slots; args: rows=R,elem=E)"});
}

}  // namespace redflow::apps
