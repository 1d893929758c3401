// Script of /studio/traffic (CSP: no inline script). The requests come from the traffic-watch
// WebSocket, one JSON message each ({"HttpMethod","RequestUri","ResponseStatusCode",...}, or
// {"Type":"Dropped","Count"} when the server dropped some for a slow reader). The page keeps the
// last 1,000, newest first, and filters them in place; pausing stops the list, not the feed.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const MaxRows = 1000;

  const tbody = document.querySelector("#requests tbody");
  const statusBadge = document.getElementById("status");
  const pauseButton = document.getElementById("pause");
  const reconnectButton = document.getElementById("reconnect");
  const countsText = document.getElementById("counts");
  const droppedBadge = document.getElementById("dropped");
  const filters = {
    database: document.getElementById("filter-database"),
    method: document.getElementById("filter-method"),
    status: document.getElementById("filter-status"),
    path: document.getElementById("filter-path"),
  };

  // Kept requests, oldest first: { change, row }.
  const kept = [];
  // Arrived but not yet drawn (drawn once per animation frame, or on resume).
  let pending = [];
  let paused = false;
  let dropped = 0;
  let socket = null;
  const databasesSeen = new Set();

  const watchUrl = () => {
    const url = new URL("/admin/traffic-watch", location.origin);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    return url.toString();
  };

  const setStatus = (state, text) => {
    statusBadge.dataset.state = state;
    statusBadge.textContent = text;
    statusBadge.className = "badge" + (state === "live" ? " ok" : state === "error" ? " bad" : state === "paused" ? " warn" : "");
  };

  const statusClass = (code) => {
    if (code >= 500) return "bad";
    if (code >= 400) return "warn";
    if (code >= 200 && code < 300) return "ok";
    return "";
  };

  const matches = (change) => {
    const database = filters.database.value;
    if (database === "-" && change.DatabaseName) return false;
    if (database && database !== "-" && (change.DatabaseName || "").toLowerCase() !== database.toLowerCase()) return false;
    if (filters.method.value && change.HttpMethod !== filters.method.value) return false;
    const status = filters.status.value;
    if (status) {
      const first = String(Math.floor(change.ResponseStatusCode / 100));
      if (!status.includes(first)) return false;
    }
    const text = filters.path.value.trim().toLowerCase();
    if (text && !(change.RequestUri || "").toLowerCase().includes(text)) return false;
    return true;
  };

  // Whole milliseconds, as the server measures them (format.ms would show 0.00).
  const ms = (n) => n === null || n === undefined ? "" : format.number(n) + " ms";

  // The style sheet gives buttons and badges a display, which the hidden attribute does not override.
  const show = (element, visible) => { element.style.display = visible ? "" : "none"; };

  const size = (n) => n === null || n === undefined ? "—" : format.bytes(n);

  const time = (value) => {
    const date = new Date(value);
    if (!isFinite(date.getTime())) return String(value);
    const pad = (n, width = 2) => String(n).padStart(width, "0");
    return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
  };

  const rowOf = (change) => el("tr", {
    dataset: { method: change.HttpMethod, status: String(change.ResponseStatusCode), database: change.DatabaseName || "", uri: change.RequestUri },
  },
  el("td", { class: "mono", title: change.TimeStamp }, time(change.TimeStamp)),
  el("td", { class: "mono" }, change.HttpMethod),
  el("td", { class: "mono cell", title: change.AbsoluteUri }, change.RequestUri),
  el("td", { class: "number" }, el("span", { class: "badge " + statusClass(change.ResponseStatusCode) }, String(change.ResponseStatusCode))),
  el("td", { class: "number" }, ms(change.ElapsedMilliseconds)),
  el("td", null, change.DatabaseName || el("span", { class: "muted" }, "(server)")),
  el("td", { class: "muted" }, change.Type === "None" ? "" : change.Type),
  el("td", { class: "number" }, size(change.RequestSizeInBytes) + " / " + size(change.ResponseSizeInBytes)));

  const updateCounts = () => {
    let shown = 0;
    for (const item of kept) if (!item.row.hidden) shown++;
    countsText.textContent = `${format.number(shown)} shown of ${format.number(kept.length)} kept (the last ${format.number(MaxRows)})` +
      (paused && pending.length ? `; ${format.number(pending.length)} arrived while paused` : "");
    show(droppedBadge, dropped > 0);
    droppedBadge.textContent = `${format.number(dropped)} dropped by the server: this page did not keep up`;
  };

  const addDatabaseOption = (name) => {
    if (!name || databasesSeen.has(name.toLowerCase())) return;
    databasesSeen.add(name.toLowerCase());
    filters.database.append(el("option", { value: name }, name));
  };

  const draw = () => {
    const batch = pending.length > MaxRows ? pending.slice(pending.length - MaxRows) : pending;
    pending = [];
    const rows = [];
    for (const change of batch) {
      const row = rowOf(change);
      row.hidden = !matches(change);
      kept.push({ change, row });
      rows.push(row);
      addDatabaseOption(change.DatabaseName);
    }
    // Newest first.
    tbody.prepend(...rows.reverse());
    while (kept.length > MaxRows) kept.shift().row.remove();
    updateCounts();
  };

  let frame = 0;
  const scheduleDraw = () => {
    if (paused || frame) return;
    frame = requestAnimationFrame(() => { frame = 0; draw(); });
  };

  const receive = (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch { return; }
    if (message.Type === "Dropped") {
      dropped += Number(message.Count) || 0;
      updateCounts();
      return;
    }
    pending.push(message);
    // While paused the list stands still; what arrives meanwhile is bounded like the list.
    if (pending.length > MaxRows) pending.splice(0, pending.length - MaxRows);
    if (paused) updateCounts(); else scheduleDraw();
  };

  const connect = () => {
    show(reconnectButton, false);
    setStatus("connecting", "connecting…");
    const url = watchUrl();
    Studio.recordCall("# a WebSocket, no curl equivalent: " + url, 101);
    socket = Studio.ws("/admin/traffic-watch");
    socket.addEventListener("open", () => {
      Studio.clearMessage();
      setStatus(paused ? "paused" : "live", paused ? "paused" : "live");
    });
    socket.addEventListener("message", receive);
    socket.addEventListener("close", (event) => {
      socket = null;
      show(reconnectButton, true);
      if (event.code === 1006) {
        setStatus("error", "not connected");
        Studio.message("The traffic watch did not connect: the server refused it (a secured server needs a certificate with Operator clearance) or cannot be reached.", "error");
      } else {
        setStatus("closed", "closed");
      }
    });
  };

  const refilter = () => {
    for (const item of kept) item.row.hidden = !matches(item.change);
    updateCounts();
  };

  pauseButton.addEventListener("click", () => {
    paused = !paused;
    pauseButton.textContent = paused ? "Resume" : "Pause";
    if (socket && socket.readyState === WebSocket.OPEN) setStatus(paused ? "paused" : "live", paused ? "paused" : "live");
    if (!paused) draw(); else updateCounts();
  });
  document.getElementById("clear").addEventListener("click", () => {
    kept.length = 0;
    pending = [];
    dropped = 0;
    tbody.replaceChildren();
    updateCounts();
  });
  reconnectButton.addEventListener("click", connect);
  for (const input of [filters.database, filters.method, filters.status]) input.addEventListener("change", refilter);
  filters.path.addEventListener("input", Studio.debounce(refilter, 150));

  document.getElementById("watch-url").textContent = watchUrl();
  updateCounts();
  connect();

  // The slow-query log of one database (the page's ?database=, or the one chosen here).
  const slowDatabase = document.getElementById("slow-database");
  const slowMessage = document.getElementById("slow-message");
  const slowSummary = document.getElementById("slow-summary");
  const slowResults = document.getElementById("slow-results");
  const slowPath = () => `/databases/${encodeURIComponent(slowDatabase.value)}/queries/slow`;

  const slowTable = (entries) => Studio.table([
    { title: "At", value: e => el("span", { title: format.date(e.At) }, format.ago(e.At)) },
    { title: "Duration", class: "number", value: e => ms(e.DurationInMs) },
    { title: "Query", value: e => el("code", { class: "mono" }, e.Query) },
    { title: "Parameters", value: e => Object.keys(e.QueryParameters || {}).map(name => "$" + name + " = " + e.QueryParameters[name]).join(", ") },
    { title: "Index", value: e => e.IndexName === null ? el("span", { class: "muted" }, "(not modified)") : e.IndexName },
    { title: "Stale", value: e => e.IsStale === null ? "" : el("span", { class: "badge" + (e.IsStale ? " warn" : "") }, e.IsStale ? "stale" : "no") },
    { title: "Results", class: "number", value: e => e.TotalResults === null ? "" : format.number(e.TotalResults) },
    { title: "Timings", value: e => e.Timings ? el("details", null, el("summary", null, ms(e.Timings.DurationInMs)), el("pre", null, JSON.stringify(e.Timings.Timings, null, 2))) : "" },
  ], entries, { class: "slow-queries" });

  const loadSlow = async () => {
    Studio.clearMessage(slowMessage);
    slowResults.replaceChildren();
    slowSummary.textContent = "";
    if (!slowDatabase.value) {
      Studio.message("Choose a database to see its slow queries.", "info", slowMessage);
      return;
    }
    try {
      const log = await api("GET", slowPath());
      const results = log.Results || [];
      slowSummary.textContent = `${format.number(results.length)} ${results.length === 1 ? "query" : "queries"} that took at least ${ms(log.ThresholdMs)} (Queries:SlowQueryThresholdMs), newest first; parameter values are never kept.`;
      slowResults.replaceChildren(results.length ? slowTable(results) : el("p", { class: "muted" }, "No slow query yet."));
    } catch (e) {
      Studio.error(e, slowMessage);
    }
  };

  const chooseSlowDatabase = () => {
    const url = new URL(location.href);
    if (slowDatabase.value) url.searchParams.set("database", slowDatabase.value); else url.searchParams.delete("database");
    history.replaceState(null, "", url);
    loadSlow();
  };

  slowDatabase.addEventListener("change", chooseSlowDatabase);
  document.getElementById("slow-refresh").addEventListener("click", loadSlow);
  document.getElementById("slow-clear").addEventListener("click", async () => {
    if (!slowDatabase.value) return;
    try {
      await api("DELETE", slowPath());
      await loadSlow();
    } catch (e) {
      Studio.error(e, slowMessage);
    }
  });

  (async () => {
    let names = [];
    try {
      const answer = await api("GET", "/databases", { query: { namesOnly: true, pageSize: 1024 } });
      names = answer.Databases || [];
    } catch (e) {
      Studio.error(e, slowMessage);
    }
    for (const name of names) {
      slowDatabase.append(el("option", { value: name }, name));
      addDatabaseOption(name);
    }
    if (Studio.database) {
      if (!names.includes(Studio.database)) slowDatabase.append(el("option", { value: Studio.database }, Studio.database));
      slowDatabase.value = Studio.database;
    }
    await loadSlow();
  })();
})();
