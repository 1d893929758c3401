// Script of /studio/query (CSP: no inline script). Runs RQL with POST /databases/{db}/queries,
// paging with ?start=&pageSize= and asking the server's timings with ?timings=true, so the query
// text is sent exactly as typed.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const $ = (id) => document.getElementById(id);
  const HistorySize = 20;
  const MaxColumns = 24;
  const historyKey = () => "jackdaw.query.history." + Studio.database;

  const state = { text: "", start: 0, pageSize: 50, view: "table", answer: null, running: null };

  const readHistory = () => {
    try {
      const list = JSON.parse(localStorage.getItem(historyKey()) || "[]");
      return Array.isArray(list) ? list.filter(q => typeof q === "string") : [];
    } catch {
      return [];
    }
  };

  const remember = (text) => {
    const list = [text, ...readHistory().filter(q => q !== text)].slice(0, HistorySize);
    try { localStorage.setItem(historyKey(), JSON.stringify(list)); } catch { /* storage full or off: history is a convenience */ }
    renderHistory();
  };

  const renderHistory = () => {
    const list = readHistory();
    const select = $("history");
    select.replaceChildren(el("option", { value: "" }, list.length ? `Recent queries (${list.length})…` : "No recent queries"),
      ...list.map((q, i) => el("option", { value: String(i), title: q }, q.replace(/\s+/g, " ").slice(0, 120))));
  };

  // A cell: text as is, other values as compact JSON.
  const cell = (value) => {
    if (value === undefined) return "";
    if (value === null) return el("span", { class: "muted" }, "null");
    const text = typeof value === "object" ? JSON.stringify(value) : String(value);
    return el("div", { class: "cell", title: text.length > 60 ? text.slice(0, 2000) : undefined }, text);
  };

  const renderTable = (results) => {
    const names = [];
    for (const row of results) {
      if (!row || typeof row !== "object") continue;
      for (const name of Object.keys(row)) {
        if (name !== "@metadata" && !names.includes(name) && names.length < MaxColumns) names.push(name);
      }
    }
    const idOf = (row) => row && row["@metadata"] && row["@metadata"]["@id"];
    const columns = [];
    if (results.some(idOf)) {
      columns.push({
        title: "Id", class: "mono",
        value: row => idOf(row) ? el("a", { href: Studio.pageLink("document", { id: idOf(row) }) }, idOf(row)) : "",
      });
    }
    for (const name of names) columns.push({ title: name, value: row => cell(row ? row[name] : undefined) });
    if (!results.length) return el("p", { class: "muted" }, "No results on this page.");
    return Studio.table(columns, results, { class: "results", key: row => idOf(row) || "" });
  };

  const renderTimings = (timings) => {
    if (!timings || !timings.Timings) return "";
    const parts = Object.entries(timings.Timings).map(([name, stage]) => {
      const inner = stage && stage.Timings ? Object.entries(stage.Timings).map(([n, s]) => `${n} ${format.ms(s.DurationInMs)}`).join(", ") : "";
      return `${name} ${format.ms(stage && stage.DurationInMs)}${inner ? ` (${inner})` : ""}`;
    });
    return "Timings: " + parts.join(" · ");
  };

  const render = () => {
    const answer = state.answer;
    if (!answer) return;
    $("results").hidden = false;
    $("total").textContent = format.number(answer.TotalResults);
    $("index-name").textContent = answer.IndexName || "";
    const stale = $("stale");
    stale.textContent = answer.IsStale ? "stale" : "not stale";
    stale.className = "badge " + (answer.IsStale ? "warn" : "ok");
    stale.dataset.stale = String(!!answer.IsStale);
    $("duration").textContent = format.ms(answer.DurationInMs);
    $("timings").textContent = renderTimings(answer.Timings);
    const results = answer.Results || [];
    $("table").replaceChildren(renderTable(results));
    $("json").textContent = JSON.stringify(results, null, 2);
    $("table").hidden = state.view !== "table";
    $("json").hidden = state.view !== "json";
    $("view-table").setAttribute("aria-selected", String(state.view === "table"));
    $("view-json").setAttribute("aria-selected", String(state.view === "json"));
    const total = Number(answer.TotalResults) || 0;
    const first = results.length ? state.start + 1 : 0;
    $("page-info").textContent = results.length
      ? `${format.number(first)}–${format.number(state.start + results.length)} of ${format.number(total)}`
      : `none of ${format.number(total)}`;
    $("prev").disabled = state.start === 0;
    $("next").disabled = state.start + results.length >= total || results.length < state.pageSize;
  };

  const run = async (start) => {
    const textarea = $("rql");
    const text = textarea.value;
    if (!text.trim()) {
      Studio.message("Write a query first, e.g. from Orders where Freight > 100.", "info");
      return;
    }
    if (state.running) state.running.abort();
    const controller = new AbortController();
    state.running = controller;
    state.text = text;
    state.start = start;
    state.pageSize = Number($("page-size").value) || 50;
    Studio.markPosition(textarea, $("caret"), null);
    Studio.message("Running…", "info");
    $("run").disabled = true;
    const wait = $("wait").checked;
    try {
      const answer = await api("POST", `${Studio.db()}/queries`, {
        query: { start: state.start || undefined, pageSize: state.pageSize, timings: true },
        body: { Query: text, WaitForNonStaleResults: wait, WaitForNonStaleResultsTimeout: wait ? "00:00:30" : undefined },
        signal: controller.signal,
      });
      state.answer = answer;
      Studio.clearMessage();
      remember(text);
      render();
    } catch (e) {
      if (e.name === "AbortError") return;
      Studio.error(e);
      if (e instanceof Studio.ApiError) Studio.markPosition(textarea, $("caret"), Studio.errorPosition(e.message, text));
    } finally {
      if (state.running === controller) {
        state.running = null;
        $("run").disabled = false;
      }
    }
  };

  const wire = () => {
    const textarea = $("rql");
    textarea.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        run(0);
      }
    });
    textarea.addEventListener("input", () => Studio.markPosition(textarea, $("caret"), null));
    $("run").addEventListener("click", () => run(0));
    $("history").addEventListener("change", (event) => {
      const list = readHistory();
      const picked = list[Number(event.target.value)];
      if (event.target.value !== "" && picked !== undefined) {
        textarea.value = picked;
        Studio.markPosition(textarea, $("caret"), null);
        textarea.focus();
      }
      event.target.value = "";
    });
    // Paging re-runs the query that produced the page shown, not what the editor holds now.
    $("prev").addEventListener("click", () => { $("rql").value = state.text; run(Math.max(0, state.start - state.pageSize)); });
    $("next").addEventListener("click", () => { $("rql").value = state.text; run(state.start + state.pageSize); });
    $("page-size").addEventListener("change", () => { if (state.answer) run(0); });
    $("view-table").addEventListener("click", () => { state.view = "table"; render(); });
    $("view-json").addEventListener("click", () => { state.view = "json"; render(); });
  };

  document.addEventListener("DOMContentLoaded", async () => {
    if (!await Studio.requireDatabase()) return;
    $("editor").hidden = false;
    wire();
    renderHistory();
    const last = readHistory()[0];
    if (last) $("rql").value = last;
    $("rql").focus();
  });
})();
