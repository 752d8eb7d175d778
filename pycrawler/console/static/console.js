// The console page: polls the JSON of pycrawler/console/server.py and draws it; no build step.
"use strict";

const $ = (id) => document.getElementById(id);
// Every poll is work on the crawl's own loop: a few seconds' delay shows a long crawl just as well.
const FIGURES_EVERY_MS = 2000, REPORTS_EVERY_MS = 5000;
const number = new Intl.NumberFormat("en");

function bytes(n) {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (n < 100 && i ? n.toFixed(1) : Math.round(n)) + " " + units[i];
}

function setText(id, value) { $(id).textContent = value; }
function percent(share) { return (100 * share).toFixed(share < 0.1 ? 1 : 0) + "%"; }
function seconds(s) { return s < 10 ? s.toFixed(2) + " s" : Math.round(s) + " s"; }
// A queue's next fetch, relative to the browser's clock (the console's own, on loopback): a wait
// of a few milliseconds may have ended by the time the page draws it.
function nextFetch(epoch) {
  if (epoch === null) return "-";
  const left = epoch - Date.now() / 1000;
  return left > 0.005 ? "in " + seconds(left) : "now";
}

// The token: from the address's #token=... (never sent to the server) or typed in; kept for the tab.
function budget(host) {
  if (host.budget_used === null) return "-";
  return `${number.format(host.budget_used)} / ${host.budget_left === null ? "-" : number.format(host.budget_left)}`;
}
function token() { return $("token").value.trim(); }
function keepToken() { sessionStorage.setItem("pycrawler-token", token()); }
(function loadToken() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  $("token").value = fromHash || sessionStorage.getItem("pycrawler-token") || "";
  if (fromHash) { keepToken(); history.replaceState(null, "", location.pathname); }
  $("token").addEventListener("change", keepToken);
})();

async function getJSON(path) {
  const headers = token() ? {"X-Pycrawler-Token": token()} : {};
  const answer = await fetch(path, {headers});
  if (!answer.ok) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
  return answer.json();
}

async function act(action, body) {
  const answer = await fetch("api/" + action, {
    method: "POST",
    headers: {"X-Pycrawler-Token": token(), "Content-Type": "application/json"},
    body: JSON.stringify(body || {}),
  });
  const text = await answer.text();
  setText("message", answer.ok ? `${action}: done` : `${action} refused: ${answer.status} ${text}`);
  poll();
}

$("pause").onclick = () => act("pause");
$("resume").onclick = () => act("resume");
$("stop").onclick = () => { if (confirm("Stop the crawl (gracefully)?")) act("stop"); };
$("add-seeds").onclick = () => act("seeds", {urls: $("seeds").value.split(/\s+/).filter(Boolean)});

function chart(id, title) {
  const options = {
    title, width: 520, height: 220,
    // One point (a crawl's first minute) would stretch the time axis over years.
    // Rates read from zero up.
    scales: {x: {time: true, range: (u, min, max) => min === max ? [min - 60, max + 60] : [min, max]},
             pages: {range: (u, min, max) => [0, Math.max(max, 1) * 1.1]},
             mb: {range: (u, min, max) => [0, Math.max(max, 0.01) * 1.1]}},
    series: [{}, {label: "pages/s", stroke: "#2a6fdb", scale: "pages"},
             {label: "MB/s", stroke: "#d9822b", scale: "mb"}],
    axes: [{}, {scale: "pages", label: "pages/s"}, {scale: "mb", side: 1, label: "MB/s", grid: {show: false}}],
  };
  return new uPlot(options, [[], [], []], $(id));
}
const charts = {recent: chart("chart-recent", "pages/s and MB/s, per second"),
                whole: chart("chart-whole", "pages/s and MB/s, per minute")};

function table(id, header, rows) {
  const cells = (row, tag) => "<tr>" + row.map((c) => `<${tag}>${escape(c)}</${tag}>`).join("") + "</tr>";
  $(id).innerHTML = cells(header, "th") + rows.map((row) => cells(row, "td")).join("");
}
function escape(value) {
  return String(value).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}

function showFigures(f) {
  const status = f.mode === "stopped" ? "stopped" : f.stopping ? "stopping" : f.paused ? "paused" : "running";
  $("status").textContent = status;
  $("status").className = "status " + status;
  setText("mode", f.mode === "stopped" ? "(stopped crawl, read-only)" : "");
  setText("state", f.state);
  $("actions").hidden = !f.can_act;
  const rates = f.rates, counts = f.counts || {};
  setText("pages-rate", rates.pages_per_s.toFixed(1));
  setText("mb-rate", rates.mb_per_s.toFixed(2));
  setText("pages-avg", (rates.pages_per_s_avg ?? 0).toFixed(1));
  setText("mb-avg", (rates.mb_per_s_avg ?? 0).toFixed(2));
  for (const name of ["fetched", "failed", "precluded", "pending", "seen", "duplicates"])
    setText(name, name in counts ? number.format(counts[name]) : "-");
  if (f.workers) {
    setText("in-flight", f.workers.in_flight);
    setText("concurrency", f.workers.concurrency);
  }
  if (f.je) {
    setText("je-cache", f.je.cache_bytes === undefined ? "-" : bytes(f.je.cache_bytes));
    setText("je-cache-max", f.je.cache_max_bytes === undefined ? "-" : bytes(f.je.cache_max_bytes));
    setText("je-log", bytes(f.je.log_bytes));
  }
  if (f.disk) {
    setText("disk-free", bytes(Math.min(...Object.values(f.disk.free_bytes))));
    setText("min-free", bytes(f.disk.min_free_bytes));
  }
  if (f.seen_table) {
    const s = f.seen_table, lookups = s.cache_hits + s.cache_misses;
    setText("url-cache", s.url_cache ? percent(s.cache_hits / Math.max(lookups, 1)) : "none");
    setText("seen-kind", s.kind || "-");
    $("drum-tile").hidden = !s.drum;
    if (s.drum) {
      setText("drum-rounds", number.format(s.drum.rounds));
      setText("drum-seconds", seconds(s.drum.merge_seconds));
      setText("drum-last", seconds(s.drum.last_round_seconds));
    }
    $("bloom-tile").hidden = !s.bloom;
    if (s.bloom) {
      setText("bloom-fill", percent(s.bloom.fill));
      setText("bloom-fpr", s.bloom.false_positive_rate.toExponential(1));
      setText("bloom-target", s.bloom.target_false_positive_rate.toExponential(1));
    }
  }
  table("robots", ["robots.txt", "hosts"], Object.entries(f.robots || {}).map(([s, n]) => [s, number.format(n)]));
  table("codes", ["code", "count"], Object.entries(f.codes).map(([c, n]) => [c, number.format(n)]));
  table("mime", ["MIME type", "count"], Object.entries(f.mime).map(([m, n]) => [m, number.format(n)]));
  charts.recent.setData(f.history.recent);
  charts.whole.setData(f.history.whole);
}

function showCluster(c) {
  $("cluster").hidden = !c;
  if (!c) return;
  setText("cluster-name", c.name);
  setText("cluster-members", c.unreachable ? "? (Redis unreachable)" : c.members.length);
  setText("cluster-worker", c.worker);
  const figure = (w, name) => name in w ? number.format(w[name]) : "-";
  table("cluster-workers", ["worker", "hosts", "pages", "pending", "links sent", "received", "forwarded", "lease"],
        c.workers.map((w) => [w.worker, figure(w, "hosts"), figure(w, "pages"), figure(w, "pending"),
                              figure(w, "sent"), figure(w, "received"), figure(w, "forwarded"), w.lease + " s"]));
}

async function pollReports() {
  try {
    const frontier = await getJSON("api/frontier?top=15");
    table("queue-states", ["state", "queues", "URLs"],
          Object.entries(frontier.by_state).map(([s, e]) => [s, number.format(e.queues), number.format(e.urls)]));
    table("largest", ["queue", "state", "pending", "fetched", "next fetch"],
          frontier.largest.map((q) => [q.queue, q.state, number.format(q.pending), number.format(q.fetched),
                                       nextFetch(q.next_fetch)]));
    const hosts = await getJSON("api/hosts?limit=15");
    table("hosts", ["host", "fetched", "errors", "bytes", "precluded", "robots.txt", "budget used / left"],
          hosts.map((h) => [h.host, number.format(h.fetched), number.format(h.errors), bytes(h.bytes), h.precluded,
                            h.robots === null ? "-" : `${h.robots} (${h.robots_code})`, budget(h)]));
    showCluster(await getJSON("api/cluster"));
    const filter = encodeURIComponent($("log-filter").value);
    $("log").textContent = (await getJSON(`api/log?limit=40&contains=${filter}`)).join("\n");
  } catch (error) {
    setText("message", String(error));
  }
}

async function poll() {
  try {
    showFigures(await getJSON("api/figures"));
  } catch (error) {
    $("status").textContent = "unreachable";
    $("status").className = "status stopped";
  }
}

poll();
pollReports();
setInterval(poll, FIGURES_EVERY_MS);
setInterval(pollReports, REPORTS_EVERY_MS);
