// The dashboard's pages: the snapshot the page was served with, then one per
// server-sent event (/api/events; the first is the latest snapshot). Plain DOM and SVG, nothing fetched from
// elsewhere. The token in the page's address, if any, goes with each request.
"use strict";
(function () {
  const token = new URLSearchParams(location.search).get("token");
  const withToken = (path) => token ? path + "?token=" + encodeURIComponent(token) : path;
  for (const a of document.querySelectorAll("a[data-link]")) a.href = withToken(a.getAttribute("href"));
  const history = [[0, 0]];  // [elapsed_s, actors_done]: the run starts with none done

  const set = (id, text) => { const e = document.getElementById(id); if (e) e.textContent = text; };
  const count = (n) => String(n);
  const tileName = (n) => n.length === 0 ? "none" : (n.length === 1 ? "tile " : "tiles ") + n.join(", ");

  function overview(s) {
    set("executions-done", count(s.executions_done));
    set("executions-total", count(s.executions_total));
    const bar = document.getElementById("progress-bar");
    if (bar) bar.setAttribute("width", s.executions_total ? String(100 * s.executions_done / s.executions_total) : "0");
    set("actors-done", count(s.actors_done));
    set("actors-per-s", Math.round(s.actors_per_s).toString());
    set("elapsed", s.elapsed_s.toFixed(1) + " s");
    set("faults-injected", count(s.faults.injected));
    set("faults-detected", count(s.faults.detected));
    set("faults-corrected", count(s.faults.corrected));
    set("reexecutions", count(s.reexecutions));
    set("lost-tiles", count(s.lost_tiles));
    set("recomputed-actors", count(s.recomputed_actors));
    set("speculative-copies", count(s.speculative_copies));
    // quarantined_tiles holds the tiles on probation too: each is shown once.
    const probation = s.probation_tiles || [];
    set("quarantined-tiles", tileName(s.quarantined_tiles.filter((t) => !probation.includes(t))));
    set("probation-tiles", tileName(probation));
    set("scheduler", s.scheduler || "-");
    set("redundancy", s.redundancy || "-");
    set("last-actors", count(s.last_execution.actors));
    set("last-makespan", (1e3 * s.last_execution.makespan_s).toFixed(3));
    // A graph run's progress is its actors; another model's, its first counter (a SPITS job's commits).
    const first = s.counters.length > 0 ? s.counters[0] : null;
    const done = s.model === "graph" || !first ? s.actors_done : first.value;
    set("history-what", s.model === "graph" || !first ? "Actors done" : first.name[0].toUpperCase() + first.name.slice(1));
    history.push([s.elapsed_s, done]);
    if (history.length > 600) history.shift();
    const line = document.getElementById("history-line");
    if (line && history.length > 0) {
      const t0 = history[0][0], t1 = Math.max(history[history.length - 1][0], t0 + 1e-9);
      const top = Math.max(history[history.length - 1][1], 1);
      line.setAttribute("points", history.map(([t, n]) =>
        (600 * (t - t0) / (t1 - t0)).toFixed(1) + "," + (118 - 116 * n / top).toFixed(1)).join(" "));
    }
  }

  function tiles(s) {
    const body = document.getElementById("tile-rows");
    if (!body) return;
    const most = Math.max(1, ...s.tiles.map((t) => t.actors));
    body.replaceChildren(...s.tiles.map((t) => {
      const tr = document.createElement("tr");
      tr.className = "tile";
      tr.dataset.state = t.state;
      tr.dataset.tile = String(t.id);
      const cells = [String(t.id), t.worker || "local", t.host || "-", t.state, count(t.actors), null,
                     count(t.bytes_in), count(t.bytes_out), count(t.lost_votes), count(t.speculative), count(t.straggled || 0)];
      for (const c of cells) {
        const td = document.createElement("td");
        if (c === null) {
          td.innerHTML = '<svg class="share" viewBox="0 0 100 10" preserveAspectRatio="none"><rect height="10"/></svg>';
          td.querySelector("rect").setAttribute("width", String(100 * t.actors / most));
        } else {
          td.textContent = c;
        }
        tr.appendChild(td);
      }
      return tr;
    }));
  }

  // A stream program's streams: tokens, tokens per second, and where tokens queue up.
  function streams(s) {
    const body = document.getElementById("stream-rows");
    if (!body) return;
    const list = s.streams || [];
    set("stream-count", count(list.length));
    const most = Math.max(1, ...list.map((v) => v.queued));
    body.replaceChildren(...list.map((v) => {
      const tr = document.createElement("tr");
      tr.className = "stream";
      tr.dataset.from = v.from;
      tr.dataset.to = v.to;
      for (const c of [v.from, v.to, count(v.tokens), Math.round(v.per_s).toString(), count(v.queued), null]) {
        const td = document.createElement("td");
        if (c === null) {
          td.innerHTML = '<svg class="queued" viewBox="0 0 100 10" preserveAspectRatio="none"><rect height="10"/></svg>';
          td.querySelector("rect").setAttribute("width", String(100 * v.queued / most));
        } else {
          td.textContent = c;
        }
        tr.appendChild(td);
      }
      return tr;
    }));
  }

  // The rows of table body `id`, one per item, its cells from `cells(item)`, its data-* from `data(item)`.
  function rows(id, items, className, cells, data) {
    const body = document.getElementById(id);
    if (!body) return;
    body.replaceChildren(...items.map((item) => {
      const tr = document.createElement("tr");
      tr.className = className;
      Object.assign(tr.dataset, data(item));
      for (const c of cells(item)) {
        const td = document.createElement("td");
        td.textContent = c;
        tr.appendChild(td);
      }
      return tr;
    }));
  }

  // The server's jobs and workers (jobs page).
  function jobs(s) {
    const list = s.jobs || [], workers = s.workers || [];
    set("job-count", count(list.length));
    set("worker-count", count(workers.length));
    rows("job-rows", list, "job", (j) => [String(j.id), j.model, j.command, j.state, j.workers_asked ? String(j.workers_asked) : "default",
                                          j.workers.join(", ") || "-", String(j.starts), j.exit_status < 0 ? "-" : String(j.exit_status), j.message || ""],
         (j) => ({job: String(j.id), state: j.state}));
    rows("worker-rows", workers, "worker", (w) => [w.name, w.state], (w) => ({state: w.state}));
  }

  // A model's own numbers (a SPITS job's), in the order the run first counted them.
  function counters(s) {
    const section = document.getElementById("model-counters");
    if (!section) return;
    section.hidden = s.counters.length === 0;
    set("model-name", s.model);
    document.getElementById("counter-rows").replaceChildren(...s.counters.map((c) => {
      const tr = document.createElement("tr");
      tr.dataset.counter = c.name;
      const th = document.createElement("th");
      th.textContent = c.name;
      const td = document.createElement("td");
      td.textContent = Number.isInteger(c.value) ? String(c.value) : c.value.toFixed(3);
      tr.append(th, td);
      return tr;
    }));
  }

  // The runtime's events as they happened, newest first.
  function eventList(s) {
    const list = document.getElementById("events");
    if (!list) return;
    set("events-total", count(s.events_total));
    list.replaceChildren(...s.events.slice().reverse().map((e) => {
      const li = document.createElement("li");
      li.dataset.what = e.what;
      if (e.tile >= 0) li.dataset.tile = String(e.tile);
      li.textContent = e.at_s.toFixed(1) + " s  " + e.what + "  " + e.detail;
      return li;
    }));
  }

  function render(s) {
    const state = document.getElementById("run-state");
    if (state) { state.textContent = s.state; state.className = "state " + s.state; }
    set("run-name", s.name || s.model);
    const failure = document.getElementById("failure");
    if (failure) { failure.hidden = !s.failure; failure.textContent = s.failure; }
    set("tile-count", count(s.tiles.length));
    overview(s);
    tiles(s);
    streams(s);
    jobs(s);
    counters(s);
    eventList(s);
    document.body.dataset.snapshots = String(Number(document.body.dataset.snapshots || 0) + 1);
    document.body.dataset.state = s.state;
    document.body.dataset.model = s.model;
  }

  // The live Gantt chart (tiles page): asked for every second, which is what
  // makes the run trace executions for it; 204 while the one shown is the newest.
  const gantt = document.getElementById("gantt");
  if (gantt) {
    let version = gantt.dataset.version || "0";  // the chart the page was served with
    if (gantt.dataset.execution) set("gantt-what", "execution " + gantt.dataset.execution);
    const refresh = () => fetch(withToken("/api/gantt?since=" + version)).then((r) => {
      if (r.status !== 200) return;
      version = r.headers.get("X-Gantt-Version") || version;
      const execution = r.headers.get("X-Gantt-Execution");
      return r.text().then((svg) => {
        gantt.innerHTML = svg;
        gantt.dataset.version = version;
        set("gantt-what", "execution " + execution);
      });
    }).catch(() => {}).finally(() => setTimeout(refresh, version === "0" ? 150 : 1000));
    refresh();  // the first chart is traced just after this first request, and fetched soon after
  }

  // The snapshot the page was served with (server.cpp): shown at once.
  const first = document.getElementById("snapshot");
  if (first && first.textContent) render(JSON.parse(first.textContent));
  const events = new EventSource(withToken("/api/events"));
  events.onmessage = (e) => render(JSON.parse(e.data));
  // Closed for good (the server refused one page too many, or is gone): the
  // page polls the snapshot instead of going stale.
  let poller = null;
  events.onerror = () => {
    if (events.readyState !== EventSource.CLOSED) return;  // it reconnects by itself
    set("run-state", "disconnected");
    if (poller === null)
      poller = setInterval(() => fetch(withToken("/api/snapshot")).then((r) => r.json()).then(render).catch(() => {}), 2000);
  };
})();
