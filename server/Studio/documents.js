// Script of /studio/documents (CSP: no inline script). The first view reads the collection counts
// and one page of the chosen collection: never a whole collection, whatever its size.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const $ = (id) => document.getElementById(id);
  const ALL = null; // the "All documents" entry: GET /docs, newest change first
  const DEFAULT_COLUMNS = 5;
  const params = new URLSearchParams(location.search);

  const state = {
    collection: params.get("collection") || ALL,
    start: Math.max(0, Number(params.get("start")) || 0),
    pageSize: [25, 50, 100].includes(Number(params.get("pageSize"))) ? Number(params.get("pageSize")) : 50,
    // By etag: newest change first (desc) or oldest first (asc); a collection's only, All
    // documents (GET /docs) are listed newest first.
    order: params.get("order") === "asc" ? "asc" : "desc",
    counts: { all: 0, collections: {} },
    documents: [],
    columns: [],
    selected: new Set(),
    loading: null, // AbortController of the page being read
  };

  const storageKey = () => `jackdaw.studio.columns.${Studio.database}.${state.collection === ALL ? "@all" : state.collection}`;
  const savedColumns = () => {
    try {
      const value = JSON.parse(localStorage.getItem(storageKey()) || "null");
      return Array.isArray(value) ? value.filter(c => typeof c === "string") : null;
    } catch { return null; }
  };
  const saveColumns = () => {
    try { localStorage.setItem(storageKey(), JSON.stringify(state.columns)); } catch { /* private mode: the choice lasts for the page */ }
  };

  const idOf = (doc) => doc && doc["@metadata"] && doc["@metadata"]["@id"];
  const total = () => state.collection === ALL ? state.counts.all : (state.counts.collections[state.collection] || 0);

  // Top-level properties in the order the page's documents show them.
  const propertiesSeen = () => {
    const seen = new Set();
    for (const doc of state.documents) {
      for (const name of Object.keys(doc || {})) {
        if (name !== "@metadata") seen.add(name);
      }
    }
    return [...seen];
  };

  const cellText = (value) => {
    if (value === undefined) return "";
    if (value === null) return "null";
    if (typeof value === "object") {
      const json = JSON.stringify(value);
      return json.length > 200 ? json.slice(0, 200) + "…" : json;
    }
    return String(value);
  };

  const remember = () => {
    const query = new URLSearchParams({ database: Studio.database });
    if (state.collection !== ALL) query.set("collection", state.collection);
    if (state.start) query.set("start", String(state.start));
    if (state.pageSize !== 50) query.set("pageSize", String(state.pageSize));
    if (state.order !== "desc") query.set("order", state.order);
    history.replaceState(null, "", "?" + query.toString());
    $("new-document").href = Studio.pageLink("document", { new: 1, collection: state.collection === ALL ? null : state.collection });
  };

  // ---- collections -------------------------------------------------------------------------

  const renderCollections = () => {
    const entry = (name, count, title) => el("li", null,
      el("a", {
        href: Studio.pageLink("documents", { collection: name }),
        class: "collection",
        dataset: { collection: name === ALL ? "" : name },
        "aria-current": name === state.collection ? "true" : undefined,
        onclick: (event) => { event.preventDefault(); choose(name); },
      }, el("span", { class: "grow" }, title), el("span", { class: "badge count" }, format.number(count))));
    const names = Object.keys(state.counts.collections).sort((a, b) => a.localeCompare(b));
    $("collections").replaceChildren(entry(ALL, state.counts.all, "All documents"), ...names.map(n => entry(n, state.counts.collections[n], n)));
  };

  const loadCounts = async () => {
    const stats = await api("GET", Studio.db() + "/collections/stats");
    state.counts = { all: stats.CountOfDocuments || 0, collections: stats.Collections || {} };
    renderCollections();
  };

  const choose = (collection) => {
    if (collection === state.collection) return;
    state.collection = collection;
    state.start = 0;
    state.columns = [];
    state.selected.clear();
    closeChooser();
    renderCollections();
    loadPage();
  };

  // ---- the grid ----------------------------------------------------------------------------

  const loadPage = async (initial) => {
    if (state.loading) state.loading.abort();
    const controller = new AbortController();
    state.loading = controller;
    remember();
    $("grid-title").textContent = state.collection === ALL ? "All documents" : state.collection;
    $("order").value = state.collection === ALL ? "desc" : state.order;
    $("order").disabled = state.collection === ALL;
    $("order").title = state.collection === ALL ? "All documents are listed newest change first; choose a collection to list it oldest first." : "";
    try {
      const query = { start: state.start, pageSize: state.pageSize };
      const { Results } = state.collection === ALL
        ? await api("GET", Studio.db() + "/docs", { query, signal: controller.signal })
        : await api("GET", Studio.db() + "/collections/docs", { query: Object.assign({ name: state.collection }, query, state.order === "asc" ? { order: "asc" } : {}), signal: controller.signal });
      if (controller.signal.aborted) return;
      state.documents = (Results || []).filter(Boolean);
      if (!state.columns.length) state.columns = savedColumns() || propertiesSeen().slice(0, DEFAULT_COLUMNS);
      renderGrid();
    } catch (e) {
      if (initial) throw e;
      Studio.error(e);
    } finally {
      if (state.loading === controller) state.loading = null;
    }
  };

  const renderGrid = () => {
    const allBox = el("input", { type: "checkbox", "aria-label": "Select every document of the page" });
    const ids = state.documents.map(idOf);
    allBox.checked = ids.length > 0 && ids.every(id => state.selected.has(id));
    allBox.addEventListener("change", () => {
      for (const id of ids) { if (allBox.checked) state.selected.add(id); else state.selected.delete(id); }
      renderGrid();
    });
    const columns = [
      { title: allBox, class: "select", value: (doc) => {
        const id = idOf(doc);
        const box = el("input", { type: "checkbox", checked: state.selected.has(id), "aria-label": "Select " + id });
        box.addEventListener("click", (event) => event.stopPropagation());
        box.addEventListener("change", () => { if (box.checked) state.selected.add(id); else state.selected.delete(id); renderGrid(); });
        return box;
      } },
      { title: "Id", class: "id", value: (doc) => el("a", { href: Studio.pageLink("document", { id: idOf(doc) }), onclick: (event) => event.stopPropagation() }, idOf(doc)) },
      ...state.columns.map(name => ({ title: name, class: "cell", value: (doc) => {
        const text = cellText(doc[name]);
        return el("span", { title: text.length > 40 ? text : undefined }, text);
      } })),
    ];
    if (state.collection === ALL) {
      columns.splice(2, 0, { title: "Collection", class: "cell", value: (doc) => doc["@metadata"]["@collection"] || "" });
    }
    // Studio.table takes text titles; the select-all box goes into the header afterwards.
    const table = Studio.table(columns.map(c => Object.assign({}, c, { title: typeof c.title === "string" ? c.title : "" })), state.documents, {
      key: idOf,
      onRow: (doc, event) => { location.href = Studio.pageLink("document", { id: idOf(doc) }); },
    });
    table.querySelector("thead th").append(allBox);
    for (const tr of table.querySelectorAll("tbody tr")) {
      if (state.selected.has(tr.dataset.key)) tr.classList.add("selected");
    }
    $("grid").replaceChildren(...table.childNodes);
    if (!state.documents.length) {
      $("grid").append(el("tbody", null, el("tr", null, el("td", { colspan: columns.length, class: "muted" },
        state.start > 0 ? "No documents on this page." : "No documents here yet."))));
    }
    const count = total();
    const first = state.documents.length ? state.start + 1 : 0;
    const last = state.start + state.documents.length;
    $("range").textContent = `${format.number(first)}–${format.number(last)} of ${format.number(count)}`;
    $("previous").disabled = state.start === 0;
    $("next").disabled = state.documents.length < state.pageSize || last >= count;
    $("delete-selected").disabled = state.selected.size === 0;
    $("delete-selected").textContent = state.selected.size ? `Delete selected (${state.selected.size})` : "Delete selected";
    if (!$("column-chooser").hidden) renderChooser();
  };

  // ---- columns -----------------------------------------------------------------------------

  const renderChooser = () => {
    const names = [...new Set([...state.columns, ...propertiesSeen()])];
    const boxes = names.map(name => {
      const box = el("input", { type: "checkbox", checked: state.columns.includes(name), value: name });
      box.addEventListener("change", () => {
        state.columns = box.checked ? [...state.columns, name] : state.columns.filter(c => c !== name);
        saveColumns();
        renderGrid();
      });
      return el("label", { class: "column" }, box, name);
    });
    const reset = el("button", { type: "button", onclick: () => {
      try { localStorage.removeItem(storageKey()); } catch { /* nothing kept */ }
      state.columns = propertiesSeen().slice(0, DEFAULT_COLUMNS);
      renderGrid();
    } }, "Default columns");
    $("column-chooser").replaceChildren(
      el("p", { class: "muted" }, "The properties shown as columns (kept for this collection in this browser):"),
      el("div", { class: "row" }, boxes.length ? boxes : el("span", { class: "muted" }, "No properties on this page.")),
      el("div", { class: "row" }, reset));
  };

  const closeChooser = () => {
    $("column-chooser").hidden = true;
    $("choose-columns").setAttribute("aria-expanded", "false");
  };

  $("choose-columns").addEventListener("click", () => {
    const open = $("column-chooser").hidden;
    $("column-chooser").hidden = !open;
    $("choose-columns").setAttribute("aria-expanded", String(open));
    if (open) renderChooser();
  });

  // ---- paging and deleting -----------------------------------------------------------------

  $("previous").addEventListener("click", () => { state.start = Math.max(0, state.start - state.pageSize); loadPage(); });
  $("next").addEventListener("click", () => { state.start += state.pageSize; loadPage(); });
  $("order").addEventListener("change", () => {
    state.order = $("order").value === "asc" ? "asc" : "desc";
    state.start = 0;
    loadPage();
  });
  $("page-size").addEventListener("change", () => {
    state.pageSize = Number($("page-size").value);
    state.start = Math.floor(state.start / state.pageSize) * state.pageSize;
    loadPage();
  });

  $("delete-selected").addEventListener("click", async () => {
    const ids = [...state.selected];
    if (!ids.length) return;
    const sure = await Studio.confirm(ids.length === 1 ? `Delete the document '${ids[0]}'?` : `Delete these ${ids.length} documents?`, "Delete", true);
    if (!sure) return;
    try {
      await api("POST", Studio.db() + "/bulk_docs", { body: { Commands: ids.map(id => ({ Type: "DELETE", Id: id, ChangeVector: null })) } });
      state.selected.clear();
      Studio.message(ids.length === 1 ? `Deleted '${ids[0]}'.` : `Deleted ${ids.length} documents.`, "ok");
      await loadCounts();
      if (state.start >= total() && state.start > 0) state.start = Math.max(0, state.start - state.pageSize);
      await loadPage();
    } catch (e) {
      Studio.error(e);
    }
  });

  // The counts and the first page at once; an unknown database is said by their answer.
  const start = async () => {
    if (!Studio.database) {
      await Studio.requireDatabase();
      return;
    }
    $("page-size").value = String(state.pageSize);
    try {
      await Promise.all([loadCounts(), loadPage(true)]);
      $("layout").hidden = false;
      renderGrid();
      if (state.collection !== ALL && !(state.collection in state.counts.collections)) {
        Studio.message(`The collection '${state.collection}' has no documents.`, "info");
      }
    } catch (e) {
      if (!Studio.databaseMissing(e)) Studio.error(e);
    }
  };

  start();
})();
