// `redflow stream PROGRAM.dot`: run a SCORE stream program in this process
// (docs/streams.md), with one thread per operator or on a worker pool, and
// write its profile (tokens per stream, busy time per operator).
#include <fmt/format.h>

#include <cstring>

#include "cli_common.hpp"
#include "redflow/stream.hpp"
#include "stream/profile.hpp"

namespace redflow::cli {

namespace {
struct StreamArgs {
  std::string program, mode = "pool", profile;
  unsigned threads = 0;
  bool print = false;
};

}  // namespace

Command add_stream_command(CLI::App& app) {
  auto a = std::make_shared<StreamArgs>();
  auto* sub = app.add_subcommand("stream", "Run a stream program: operators connected by FIFO streams of tokens, until end of stream (docs/streams.md).");
  sub->footer("The program is DOT: operators are nodes with operator=NAME (and args=\"k=v ...\"), streams are edges with\n"
              "token=BYTES (and from_port=, to_port= when an operator has several). `collect` operators gather the results.\n"
              "Examples:\n"
              "  redflow stream examples/streams/sum.dot --print\n"
              "  redflow stream examples/streams/feedback.dot --mode threads --profile prof.json\n"
              "Exit status: 0 when every operator finished; 1 on an invalid program, an operator error or a deadlock.");
  sub->add_option("program", a->program, "The stream program (.dot)")->required()->check(readable_file());
  sub->add_option("--mode", a->mode, "threads: one thread per operator (the paper's); pool: operators fired on a pool of worker threads when tokens arrive")
      ->check(CLI::IsMember({"pool", "threads"}))
      ->capture_default_str();
  sub->add_option("--threads", a->threads, "Worker threads of the pool (default: one per hardware thread)")->check(CLI::Range(1u, 1024u));
  sub->add_flag("--print", a->print, "Print what each collect operator gathered (8-byte tokens as unsigned integers, others as hex)");
  sub->add_option("--profile", a->profile, "Write tokens per stream and busy time per operator as JSON (the placement's back-annotation)")
      ->type_name("FILE.json");
  return {sub, [a] {
            auto reg = stream::OperatorRegistry::with_builtins();
            auto program = stream::Program::from_dot_file(a->program, reg);
            if (!program.ok()) return fail(program.status());
            stream::RunOptions o;
            o.mode = a->mode == "threads" ? stream::Mode::kThreadPerOperator : stream::Mode::kPool;
            o.threads = a->threads;
            auto result = stream::run(*program, o);
            if (!result.ok()) return fail(result.status());
            std::uint64_t tokens = 0;
            for (const auto& s : result->streams) tokens += s.tokens;
            fmt::print("stream: {} operators, {} streams, {} tokens in {:.3f} s ({})\n", program->instances().size(), program->streams().size(),
                       tokens, result->seconds, a->mode == "threads" ? "one thread per operator" : "worker pool");
            if (a->print)
              for (const auto& [name, bytes] : result->outputs) {
                fmt::print("{}:", name);
                const std::size_t at = program->find(name);
                std::size_t token = 8;
                for (const auto& s : program->streams())
                  if (s.to == at) token = s.token_bytes;
                for (std::size_t i = 0; i + token <= bytes.size(); i += token) {
                  if (token == 8) {
                    std::uint64_t v;
                    std::memcpy(&v, bytes.data() + i, 8);
                    fmt::print(" {}", v);
                  } else {
                    fmt::print(" ");
                    for (std::size_t b = 0; b < token; ++b) fmt::print("{:02x}", static_cast<unsigned char>(bytes[i + b]));
                  }
                }
                fmt::print("\n");
              }
            if (!a->profile.empty()) {
              const std::string text = stream::profile_json(*result);
              if (Status s = write_file(a->profile, text.data(), text.size()); !s.ok()) return fail(s);
            }
            return 0;
          }};
}

}  // namespace redflow::cli
