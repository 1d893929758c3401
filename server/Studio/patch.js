// Script of /studio/patch (CSP: no inline script). A script is either RQL ending in
// `update { ... }` (a patch by query: PATCH /databases/{db}/queries, an operation followed with
// GET /operations/state?id=) or a JavaScript body for one document (PATCH /docs?id=). "Test" runs
// the body on one document with ?test=true: the server patches it in a transaction it rolls back
// and answers the document before and after.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const $ = (id) => document.getElementById(id);
  const PollMs = 250;

  const state = { operation: null, polling: 0 };

  // The script's parts: for RQL, the update body (where it starts in the text, as the server's
  // line numbers count from there) and the query's alias of the document.
  const parse = (text) => {
    if (!/^\s*(from|declare)\b/i.test(text)) return { rql: false, body: text, bodyStart: 0, alias: null };
    let quote = null;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quote) {
        if (c === "\\") i++;
        else if (c === quote) quote = null;
        continue;
      }
      if (c === "'" || c === "\"") { quote = c; continue; }
      const match = /^update\s*\{/i.exec(text.slice(i, i + 64));
      if (match && (i === 0 || !/[\w$]/.test(text[i - 1]))) {
        const bodyStart = i + match[0].length;
        const end = text.lastIndexOf("}");
        const alias = /^\s*from\s+(?:index\s+)?(?:'[^']*'|"[^"]*"|[^\s]+)\s+as\s+([A-Za-z_$][\w$]*)/i.exec(text);
        return { rql: true, body: text.slice(bodyStart, end > bodyStart ? end : text.length), bodyStart, alias: alias ? alias[1] : null };
      }
    }
    return { rql: true, body: null, bodyStart: 0, alias: null };
  };

  const parameters = () => {
    const text = $("parameters").value.trim();
    if (!text) return {};
    let value;
    try { value = JSON.parse(text); } catch (e) { throw new Error("Parameters must be a JSON object: " + e.message); }
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("Parameters must be a JSON object, such as {\"country\": \"France\"}.");
    return value;
  };

  const showError = (e, script, prefix) => {
    Studio.error(e);
    if (!(e instanceof Studio.ApiError)) return;
    let text = e.message;
    // The test run declares the query's alias at the start of the body's first line.
    if (prefix) text = text.replace(/\bline 1, column (\d+)\b/, (_, c) => `line 1, column ${Math.max(1, Number(c) - prefix.length)}`);
    Studio.markPosition($("script"), $("caret"), Studio.errorPosition(text, $("script").value, script.bodyStart));
  };

  // Lines of `before` and `after` marked where they differ (a longest common subsequence of lines).
  const diff = (before, after) => {
    const a = before.split("\n"), b = after.split("\n");
    if (a.length * b.length > 4_000_000) return { a: a.map(() => false), b: b.map(() => false) };
    const table = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    const changedA = a.map(() => true), changedB = b.map(() => true);
    for (let i = 0, j = 0; i < a.length && j < b.length;) {
      if (a[i] === b[j]) { changedA[i++] = false; changedB[j++] = false; }
      else if (table[i + 1][j] >= table[i][j + 1]) i++;
      else j++;
    }
    return { a: changedA, b: changedB, linesA: a, linesB: b };
  };

  const showLines = (target, lines, changed, kind) => {
    target.replaceChildren(...lines.map((line, i) => el("div", { class: changed[i] ? kind : undefined }, line || " ")));
  };

  const test = async () => {
    const text = $("script").value;
    const script = parse(text);
    const id = $("test-id").value.trim();
    Studio.markPosition($("script"), $("caret"), null);
    if (!id) { Studio.message("Give the id of a document to test the script on.", "error"); return; }
    if (script.body === null) { Studio.message("A patch by query ends with update { ... }: the script to run on each document.", "error"); return; }
    const prefix = script.alias ? `var ${script.alias} = this; ` : "";
    try {
      const answer = await api("PATCH", `${Studio.db()}/docs`, {
        query: { id, test: true, debug: true },
        body: { Patch: { Script: prefix + script.body, Values: parameters() } },
      });
      Studio.clearMessage();
      $("test-doc").textContent = id;
      $("test-status").textContent = answer.Status;
      $("test-status").className = "badge " + (answer.Status === "Patched" ? "ok" : "");
      const before = JSON.stringify(answer.OriginalDocument, null, 2) || "";
      const after = JSON.stringify(answer.ModifiedDocument, null, 2) || "";
      const changes = diff(before, after);
      showLines($("before"), before.split("\n"), changes.a, "diff-del");
      showLines($("after"), after.split("\n"), changes.b, "diff-add");
      const info = answer.Debug && answer.Debug.Info;
      $("debug").replaceChildren(info && info.length ? el("div", {}, el("h2", {}, "Output"), el("pre", {}, info.join("\n"))) : "");
      $("test-result").hidden = false;
    } catch (e) {
      if (e instanceof Studio.ApiError && e.status === 404) Studio.message(`There is no document '${id}'.`, "error");
      else showError(e, script, prefix);
    }
  };

  const run = async () => {
    const text = $("script").value;
    const script = parse(text);
    Studio.markPosition($("script"), $("caret"), null);
    if (!text.trim()) { Studio.message("Write a script first.", "info"); return; }
    try {
      if (!script.rql) {
        const id = $("test-id").value.trim();
        if (!id) { Studio.message("A JavaScript body patches one document: give its id (or write from ... update { ... } to patch by query).", "error"); return; }
        const answer = await api("PATCH", `${Studio.db()}/docs`, { query: { id }, body: { Patch: { Script: script.body, Values: parameters() } } });
        Studio.message(`'${id}': ${answer.Status}.`, "ok");
        return;
      }
      const allowStale = $("allow-stale").checked;
      const { OperationId } = await api("PATCH", `${Studio.db()}/queries`, {
        query: { allowStale, staleTimeout: allowStale ? undefined : "00:00:30" },
        body: { Query: { Query: text, QueryParameters: parameters() } },
      });
      Studio.clearMessage();
      follow(OperationId);
    } catch (e) {
      showError(e, script, "");
    }
  };

  const follow = (id) => {
    clearTimeout(state.polling);
    state.operation = id;
    $("operation").hidden = false;
    $("operation-id").textContent = String(id);
    $("operation-result").textContent = "";
    $("kill").hidden = false;
    poll(id);
  };

  const poll = async (id) => {
    if (state.operation !== id) return;
    let answer;
    try {
      answer = await api("GET", `${Studio.db()}/operations/state`, { query: { id }, quiet: true });
    } catch (e) {
      Studio.error(e);
      return;
    }
    const status = answer.Status;
    const badge = $("operation-status");
    badge.textContent = status;
    badge.className = "badge " + (status === "Completed" ? "ok" : status === "InProgress" ? "warn" : "bad");
    badge.dataset.status = status;
    if (status === "InProgress") {
      const progress = answer.Progress || {};
      const total = Number(progress.Total) || 0, done = Number(progress.Processed) || 0;
      $("operation-bar").style.width = (total ? Math.min(100, done * 100 / total) : 0) + "%";
      $("operation-counts").textContent = `${format.number(done)} of ${format.number(total)} documents`;
      state.polling = setTimeout(() => poll(id), PollMs);
      return;
    }
    $("kill").hidden = true;
    const result = answer.Result || {};
    if (status === "Completed") {
      $("operation-bar").style.width = "100%";
      $("operation-counts").textContent = `${format.number(result.Total)} documents`;
      $("operation-result").textContent = `Done: ${format.number(result.Total)} documents patched.`;
      $("operation-result").dataset.total = String(result.Total);
    } else {
      $("operation-result").textContent = status === "Canceled" ? `Stopped after ${format.number(result.Total)} documents.` : `${result.Type || "Error"}: ${result.Message || result.Error || ""}`;
    }
  };

  document.addEventListener("DOMContentLoaded", async () => {
    if (!await Studio.requireDatabase()) return;
    $("editor").hidden = false;
    $("test").addEventListener("click", test);
    $("run").addEventListener("click", run);
    $("kill").addEventListener("click", async () => {
      try {
        await api("POST", `${Studio.db()}/operations/kill`, { query: { id: state.operation } });
      } catch (e) {
        Studio.error(e);
      }
    });
    $("script").addEventListener("input", () => Studio.markPosition($("script"), $("caret"), null));
    $("script").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); test(); }
    });
    const id = new URLSearchParams(location.search).get("id");
    if (id) $("test-id").value = id;
    $("script").focus();
  });
})();
