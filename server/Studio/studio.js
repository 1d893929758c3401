// The studio's shared script (/studio/studio.js), loaded before each page's own script. It draws
// the header and navigation, talks to the server's public HTTP API and shows, for every call, the
// curl line that does the same. Text from the server always goes into the page as text nodes.
"use strict";

const Studio = (() => {
  const pages = [
    { page: "index", title: "Databases", database: false },
    { page: "documents", title: "Documents", database: true },
    { page: "query", title: "Query", database: true },
    { page: "indexes", title: "Indexes", database: true },
    { page: "patch", title: "Patch", database: true },
    { page: "subscriptions", title: "Subscriptions", database: true },
    { page: "backups", title: "Backups", database: true },
    { page: "certificates", title: "Certificates", database: false },
    { page: "traffic", title: "Traffic", database: false },
    { page: "indexing-performance", title: "Indexing performance", database: true },
  ];

  const params = new URLSearchParams(location.search);
  const database = params.get("database") || null;

  class ApiError extends Error {
    constructor(status, type, message, body, response) {
      super(message);
      this.name = "ApiError";
      this.status = status;
      this.type = type;
      this.body = body;
      this.response = response;
    }
  }

  const el = (tag, attrs, ...children) => {
    const element = document.createElement(tag);
    if (attrs) {
      for (const [name, value] of Object.entries(attrs)) {
        if (value === undefined || value === null || value === false) continue;
        if (name === "class") element.className = value;
        else if (name === "dataset") Object.assign(element.dataset, value);
        else if (name === "text") element.textContent = value;
        else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
        else if (name === "value" || name === "checked" || name === "disabled" || name === "hidden" || name === "selected") element[name] = value;
        else element.setAttribute(name, value === true ? "" : String(value));
      }
    }
    append(element, children);
    return element;
  };

  const append = (parent, children) => {
    for (const child of children) {
      if (child === undefined || child === null || child === false) continue;
      if (Array.isArray(child)) append(parent, child);
      else parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return parent;
  };

  const quote = (value) => "'" + String(value).replace(/'/g, "'\\''") + "'";

  const buildUrl = (path, query) => {
    const url = new URL(path, location.origin);
    if (query) {
      for (const [name, value] of Object.entries(query)) {
        if (value === undefined || value === null) continue;
        if (Array.isArray(value)) value.forEach(v => url.searchParams.append(name, String(v)));
        else url.searchParams.append(name, String(value));
      }
    }
    return url;
  };

  // A JSON body with every "Password" member (any case, at any depth) shown as "***": the API bar
  // is on screen and its lines are copied around. Another body is returned as it is.
  const redact = (body) => {
    if (!/password/i.test(body)) return body;
    let parsed;
    try { parsed = JSON.parse(body); } catch { return body; }
    let hidden = false;
    const walk = (value) => {
      if (Array.isArray(value)) { value.forEach(walk); return; }
      if (!value || typeof value !== "object") return;
      for (const key of Object.keys(value)) {
        if (key.toLowerCase() === "password" && value[key] !== null && value[key] !== undefined) { value[key] = "***"; hidden = true; }
        else walk(value[key]);
      }
    };
    walk(parsed);
    return hidden ? JSON.stringify(parsed) : body;
  };

  const curl = (method, url, body, headers) => {
    const parts = ["curl -s"];
    if (method !== "GET") parts.push("-X " + method);
    for (const [name, value] of Object.entries(headers || {})) {
      if (name.toLowerCase() === "accept") continue;
      parts.push("-H " + quote(name + ": " + value));
    }
    if (typeof body === "string") {
      const safe = redact(body);
      const shown = safe.length > 2000 ? safe.slice(0, 2000) + "…" : safe;
      parts.push("-d " + quote(shown));
    } else if (body instanceof FormData) {
      for (const [name, value] of body.entries()) {
        parts.push("-F " + quote(name + (value instanceof Blob ? "=@" + (value.name || "file") : "=" + value)));
      }
    } else if (body instanceof Blob) {
      parts.push("--data-binary @" + quote(body.name || "file"));
    }
    parts.push(quote(url));
    return parts.join(" ");
  };

  const apiLines = [];
  const recordCall = (line, status) => {
    apiLines.unshift({ line, status });
    apiLines.length = Math.min(apiLines.length, 5);
    renderApiBar();
  };

  const renderApiBar = () => {
    const bar = document.getElementById("api-bar");
    if (!bar) return;
    bar.replaceChildren(...apiLines.map(({ line, status }) => el("div", { class: "line" },
      el("span", { class: "status" + (status >= 400 || status === 0 ? " bad" : ""), text: status ? String(status) : "…" }),
      el("code", { text: line }),
      el("button", { type: "button", title: "Copy this curl line", onclick: () => navigator.clipboard && navigator.clipboard.writeText(line) }, "copy"))));
  };

  const api = async (method, path, options = {}) => {
    const url = buildUrl(path, options.query);
    const headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    let body = options.body;
    if (body !== undefined && body !== null && typeof body === "object" && !(body instanceof Blob) && !(body instanceof FormData) && !(body instanceof ArrayBuffer)) {
      body = JSON.stringify(body);
      headers["Content-Type"] = headers["Content-Type"] || "application/json";
    } else if (typeof body === "string" && !headers["Content-Type"]) {
      headers["Content-Type"] = "application/json";
    }
    const line = curl(method, url.toString(), body, headers);
    let response;
    try {
      response = await fetch(url, { method, headers, body, signal: options.signal, credentials: "same-origin" });
    } catch (e) {
      if (!options.quiet) recordCall(line, 0);
      if (e.name === "AbortError") throw e;
      throw new ApiError(0, "NetworkError", `Could not reach the server for ${method} ${url.pathname}: ${e.message}`, null, null);
    }
    if (!options.quiet) recordCall(line, response.status);
    if (!response.ok && response.status !== 304) {
      const text = await response.text().catch(() => "");
      let parsed = null;
      try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
      const type = (parsed && (parsed.Type || parsed.type)) || "HttpError";
      const message = (parsed && (parsed.Message || parsed.message || parsed.Error)) || `${method} ${url.pathname} answered ${response.status} ${response.statusText}`;
      throw new ApiError(response.status, type, message, parsed, response);
    }
    if (options.raw) return response;
    if (response.status === 204 || response.status === 304) return null;
    const text = await response.text();
    if (!text) return null;
    try { return JSON.parse(text); } catch { return text; }
  };

  const pageLink = (page, extra) => {
    const query = new URLSearchParams();
    const db = extra && "database" in extra ? extra.database : database;
    if (db) query.set("database", db);
    for (const [name, value] of Object.entries(extra || {})) {
      if (name === "database" || value === undefined || value === null) continue;
      query.set(name, String(value));
    }
    const search = query.toString();
    return "/studio/" + (page === "index" ? "" : page) + (search ? "?" + search : "");
  };

  const messageArea = () => {
    let area = document.getElementById("message");
    if (!area) {
      area = el("div", { id: "message", class: "message", role: "status" });
      const main = document.querySelector("main");
      if (main) main.prepend(area); else document.body.prepend(area);
    }
    return area;
  };

  const message = (text, kind = "info", target) => {
    const area = target || messageArea();
    area.className = "message " + kind;
    area.textContent = text || "";
    return area;
  };

  const error = (e, target) => {
    if (e && e.name === "AbortError") return null;
    const text = e instanceof ApiError
      ? `${e.type}: ${e.message}` + (e.status ? ` (HTTP ${e.status})` : "")
      : (e && e.message) || String(e);
    return message(text, "error", target);
  };

  const clearMessage = (target) => message("", "info", target);

  const table = (columns, rows, options = {}) => {
    const head = el("tr", null, columns.map(c => el("th", { class: c.class, title: c.hint }, c.title)));
    const body = el("tbody", null, rows.map((row, index) => {
      const tr = el("tr", { class: options.onRow ? "clickable" : undefined, dataset: options.key ? { key: options.key(row) } : undefined },
        columns.map(c => {
          const value = c.value(row, index);
          return el("td", { class: c.class }, value instanceof Node ? value : value === undefined || value === null ? "" : String(value));
        }));
      if (options.onRow) tr.addEventListener("click", (event) => options.onRow(row, event, tr));
      return tr;
    }));
    return el("table", { class: options.class }, el("thead", null, head), body);
  };

  const confirmTyped = (text, expected) => new Promise(resolve => {
    const input = el("input", { type: "text", autocomplete: "off", "aria-label": "Type the name to confirm" });
    const ok = el("button", { type: "button", class: "danger", disabled: true }, "Delete");
    const cancel = el("button", { type: "button" }, "Cancel");
    const dialog = el("dialog", { class: "confirm" },
      el("p", null, text), el("p", { class: "muted" }, "Type ", el("code", { text: expected }), " to confirm."),
      el("div", { class: "row" }, input, ok, cancel));
    const close = (value) => { dialog.close(); dialog.remove(); resolve(value); };
    input.addEventListener("input", () => { ok.disabled = input.value !== expected; });
    input.addEventListener("keydown", (event) => { if (event.key === "Enter" && input.value === expected) close(true); });
    ok.addEventListener("click", () => close(true));
    cancel.addEventListener("click", () => close(false));
    dialog.addEventListener("cancel", () => close(false));
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });

  // A yes/no dialog (a plain confirm() would block the page and cannot be styled); resolves true
  // when the user presses the action button.
  const confirm = (text, action = "OK", danger = false) => new Promise(resolve => {
    const ok = el("button", { type: "button", class: danger ? "danger" : "primary" }, action);
    const cancel = el("button", { type: "button" }, "Cancel");
    const dialog = el("dialog", { class: "confirm" }, el("p", null, text), el("div", { class: "row" }, ok, cancel));
    const close = (value) => { dialog.close(); dialog.remove(); resolve(value); };
    ok.addEventListener("click", () => close(true));
    cancel.addEventListener("click", () => close(false));
    dialog.addEventListener("cancel", () => close(false));
    document.body.append(dialog);
    dialog.showModal();
    ok.focus();
  });

  const ws = (path, query) => {
    const url = buildUrl(path, query);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    return new WebSocket(url);
  };

  const format = {
    number: (n) => n === undefined || n === null ? "" : Number(n).toLocaleString("en-US"),
    bytes: (n) => {
      if (n === undefined || n === null) return "";
      const units = ["B", "KiB", "MiB", "GiB", "TiB"];
      let value = Number(n), unit = 0;
      while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
      return (unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)) + " " + units[unit];
    },
    ms: (n) => n === undefined || n === null ? "" : Number(n) < 10 ? Number(n).toFixed(2) + " ms" : Math.round(Number(n)).toLocaleString("en-US") + " ms",
    ago: (value) => {
      if (!value) return "never";
      const then = new Date(value).getTime();
      if (!isFinite(then)) return String(value);
      const seconds = Math.round((Date.now() - then) / 1000);
      if (seconds < 0) return "in " + format.duration(-seconds);
      return format.duration(seconds) + " ago";
    },
    duration: (seconds) => {
      if (seconds < 60) return seconds + " s";
      if (seconds < 3600) return Math.round(seconds / 60) + " min";
      if (seconds < 86400) return Math.round(seconds / 3600) + " h";
      return Math.round(seconds / 86400) + " d";
    },
    date: (value) => value ? new Date(value).toLocaleString() : "",
  };

  const header = () => {
    const current = document.body.dataset.page || "";
    const nav = el("nav", { "aria-label": "Studio pages" }, pages.map(p => {
      const needs = p.database && !database;
      return el("a", {
        href: pageLink(p.page),
        class: needs ? "disabled" : undefined,
        "aria-current": p.page === current || (current === "document" && p.page === "documents") ? "page" : undefined,
        title: needs ? "Choose a database first" : undefined,
      }, p.title);
    }));
    const chooser = el("select", { "aria-label": "Database", id: "database-chooser" }, el("option", { value: "" }, "(choose a database)"));
    chooser.addEventListener("change", () => {
      // The start page leads into the chosen database; every other page stays where it is.
      const page = !current || current === "index" || current === "document" ? "documents" : current;
      location.href = pageLink(page, { database: chooser.value || null });
    });
    const bar = el("header", { class: "studio" },
      el("a", { class: "brand", href: "/studio/" }, "Jackdaw"), nav,
      el("div", { class: "database" }, "Database", chooser));
    document.body.prepend(bar);
    if (!document.getElementById("api-bar")) document.body.append(el("div", { id: "api-bar", "aria-label": "The HTTP calls this page made, as curl lines" }));
    renderApiBar();
    api("GET", "/databases", { query: { namesOnly: true, pageSize: 1024 }, quiet: true }).then(({ Databases }) => {
      for (const name of Databases || []) chooser.append(el("option", { value: name, selected: name === database }, name));
      if (database && !(Databases || []).includes(database)) chooser.append(el("option", { value: database, selected: true }, database + " (unknown)"));
    }).catch(() => { /* the page says what failed when it needs the list itself */ });
  };

  // Resolves true when the page's ?database= names a database that exists; otherwise shows why
  // and resolves false.
  const requireDatabase = async () => {
    if (!database) {
      message("This page needs a database: choose one above, or add ?database=<name> to the address.", "error");
      return false;
    }
    try {
      await api("GET", `/databases/${encodeURIComponent(database)}/stats`, { quiet: true });
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.type === "DatabaseDoesNotExistException") {
        message(`There is no database '${database}' on this server. The Databases page lists them.`, "error");
      } else {
        error(e);
      }
      return false;
    }
  };

  // For a page that reads its data at once instead of calling requireDatabase first (one round
  // trip less): true, after saying so, when the error is the server's "no such database".
  const databaseMissing = (e) => {
    if (!(e instanceof ApiError && e.type === "DatabaseDoesNotExistException")) return false;
    message(`There is no database '${database}' on this server. The Databases page lists them.`, "error");
    return true;
  };

  const db = () => "/databases/" + encodeURIComponent(database);

  const debounce = (fn, ms) => {
    let timer = 0;
    return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
  };

  const download = (blob, fileName) => {
    const url = URL.createObjectURL(blob);
    const link = el("a", { href: url, download: fileName });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  // The place a server's error message names in a text the page sent: RQL's "at position N
  // (line L, column C)" (an offset into the whole text) or a script's "(line L, column C)",
  // counted from `base` (where the script starts in the text). Null when it names none.
  const errorPosition = (messageText, text, base = 0) => {
    const rql = /position (\d+) \(line (\d+), column (\d+)\)/.exec(messageText || "");
    if (rql) return { offset: Math.min(Number(rql[1]), text.length), line: Number(rql[2]), column: Number(rql[3]) };
    const script = /\bline (\d+), column (\d+)\b/.exec(messageText || "");
    if (!script) return null;
    const lines = text.slice(base).split("\n");
    const line = Math.min(Number(script[1]), lines.length);
    let offset = base;
    for (let i = 0; i < line - 1; i++) offset += lines[i].length + 1;
    offset = Math.min(offset + Number(script[2]) - 1, text.length);
    const before = text.slice(0, offset).split("\n");
    return { offset, line: before.length, column: before[before.length - 1].length + 1 };
  };

  // Marks a position in a textarea: selects the word there and writes the position's line with a
  // caret line under it into `caretTarget` (a <pre>, shown). Hides it for a null position.
  const markPosition = (textarea, caretTarget, position) => {
    if (!position) {
      caretTarget.hidden = true;
      caretTarget.textContent = "";
      return;
    }
    const text = textarea.value;
    const start = position.offset;
    let end = start;
    while (end < text.length && !/[\s,()=<>!{}]/.test(text[end])) end++;
    if (end === start && end < text.length) end++;
    textarea.focus();
    textarea.setSelectionRange(start, end);
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    const lineEnd = text.indexOf("\n", start);
    const line = text.slice(lineStart, lineEnd < 0 ? text.length : lineEnd);
    const pad = Array.from(text.slice(lineStart, start), c => c === "\t" ? "\t" : " ").join("");
    caretTarget.textContent = `line ${position.line}, column ${position.column}\n${line}\n${pad}${"^".repeat(Math.max(1, Math.min(end, lineStart + line.length) - start))}`;
    caretTarget.hidden = false;
  };

  document.addEventListener("DOMContentLoaded", header);

  return { pages, database, db, ApiError, el, append, api, curl, recordCall, pageLink, message, error, clearMessage, table, confirmTyped, confirm, ws, format, requireDatabase, databaseMissing, debounce, download, errorPosition, markPosition };
})();
