// Script of /studio/subscriptions?database= (CSP: no inline script). One request per refresh:
// GET /databases/{db}/subscriptions?pendingLimit=2000 gives every definition, its position, its
// workers and the matching documents after its position, counted in at most 2,000 documents read
// (so a subscription far behind on a large collection costs a bounded scan; "n+" then).
"use strict";
(() => {
  const { el, api, db, format } = Studio;
  const PendingLimit = 2000;
  const RefreshMs = 2000;

  const list = document.getElementById("subscriptions");
  const empty = document.getElementById("empty");
  const updated = document.getElementById("updated");
  let refreshing = false;
  let firstLoad = true;
  let rendered = new Map();

  const pending = (s) => s.PendingDocumentsExact
    ? format.number(s.PendingDocuments)
    : el("span", { title: `Counted in the first ${format.number(PendingLimit)} documents after the position: there are more` }, format.number(s.PendingDocuments) + "+");

  const state = (s) => s.Disabled
    ? el("span", { class: "badge bad" }, "disabled")
    : s.Workers.length ? el("span", { class: "badge ok" }, "connected") : el("span", { class: "badge" }, "idle");

  const workers = (s) => s.Workers.length === 0
    ? el("span", { class: "muted" }, "none")
    : el("ul", { class: "plain" }, s.Workers.map(w => {
      const held = w.Held.reduce((sum, h) => sum + h.Documents, 0);
      return el("li", { class: "worker", dataset: { address: w.Address } },
        el("code", null, w.Address), " ", w.Strategy, " · connected ", format.ago(w.Since),
        held ? ` · ${format.number(held)} document${held === 1 ? "" : "s"} in hand` : "");
    }));

  const action = (label, title, run, className) => el("button", {
    type: "button", title, class: className, dataset: { action: label.toLowerCase() },
    onclick: async (event) => {
      event.stopPropagation();
      const button = event.currentTarget;
      button.disabled = true;
      try { await run(); await refresh(); } catch (e) { Studio.error(e); } finally { button.disabled = false; }
    },
  }, label);

  const path = (what) => db() + "/subscriptions" + (what ? "/" + what : "");

  const actions = (s) => el("div", { class: "actions" },
    s.Disabled
      ? action("Enable", "Let workers connect again", () => api("POST", path("enable"), { query: { name: s.SubscriptionName } }))
      : action("Disable", "Close its workers and refuse them until enabled", () => api("POST", path("disable"), { query: { name: s.SubscriptionName } })),
    action("Drop", "Close its workers' connections (they may reconnect)", () => api("POST", path("drop"), { query: { name: s.SubscriptionName } })),
    action("Delete", "Delete the subscription and its position", async () => {
      if (!await Studio.confirmTyped(`Delete the subscription '${s.SubscriptionName}'? Its workers are closed and its position is lost.`, s.SubscriptionName)) return;
      await api("DELETE", path(), { query: { name: s.SubscriptionName } });
      Studio.message(`Subscription '${s.SubscriptionName}' deleted.`, "ok");
    }, "danger"));

  const columns = [
    { title: "Name", value: s => el("strong", null, s.SubscriptionName), class: "name" },
    { title: "Query", value: s => el("code", { class: "cell", title: s.Query }, s.Query), class: "query" },
    { title: "Created", value: s => el("span", { title: format.date(s.CreatedAt) }, format.ago(s.CreatedAt)), class: "created" },
    { title: "State", value: state, class: "state" },
    {
      title: "Position", class: "position", hint: "The acknowledged etag: everything up to it was delivered and acknowledged",
      value: s => el("span", null, el("span", { class: "etag" }, "etag " + format.number(s.AckedEtag)), el("br"),
        el("code", { class: "muted cell", title: s.ChangeVectorForNextBatchStartingPoint }, s.ChangeVectorForNextBatchStartingPoint || "")),
    },
    { title: "Not delivered", value: pending, class: "number pending", hint: "Matching documents after the acknowledged position" },
    { title: "Last acknowledged", value: s => s.LastBatchAckTime ? el("span", { title: format.date(s.LastBatchAckTime) }, format.ago(s.LastBatchAckTime)) : "never", class: "acked" },
    { title: "Workers", value: workers, class: "workers" },
    { title: "", value: actions },
  ];

  // Rows are replaced only when what they show changed, so a button is not swapped under the
  // pointer by a refresh that brought nothing new.
  const render = (results) => {
    empty.hidden = results.length > 0;
    const signature = (s) => JSON.stringify([s.Query, s.Disabled, s.AckedEtag, s.PendingDocuments, s.PendingDocumentsExact, s.LastBatchAckTime, s.Workers, s.ChangeVectorForNextBatchStartingPoint]);
    const names = results.map(s => s.SubscriptionName);
    const same = names.length === rendered.size && names.every(n => rendered.has(n));
    if (!same || !list.querySelector("table")) {
      list.replaceChildren(Studio.table(columns, results, { key: s => s.SubscriptionName }));
      rendered = new Map(results.map(s => [s.SubscriptionName, signature(s)]));
      return;
    }
    const body = list.querySelector("tbody");
    for (const s of results) {
      if (rendered.get(s.SubscriptionName) === signature(s)) continue;
      const fresh = Studio.table(columns, [s], { key: x => x.SubscriptionName }).querySelector("tbody tr");
      const old = [...body.rows].find(r => r.dataset.key === s.SubscriptionName);
      old.replaceWith(fresh);
      rendered.set(s.SubscriptionName, signature(s));
    }
  };

  const refresh = async () => {
    if (refreshing) return;
    refreshing = true;
    try {
      const { Results } = await api("GET", path(), { query: { pendingLimit: PendingLimit }, quiet: !firstLoad });
      firstLoad = false;
      render(Results);
      updated.textContent = "updated " + new Date().toLocaleTimeString();
      updated.dataset.at = String(Date.now());
    } catch (e) {
      Studio.error(e);
    } finally {
      refreshing = false;
    }
  };

  document.getElementById("create-button").addEventListener("click", async () => {
    const name = document.getElementById("create-name").value.trim();
    const query = document.getElementById("create-query").value.trim();
    if (!query) {
      Studio.message("A subscription needs a query, as: from Orders where Freight > 10", "error");
      return;
    }
    try {
      const created = await api("PUT", path(), { body: { Name: name || undefined, Query: query, ChangeVector: document.getElementById("create-start").value } });
      Studio.message(`Subscription '${created.Name}' created. A worker connects to ${location.origin.replace(/^http/, "ws")}${path("connect")}?name=${encodeURIComponent(created.Name)}`, "ok");
      document.getElementById("create-name").value = "";
      await refresh();
    } catch (e) {
      Studio.error(e);
    }
  });

  Studio.requireDatabase().then(ok => {
    if (!ok) return;
    document.getElementById("list").hidden = false;
    document.getElementById("create-section").hidden = false;
    refresh();
    setInterval(() => { if (document.visibilityState === "visible") refresh(); }, RefreshMs);
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") refresh(); });
  });
})();
