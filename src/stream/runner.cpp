// Running the operators of a stream program that live in this process
// (runner.hpp), in either of the two local modes: the paper's one thread per
// operator, each waiting on its doorbell until its firing rule holds; or a
// pool of worker threads that fire whichever operators are ready, an operator
// becoming ready when a token arrives. One step() serves both: fire if ready,
// finish if never again.
#include "stream/runner.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "redflow/stream.hpp"
#include "stream/builtin_operators.hpp"
#include "stream/checkpointer.hpp"
#include "stream/inbox.hpp"
#include "stream/op_state.hpp"
#include "stream/profile.hpp"
#include "stream/room.hpp"
#include "stream/token_queue.hpp"

namespace redflow::stream {

namespace {

using Clock = std::chrono::steady_clock;

enum class Step { kFired, kIdle, kFinished };

}  // namespace

struct Runner::Impl {
 public:
  Impl(const Program& program, const RunOptions& options, const NodePart* part) : program_(program), options_(options), part_(part) {}

  Status prepare() {
    if (prepared_) return Status::Ok();
    REDFLOW_RETURN_IF_ERROR(program_.validate());
    if (part_ && part_->local.size() != program_.instances().size())
      return Status::InvalidArgument("stream node: the part names " + std::to_string(part_->local.size()) + " operators, the program has " +
                                     std::to_string(program_.instances().size()));
    build();
    prepared_ = true;
    return Status::Ok();
  }

  Result<RunResult> run() {
    REDFLOW_RETURN_IF_ERROR(prepare());
    const auto start = start_ = Clock::now();
    room_.heard();  // the quiet network's wait counts from the start
    for (auto& s : ops_)
      if (s && !s->restored) guarded(*s, [&] { s->op->start(*s); });
    if (live_.load() == 0) stop_all();  // every operator here was restored finished
    for (auto& s : ops_)
      if (s) wake_consumers(*s);
    std::thread sampler;
    if (options_.on_sample) sampler = std::thread([this] { sample_until_ran(); });
    if (options_.mode == Mode::kThreadPerOperator) run_threads();
    else run_pool();
    if (sampler.joinable()) {
      {
        std::lock_guard lock(sample_mutex_);
        ran_ = true;
      }
      sample_cv_.notify_all();
      sampler.join();
    }
    RunResult result;
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    {
      std::lock_guard lock(mutex_);
      if (!error_.ok()) return error_;
    }
    for (auto& s : ops_) {
      if (!s) continue;
      if (auto* c = dynamic_cast<CollectOperator*>(s->op.get())) result.outputs[s->op_name] = c->take_bytes();
      result.operators.push_back(OperatorProfile{s->op_name, s->firings, s->busy_s, -1, std::move(s->spans)});
    }
    result.streams = sample();
    return result;
  }

  // Restored from a checkpoint (NodePart::restore), an operator gets its
  // state back, the tokens that were in flight on its inputs ahead of
  // everything else, and, when it had finished, its outputs closed. At
  // prepare(), before any token from another node can be delivered: the
  // restored ones must come first.
  void restore() {
    std::vector<OpState*> finished;
    for (auto& s : ops_) {
      if (!s || s->index >= part_->restore.size() || !part_->restore[s->index]) continue;
      const OperatorCheckpoint& c = *part_->restore[s->index];
      s->restored = true;
      guarded(*s, [&] {
        StateReader r(c.state);
        s->op->restore(r);
        if (!r.done()) throw std::runtime_error("its saved state has bytes it did not read back");
      });
      for (std::size_t i = 0; i < s->in.size() && i < c.channels.size(); ++i) {
        const std::size_t n = c.channels[i].size() / s->in[i].token_bytes();
        if (n == 0) continue;
        if (s->in[i].queue) {
          s->in[i].queue->push_many(c.channels[i].data(), n);
        } else {
          s->in[i].inbox->deliver(c.channels[i].data(), n);
          s->in[i].inbox->forgive(n);  // not sent by the producer's node: taking them grants nothing
        }
      }
      if (c.finished) finished.push_back(s.get());
    }
    // After every channel is back: a finished producer's outputs close behind them.
    for (OpState* s : finished) {
      for (TokenQueue* q : s->out) q->close();
      s->done = true;
      live_.fetch_sub(1);
    }
  }

  std::vector<StreamProfile> sample() const { return sample_streams(program_, queues_); }

  // RunOptions::on_sample every kSamplePeriodS until the operators ran.
  void sample_until_ran() {
    std::unique_lock lock(sample_mutex_);
    while (!sample_cv_.wait_for(lock, std::chrono::duration<double>(kSamplePeriodS), [this] { return ran_; })) {
      lock.unlock();
      options_.on_sample(sample());
      lock.lock();
    }
  }

  TokenQueue* outgoing_queue(std::size_t k) { return k < queues_.size() && (!part_ || !part_->local[program_.streams()[k].to]) ? queues_[k].get() : nullptr; }
  void deliver(std::size_t k, const void* tokens, std::size_t n) {
    inboxes_.at(k)->deliver(tokens, n);
    room_.heard();
    wake(program_.streams()[k].to);
  }
  void close_incoming(std::size_t k) {
    inboxes_.at(k)->close();
    room_.heard();
    wake(program_.streams()[k].to);
  }
  // The I/O thread took tokens from stream `k` (bound elsewhere): its producer may fire again.
  void took_outgoing(std::size_t k) {
    if (k < queues_.size() && queues_[k] && queues_[k]->room_wanted()) wake(program_.streams()[k].from);
  }
  void abort(Status error) { fail(std::move(error)); }
  // Every operator is woken (the sources take the checkpoint; a finished
  // stream's reader snapshots at its end). In the pool, under the lock the
  // deadlock check holds: a wake from outside the workers that has marked
  // an operator queued but not yet put it in the queue would otherwise let
  // the check find every worker idle and the queue empty, and call a
  // running program deadlocked.
  void request_checkpoint(std::uint32_t epoch) {
    if (!checkpointer_) return;
    checkpointer_->request(epoch);
    if (options_.mode == Mode::kThreadPerOperator) {
      for (auto& s : ops_)
        if (s) s->bell.ring();
      return;
    }
    {
      std::lock_guard lock(mutex_);
      for (std::size_t i = 0; i < ops_.size(); ++i)
        if (ops_[i]) mark_ready(i);
    }
    work_.notify_all();
  }
  std::uint64_t outgoing_barrier(std::size_t k) const { return checkpointer_ ? checkpointer_->slot(k)->load(std::memory_order_acquire) : 0; }
  void deliver_barrier(std::size_t k, std::uint32_t epoch, std::uint64_t position) {
    if (!checkpointer_) return;
    checkpointer_->deliver_barrier(k, epoch, position);
    room_.heard();
    wake(program_.streams()[k].to);
  }
  bool has_inbox(std::size_t k) const { return k < inboxes_.size() && inboxes_[k] != nullptr; }
  Inbox* inbox(std::size_t k) const { return has_inbox(k) ? inboxes_[k].get() : nullptr; }

 private:
  bool local(std::size_t i) const { return !part_ || part_->local[i]; }

  void build() {
    const auto& inst = program_.instances();
    const auto& streams = program_.streams();
    queues_.resize(streams.size());
    inboxes_.resize(streams.size());
    for (std::size_t k = 0; k < streams.size(); ++k) {
      if (local(streams[k].from)) {
        queues_[k] = std::make_unique<TokenQueue>(streams[k].token_bytes);
        if (options_.stream_buffer_bytes > 0) queues_[k]->set_capacity(options_.stream_buffer_bytes / std::max<std::size_t>(1, streams[k].token_bytes));
        room_.add(queues_[k].get(), streams[k].from, !local(streams[k].to));
      }
      else if (local(streams[k].to)) {
        inboxes_[k] = std::make_unique<Inbox>(streams[k].token_bytes, part_->two_level);
        if (k < part_->credit_window.size()) inboxes_[k]->set_credit_window(part_->credit_window[k]);
        room_.add(inboxes_[k].get());
        remote_inputs_ = true;
      }
    }
    if (part_ && part_->on_checkpoint) checkpointer_ = std::make_unique<Checkpointer>(program_, *part_);
    ops_.resize(inst.size());
    std::size_t live = 0;
    for (std::size_t n = 0; n < inst.size(); ++n) {
      if (!local(n)) continue;
      const auto& i = inst[n];
      auto s = std::make_unique<OpState>();
      s->op_name = i.name;
      s->index = n;
      s->op = program_.registry()->find(i.op)->make(i.args);
      if (auto* c = dynamic_cast<CollectOperator*>(s->op.get()); c && part_ && part_->on_output && i.op == "collect")  // the driver's collects
        c->stream_to([f = part_->on_output, n](std::size_t offset, std::span<const std::byte> bytes) { f(n, offset, bytes); });
      s->in.resize(i.spec.inputs);
      s->producer.assign(i.spec.inputs, kRemote);
      s->out.resize(i.spec.outputs);
      s->consumer.resize(i.spec.outputs);
      s->out_stream.resize(i.spec.outputs);
      if (checkpointer_) {
        s->checkpoints = true;
        s->barrier.resize(i.spec.inputs);
        s->consumed.assign(i.spec.inputs, 0);
        s->safe.assign(i.spec.inputs, 0);
        s->recording.resize(i.spec.inputs);
        s->snapped = part_->epoch;
      }
      s->wrote.assign(i.spec.outputs, 0);
      s->source = i.spec.inputs == 0;
      ops_[n] = std::move(s);
      ++live;
    }
    for (std::size_t k = 0; k < streams.size(); ++k) {
      const auto& st = streams[k];
      if (local(st.from)) {
        ops_[st.from]->out[st.from_port] = queues_[k].get();
        ops_[st.from]->consumer[st.from_port] = local(st.to) ? st.to : kRemote;
        ops_[st.from]->out_stream[st.from_port] = k;
      }
      if (local(st.to)) {
        ops_[st.to]->in[st.to_port] = InPort{queues_[k].get(), inboxes_[k].get()};
        if (local(st.from)) ops_[st.to]->producer[st.to_port] = st.from;
        if (checkpointer_) ops_[st.to]->barrier[st.to_port] = checkpointer_->slot(k);
      }
    }
    live_.store(live);
    if (part_ && !part_->restore.empty()) restore();
  }

  // Runs an operator's code; an exception ends the run with an error naming it.
  template <typename F>
  bool guarded(OpState& s, F f) {
    try {
      f();
      return true;
    } catch (const std::exception& e) {
      fail(Status::ActorFailed("stream operator '" + s.op_name + "' threw: " + e.what()));
    } catch (...) {
      fail(Status::ActorFailed("stream operator '" + s.op_name + "' threw"));
    }
    return false;
  }
  void fail(Status s) {
    {
      std::lock_guard lock(mutex_);
      if (error_.ok()) error_ = std::move(s);
    }
    failed_.store(true);
    stop_all();
  }

  void wake(std::size_t op) {
    if (op == kRemote) {
      if (part_ && part_->outgoing) part_->outgoing();
      return;
    }
    if (options_.mode == Mode::kThreadPerOperator) ops_[op]->bell.ring();
    else schedule(op);
  }
  // Producers waiting for room in a queue this operator has just read from;
  // the I/O thread, when a stream from elsewhere has credit to grant back.
  void wake_producers(OpState& s) {
    for (std::size_t i = 0; i < s.in.size(); ++i) {
      if (s.in[i].queue) {
        if (s.in[i].queue->room_wanted()) wake(s.producer[i]);
      } else if (s.in[i].inbox->credit_due()) {
        wake(kRemote);
      }
    }
  }
  void wake_consumers(OpState& s) {
    for (std::size_t o = 0; o < s.out.size(); ++o)
      if (s.wrote[o]) {
        s.wrote[o] = 0;
        wake(s.consumer[o]);
      }
  }

  void finish(OpState& s) {
    guarded(s, [&] { s.op->finish(s); });
    // What it leaves unread no longer holds its producers back.
    for (std::size_t i = 0; i < s.in.size(); ++i) {
      if (TokenQueue* q = s.in[i].queue) {
        q->unbound();
        if (q->producer_waiting()) {
          q->clear_waiting();
          wake(s.producer[i]);
        }
      } else if (s.in[i].inbox->credit_window() > 0) {
        s.in[i].inbox->release();
        wake(kRemote);
      }
    }
    for (std::size_t o = 0; o < s.out.size(); ++o) {
      s.out[o]->close();
      s.wrote[o] = 1;
    }
    if (checkpointer_) guarded(s, [&] { checkpointer_->finished(s); });
    // Its consumers are rung before it counts as done: the deadlock check
    // skips done operators, and must not find a consumer asleep and unrung
    // that this finish is about to wake.
    wake_consumers(s);
    s.done = true;
    if (live_.fetch_sub(1) == 1) stop_all();
  }

  // The one place an operator runs: by the thread that owns it right now.
  Step step(OpState& s) {
    if (s.done) return Step::kFinished;
    if (checkpointer_) {
      if (!guarded(s, [&] { checkpointer_->before_step(s); })) return Step::kFinished;
      wake_consumers(s);
      wake_producers(s);
    }
    if (!s.source && s.op->finished(s)) {
      finish(s);
      return Step::kFinished;
    }
    if (!s.source && !s.op->ready(s)) return Step::kIdle;
    for (TokenQueue* q : s.out)
      if (q->wait_for_room()) return Step::kIdle;  // its consumer wakes it (wake_producers) or the deadlock check grows the queue
    const auto t0 = Clock::now();
    Fired fired = Fired::kMore;
    const bool ok = guarded(s, [&] { fired = s.op->fire(s); });
    const auto t1 = Clock::now();
    s.busy_s += std::chrono::duration<double>(t1 - t0).count();
    ++s.firings;
    if (options_.trace) add_firing_span(s.spans, std::chrono::duration<double>(t0 - start_).count(), std::chrono::duration<double>(t1 - start_).count());
    wake_consumers(s);
    wake_producers(s);
    if (!ok) return Step::kFinished;
    if (fired == Fired::kDone) {
      finish(s);
      return Step::kFinished;
    }
    return Step::kFired;
  }

  // Parks' rule (room.hpp): true when a producer was woken, its stream grown
  // or found to have room, or windows of streams from elsewhere grew.
  // `locked`: mutex_ is held (the pool's check).
  bool grow_for_room(bool locked) {
    const auto producer = room_.make_room(remote_inputs_, [this](std::size_t op) { return ops_[op]->done.load(); });
    if (!producer) return false;
    if (*producer == Room::kCreditGrown) wake(kRemote);  // the I/O thread sends the grant
    else if (options_.mode == Mode::kThreadPerOperator) ops_[*producer]->bell.ring();
    else if (locked) mark_ready(*producer);
    else schedule(*producer);
    return true;
  }

  bool stopping() const { return failed_.load() || live_.load() == 0; }
  void stop_all() {
    for (auto& s : ops_)
      if (s) s->bell.ring();
    std::lock_guard lock(mutex_);
    work_.notify_all();
  }

  void run_threads() {
    std::vector<std::thread> threads;
    for (auto& sp : ops_)
      if (sp) threads.emplace_back([this, s = sp.get()] {
        while (!failed_.load()) {
          const std::uint64_t ticket = s->bell.ticket();
          const Step r = step(*s);
          if (r == Step::kFinished) return;
          if (r == Step::kIdle && !s->bell.rung_soon(ticket)) s->bell.wait(ticket, [&] { return failed_.load(); });
        }
      });
    {
      std::unique_lock lock(mutex_);
      while (!stopping()) {
        work_.wait_for(lock, std::chrono::milliseconds(50), [&] { return stopping(); });
        if (stopping()) continue;
        lock.unlock();
        if (threads_deadlocked() && !grow_for_room(false) && !remote_inputs_ && !room_.waits_on_network()) fail(deadlock_error());
        lock.lock();
      }
    }
    for (auto& t : threads) t.join();
  }

  // One thread per operator: every operator not finished is asleep and no
  // one rang it since, at two looks with the same ring counts in between.
  // Then none of them runs, so none can ever ring another: a deadlock, told
  // exactly (no timeout), unless one of them waits for room (grow_for_room())
  // or the I/O thread may still ring (a node with streams from elsewhere,
  // a producer waiting on the network).
  bool threads_deadlocked() const {
    std::vector<std::uint64_t> seen(ops_.size(), 0);
    bool waiting = false;
    for (int look = 0; look < 2; ++look)
      for (std::size_t i = 0; i < ops_.size(); ++i) {
        if (!ops_[i] || ops_[i]->done.load()) continue;
        std::uint64_t rings = 0;
        if (!ops_[i]->bell.blocked(rings) || (look == 1 && rings != seen[i])) return false;
        seen[i] = rings;
        waiting = true;
      }
    // Every operator done, the last not yet counted out of live_: it is
    // finishing, not deadlocked (the error named no operator, 2 runs in 400
    // of StreamAppsCha under load).
    return waiting && live_.load() > 0;
  }
  Status deadlock_error() const {
    std::string names;  // the operators not finished
    for (const auto& s : ops_)
      if (s && !s->done) names += (names.empty() ? "" : ", ") + ("'" + s->op_name + "'");
    return Status::InvalidGraph("stream program deadlocked: " + names +
                                " wait for tokens that can never come (a cycle needs a delay operator with initial tokens)");
  }

  // Pool: an operator is queued at most once; a token arriving while it runs
  // marks it dirty, so the worker looks at it again before letting it go.
  //
  // The token written before this call and the state read here are two
  // locations (a store then a load). A plain load may read kQueued while the
  // token still sits in this core's store buffer, and the worker that just
  // took the operator marks it kRunning, reads its queues without the token,
  // finds it not ready and lets it go idle: a lost wake-up (a cycle then ends
  // as "deadlocked"). So the state is read with a read-modify-write, and the
  // worker marks kRunning with one (exchange): the two are ordered on the
  // state itself, and whichever comes second sees what the first published.
  // (Not fences: TSan does not support them.)
  void schedule(std::size_t i) {
    if (mark(i)) {
      {
        std::lock_guard lock(mutex_);
        ready_.push_back(i), queued_.fetch_add(1, std::memory_order_relaxed);
      }
      work_.notify_one();
    }
  }
  // schedule() with mutex_ held.
  void mark_ready(std::size_t i) {
    if (mark(i)) ready_.push_back(i), queued_.fetch_add(1, std::memory_order_relaxed);
  }
  // Idle -> queued (true: the caller puts it in the queue), running -> dirty.
  bool mark(std::size_t i) {
    OpState& s = *ops_[i];
    int st = s.sched.fetch_or(0);
    for (;;) {
      if (st == kIdle) {
        if (!s.sched.compare_exchange_weak(st, kQueued)) continue;
        return true;
      }
      if (st == kRunning) {
        if (!s.sched.compare_exchange_weak(st, kDirty)) continue;
        return false;
      }
      return false;  // queued or dirty already
    }
  }

  void run_pool() {
    unsigned n = options_.threads ? options_.threads : std::max(1u, std::thread::hardware_concurrency());
    {
      std::lock_guard lock(mutex_);
      workers_ = n;
      // An operator the I/O thread already woke is in the queue once.
      for (std::size_t i = 0; i < ops_.size(); ++i) {
        int idle = kIdle;
        if (ops_[i] && ops_[i]->sched.compare_exchange_strong(idle, kQueued)) ready_.push_back(i), queued_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < n; ++w) workers.emplace_back([this] { pool_worker(); });
    for (auto& t : workers) t.join();
  }

  void pool_worker() {
    // A fairness bound: an operator that stays ready (a source) is put back
    // in the queue after this many firings, so one worker serves others too.
    constexpr int kFiringsPerTurn = 16;
    for (;;) {
      std::size_t i;
      {
        std::unique_lock lock(mutex_);
        bool deadlock = false;
        while (ready_.empty() && !stopping()) {
          if (++idle_workers_ == workers_) {
            // Every worker idle, nothing ready, operators left: unless one
            // waits for room (then its queue grows), none of them can ever
            // fire (a cycle without initial tokens, say). Tokens from other
            // nodes may still come, or the I/O thread take tokens bound
            // elsewhere: then only the network's silence (the driver's
            // heartbeats) can tell a cluster is stuck.
            if (grow_for_room(true)) {
              --idle_workers_;
              continue;
            }
            if (!remote_inputs_ && !room_.waits_on_network()) {
              --idle_workers_;
              deadlock = true;
              break;
            }
          }
          // A ready operator usually comes within microseconds (the next
          // batch of a fast producer): look for one awake first, which saves
          // a sleep and a wake-up. Then sleep, if the queue is still empty
          // under the lock (a push made meanwhile notified nobody).
          lock.unlock();
          for (int k = 0; k < 2000 && queued_.load(std::memory_order_relaxed) == 0 && !stopping(); ++k) spin_pause();
          lock.lock();
          if (ready_.empty() && !stopping()) {
            // The last to go idle on a node fed from elsewhere looks again
            // when the network has been quiet a while (grow_for_room()).
            if (remote_inputs_ && idle_workers_ == workers_) work_.wait_for(lock, Room::kQuietNetwork / 2);
            else work_.wait(lock);
          }
          --idle_workers_;
        }
        if (deadlock) {
          lock.unlock();
          fail(deadlock_error());
          return;
        }
        if (ready_.empty() || failed_.load()) return;
        i = ready_.front();
        ready_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      OpState& s = *ops_[i];
      s.sched.exchange(kRunning);  // see schedule()
      for (;;) {
        Step r = Step::kIdle;
        for (int k = 0; k < kFiringsPerTurn && !failed_.load(); ++k)
          if ((r = step(s)) != Step::kFired) break;
        if (r == Step::kFinished || failed_.load()) break;
        if (r == Step::kFired) {  // still ready: to the back of the queue
          s.sched.store(kQueued);
          std::lock_guard lock(mutex_);
          ready_.push_back(i), queued_.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        int expected = kRunning;
        if (s.sched.compare_exchange_strong(expected, kIdle)) break;
        s.sched.exchange(kRunning);  // dirty: a token came while it ran (see schedule())
      }
    }
  }

  const Program& program_;
  const RunOptions& options_;
  const NodePart* part_;
  bool prepared_ = false, remote_inputs_ = false;
  Clock::time_point start_{};
  std::vector<std::unique_ptr<TokenQueue>> queues_;  // per stream whose producer runs here
  std::vector<std::unique_ptr<Inbox>> inboxes_;      // per stream from another node to here
  std::vector<std::unique_ptr<OpState>> ops_;
  std::unique_ptr<Checkpointer> checkpointer_;  // when the run takes checkpoints
  std::atomic<std::size_t> live_{0};
  std::atomic<bool> failed_{false};
  Room room_;  // back-pressure: the streams written here (Parks' rule)
  std::mutex mutex_;
  std::condition_variable work_;
  std::mutex sample_mutex_;  // the sampler's wait (RunOptions::on_sample)
  std::condition_variable sample_cv_;
  bool ran_ = false;         // under sample_mutex_: the operators ran, the sampler ends
  std::deque<std::size_t> ready_;
  std::atomic<std::size_t> queued_{0};  // ready_'s size, for looking without the lock
  unsigned workers_ = 1, idle_workers_ = 0;  // under mutex_
  Status error_;
};

Runner::Runner(const Program& program, const RunOptions& options, const NodePart* part) : impl_(std::make_unique<Impl>(program, options, part)) {}
Runner::~Runner() = default;
Status Runner::prepare() { return impl_->prepare(); }
Result<RunResult> Runner::run() { return impl_->run(); }
TokenQueue* Runner::outgoing_queue(std::size_t stream) { return impl_->outgoing_queue(stream); }
bool Runner::incoming(std::size_t stream) const { return impl_->has_inbox(stream); }
void Runner::deliver(std::size_t stream, const void* tokens, std::size_t n) { impl_->deliver(stream, tokens, n); }
void Runner::close_incoming(std::size_t stream) { impl_->close_incoming(stream); }
void Runner::took_outgoing(std::size_t stream) { impl_->took_outgoing(stream); }
Inbox* Runner::incoming_inbox(std::size_t stream) const { return impl_->inbox(stream); }
void Runner::abort(Status error) { impl_->abort(std::move(error)); }
void Runner::request_checkpoint(std::uint32_t epoch) { impl_->request_checkpoint(epoch); }
void Runner::deliver_barrier(std::size_t stream, std::uint32_t epoch, std::uint64_t position) { impl_->deliver_barrier(stream, epoch, position); }
std::uint64_t Runner::outgoing_barrier(std::size_t stream) const { return impl_->outgoing_barrier(stream); }

Result<RunResult> run(const Program& program, const RunOptions& options) { return Runner(program, options).run(); }

}  // namespace redflow::stream
