// Script of /studio/indexes (CSP: no inline script). The list is GET /databases/{db}/indexes/stats,
// read again every 2 s while the page is visible (quietly: those calls stay out of the API bar);
// definitions come from GET /indexes, the advice from GET /indexes/cleanup. A changed definition is
// built beside the index as ReplacementOf/<name>; the page shows its progress under the index and
// says when it swapped in.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const $ = (id) => document.getElementById(id);
  const RefreshMs = 2000;
  const Replacement = "ReplacementOf/";

  const state = {
    stats: [], definitions: new Map(), building: new Map(), swapped: new Set(), created: new Map(),
    lastDocEtag: null, staleness: new Map(), pending: null, timer: 0, editing: null,
  };

  const db = () => Studio.db();
  const byName = (name) => ({ name });
  const isAuto = (stats) => /^Auto/.test(stats.Type || "");

  const loadDefinitions = async () => {
    const { Results } = await api("GET", `${db()}/indexes`, { quiet: true });
    state.definitions = new Map((Results || []).map(d => [d.Name, d]));
  };

  const loadCleanup = async () => {
    const { Results } = await api("GET", `${db()}/indexes/cleanup`, { quiet: true });
    renderCleanup(Results || []);
  };

  // One read of everything the list shows. A caller during a read gets that read's promise; a
  // caller that changed something (fresh) gets a read that starts after it, never an older one.
  const refresh = (fresh = false) => {
    if (state.pending && !fresh) return state.pending;
    const run = (state.pending || Promise.resolve()).then(readOnce);
    state.pending = run;
    run.finally(() => { if (state.pending === run) state.pending = null; });
    return run;
  };

  // The database's last etag and the reasons only while some index is stale. Never throws.
  const readOnce = async () => {
    try {
      const { Results } = await api("GET", `${db()}/indexes/stats`, { quiet: true });
      state.stats = Results || [];
      // Replacements too (again when one was made anew): a swap is recognised by the index taking
      // its replacement's definition.
      const remade = state.stats.some(s => s.ReplacementOf && state.created.has(s.Name) && state.created.get(s.Name) !== s.CreatedTimestamp);
      state.created = new Map(state.stats.map(s => [s.Name, s.CreatedTimestamp]));
      if (remade || state.stats.some(s => !state.definitions.has(s.Name))) await loadDefinitions();
      const stale = state.stats.filter(s => s.IsStale && !s.Name.startsWith(Replacement)).slice(0, 8);
      if (stale.length) {
        const [stats, ...reasons] = await Promise.all([
          api("GET", `${db()}/stats`, { quiet: true }),
          ...stale.map(s => api("GET", `${db()}/indexes/staleness`, { query: byName(s.Name), quiet: true }).catch(() => null)),
        ]);
        state.lastDocEtag = stats.LastDocEtag;
        state.staleness = new Map(stale.map((s, i) => [s.Name, reasons[i]]));
      }
      await noteSwaps();
      renderList();
      $("refreshed").textContent = "updated " + new Date().toLocaleTimeString();
      $("refreshed").classList.remove("bad");
    } catch (e) {
      $("refreshed").textContent = "refresh failed: " + (e.message || e);
      $("refreshed").classList.add("bad");
    }
  };

  // What makes two definitions the same index (not the name, the type or the dates).
  const signature = (d) => d ? JSON.stringify([d.Maps, d.Reduce || null, d.Fields || {}, d.AdditionalSources || {},
    d.OutputReduceToCollection || null, d.PatternForOutputReduceToCollectionReferences || null, d.PatternReferencesCollectionName || null]) : null;

  // A replacement that was building and is gone while its index remains swapped in only if the
  // index now has the replacement's definition: one deleted, dropped (its index put back to the
  // old definition) or failed leaves the index as it was, and that is not announced as a swap.
  const noteSwaps = async () => {
    const building = new Map(state.stats.filter(s => s.ReplacementOf)
      .map(s => [s.ReplacementOf, signature(state.definitions.get(s.Name)) || (state.building.get(s.ReplacementOf) || {}).replacement || null]));
    const names = new Set(state.stats.map(s => s.Name));
    const gone = Array.from(state.building.keys()).filter(name => !building.has(name) && names.has(name));
    if (gone.length) {
      await loadDefinitions().catch(() => {});
      for (const name of gone) {
        const before = state.building.get(name);
        const now = signature(state.definitions.get(name));
        const swapped = before.replacement ? now === before.replacement : now !== before.original;
        if (swapped) {
          state.swapped.add(name);
          Studio.message(`'${name}' now answers with its new definition: the replacement caught up and swapped in.`, "ok");
        } else {
          state.swapped.delete(name);
          Studio.message(`The new definition of '${name}' is no longer building beside it (deleted or put back); '${name}' keeps its definition.`, "info");
        }
      }
      loadCleanup().catch(() => {});
    }
    state.building = new Map(Array.from(building, ([name, replacement]) => [name, {
      replacement,
      original: state.building.has(name) ? state.building.get(name).original : signature(state.definitions.get(name)),
    }]));
  };

  const schedule = () => {
    clearTimeout(state.timer);
    if (document.visibilityState === "visible") state.timer = setTimeout(tick, RefreshMs);
  };
  const tick = async () => { await refresh(); schedule(); };

  // Runs a control, then reads the list again at once.
  const act = async (work, done) => {
    try {
      await work();
      if (done) Studio.message(done, "ok");
      await refresh(true);
    } catch (e) {
      Studio.error(e);
    }
  };

  const stateBadge = (s) => {
    const kind = s.State === "Error" ? "bad" : s.State === "Disabled" || s.State === "Idle" ? "warn" : "ok";
    return el("span", {}, el("span", { class: "badge " + kind }, s.State),
      s.Status === "Paused" ? [" ", el("span", { class: "badge warn" }, "paused")] : null);
  };

  const staleness = (s) => {
    if (!s.IsStale) return el("span", { class: "badge ok", dataset: { stale: "false" } }, "up to date");
    // The server gives the database's last etag, not a collection's: the difference is an upper
    // bound (changes to collections the index does not read count too); the reasons say which
    // of its collections still have work.
    const reasons = state.staleness.get(s.Name);
    const behind = state.lastDocEtag !== null ? Math.max(0, state.lastDocEtag - (s.LastIndexedEtag || 0)) : null;
    const why = reasons && reasons.StalenessReasons ? reasons.StalenessReasons.join("\n") : "";
    return el("span", { title: why ? why + "\n(The count includes changes to other collections.)" : undefined },
      el("span", { class: "badge warn", dataset: { stale: "true" } }, "stale"),
      behind !== null ? el("span", { class: "muted behind" }, ` behind by up to ${format.number(behind)} changes`) : null);
  };

  const selectOf = (values, current, label, onchange) => {
    const select = el("select", { "aria-label": label }, values.map(v => el("option", { value: v, selected: v === current }, v)));
    // Blurred once chosen: the list does not redraw under a focused select, and a select keeps
    // the focus after a choice.
    select.addEventListener("change", () => { select.blur(); onchange(select.value); });
    return select;
  };

  const actions = (s) => el("div", { class: "row", style: "flex-wrap: nowrap" },
    isAuto(s) ? null : el("button", { type: "button", onclick: () => openEditor(s.Name) }, "Edit"),
    el("button", { type: "button", onclick: () => act(() => api("POST", `${db()}/indexes/reset`, { query: byName(s.Name) }), `'${s.Name}' is being rebuilt from the start.`) }, "Reset"),
    s.State === "Disabled"
      ? el("button", { type: "button", onclick: () => act(() => api("POST", `${db()}/indexes/enable`, { query: byName(s.Name) }), `'${s.Name}' is enabled.`) }, "Enable")
      : el("button", { type: "button", onclick: () => act(() => api("POST", `${db()}/indexes/disable`, { query: byName(s.Name) }), `'${s.Name}' is disabled: it indexes nothing until enabled.`) }, "Disable"),
    el("button", { type: "button", class: "danger", onclick: () => remove(s.Name) }, "Delete"));

  const remove = async (name) => {
    if (!await Studio.confirmTyped(`Delete the index '${name}'? Its files are deleted; queries that name it fail.`, name)) return;
    await act(async () => {
      await api("DELETE", `${db()}/indexes`, { query: byName(name) });
      state.definitions.delete(name);
      await loadCleanup();
    }, `'${name}' is deleted.`);
  };

  const replacementRow = (r, columns) => {
    const progress = r.Progress || {};
    const total = Number(progress.TotalDocuments) || 0;
    const done = Number(progress.ProcessedDocuments) || 0;
    const share = total ? Math.min(100, Math.round(done * 100 / total)) : 0;
    return el("tr", { class: "replacement", dataset: { replacementOf: r.ReplacementOf } },
      el("td", { colspan: String(columns) },
        el("div", { class: "row" },
          el("span", {}, "New definition building side by side as ", el("code", {}, r.Name), ":"),
          el("div", { class: "progress", style: "width: 200px", role: "progressbar", "aria-valuenow": String(share), "aria-valuemin": "0", "aria-valuemax": "100" },
            el("div", { style: `width: ${share}%` })),
          el("span", { class: "replacement-progress" }, `${format.number(done)} of ${format.number(total)} documents (${share}%)`),
          progress.EstimatedTimeLeft ? el("span", { class: "muted" }, `about ${progress.EstimatedTimeLeft} left`) : null,
          el("span", { class: "muted" }, `${format.number(r.EntriesCount)} entries`),
          el("button", { type: "button", onclick: () => act(() => api("POST", `${db()}/indexes/replace`, { query: byName(r.ReplacementOf) })) }, "Swap now"))));
  };

  const renderList = () => {
    const container = $("indexes");
    // Do not redraw under a person choosing a lock or a priority.
    if (container.contains(document.activeElement) && document.activeElement.tagName === "SELECT") return;
    const indexes = state.stats.filter(s => !s.ReplacementOf);
    const replacements = new Map(state.stats.filter(s => s.ReplacementOf).map(s => [s.ReplacementOf, s]));
    $("list").hidden = false;
    if (!indexes.length) {
      container.replaceChildren(el("p", { class: "muted" }, "No indexes yet. A query with a where clause makes an auto-index; New index defines one."));
      return;
    }
    const columns = [
      { title: "Name", value: s => el("span", {}, el("strong", {}, s.Name), state.swapped.has(s.Name) ? [" ", el("span", { class: "badge ok swapped" }, "new definition")] : null) },
      { title: "Type", value: s => s.Type },
      { title: "State", value: stateBadge },
      { title: "Entries", class: "number", value: s => format.number(s.EntriesCount) },
      { title: "Staleness", value: staleness },
      { title: "Errors", class: "number", value: s => s.ErrorsCount ? el("button", { type: "button", class: "danger", onclick: () => showErrors(s.Name) }, format.number(s.ErrorsCount)) : "0" },
      { title: "Lock", value: s => selectOf(["Unlock", "LockedIgnore", "LockedError"], s.LockMode, `Lock mode of ${s.Name}`,
        mode => act(() => api("POST", `${db()}/indexes/set-lock`, { body: { IndexNames: [s.Name], Mode: mode } }), `'${s.Name}' lock: ${mode}.`)) },
      { title: "Priority", value: s => selectOf(["Low", "Normal", "High"], s.Priority, `Priority of ${s.Name}`,
        priority => act(() => api("POST", `${db()}/indexes/set-priority`, { body: { IndexNames: [s.Name], Priority: priority } }), `'${s.Name}' priority: ${priority}.`)) },
      { title: "Last query", value: s => el("span", { title: s.LastQueryingTime || "" }, s.LastQueryingTime ? format.ago(s.LastQueryingTime) : "never") },
      { title: "", value: actions },
    ];
    const table = Studio.table(columns, indexes, { key: s => s.Name, class: "indexes" });
    const body = table.querySelector("tbody");
    for (const row of Array.from(body.children)) {
      const replacement = replacements.get(row.dataset.key);
      if (replacement) row.after(replacementRow(replacement, columns.length));
    }
    container.replaceChildren(table);
  };

  const showErrors = async (name) => {
    try {
      const { Results } = await api("GET", `${db()}/indexes/errors`, { query: byName(name) });
      const errors = (Results && Results[0] && Results[0].Errors) || [];
      $("errors-title").textContent = `Errors of ${name} (${errors.length})`;
      $("errors-list").replaceChildren(errors.length
        ? Studio.table([
          { title: "When", value: e => format.date(e.Timestamp) },
          { title: "Document", class: "mono", value: e => e.Document ? el("a", { href: Studio.pageLink("document", { id: e.Document }) }, e.Document) : "" },
          { title: "Action", value: e => e.Action },
          { title: "Error", value: e => el("div", { class: "mono" }, e.Error) },
        ], errors)
        : el("p", { class: "muted" }, "No errors."));
      $("errors").hidden = false;
      $("errors").scrollIntoView({ block: "nearest" });
    } catch (e) {
      Studio.error(e);
    }
  };

  // The editor: one textarea per map, the reduce, a row per field's options.
  const mapBox = (text) => {
    const area = el("textarea", { class: "code short map", spellcheck: "false", "aria-label": "Map", placeholder: "map('Orders', o => ({ Company: o.Company, Freight: o.Freight }))" });
    area.value = text || "";
    return el("div", { class: "map-row", style: "margin-bottom: 6px" }, area,
      el("button", { type: "button", onclick: (event) => { if ($("maps").children.length > 1) event.target.parentElement.remove(); } }, "Remove map"));
  };

  const fieldRow = (name, options) => el("div", { class: "row field-row", style: "margin-bottom: 4px" },
    el("input", { type: "text", class: "field-name", placeholder: "field", "aria-label": "Field name", value: name || "" }),
    selectOf(["Default", "Exact", "Search", "No"], (options && options.Indexing) || "Default", "Indexing", () => {}),
    selectOf(["No", "Yes"], (options && options.Storage) || "No", "Storage", () => {}),
    el("input", { type: "text", class: "field-analyzer", placeholder: "analyzer (optional)", "aria-label": "Analyzer", value: (options && options.Analyzer) || "" }),
    el("button", { type: "button", onclick: (event) => event.target.parentElement.remove() }, "Remove"));

  const openEditor = (name) => {
    const definition = name ? state.definitions.get(name) : null;
    if (name && !definition) {
      Studio.message(`The definition of '${name}' is not loaded yet; try again in a moment.`, "error");
      loadDefinitions().catch(() => {});
      return;
    }
    state.editing = definition || null;
    $("editor-title").textContent = definition ? `Edit ${definition.Name}` : "New index";
    $("def-name").value = definition ? definition.Name : "";
    $("def-name").disabled = !!definition;
    $("maps").replaceChildren(...(definition && definition.Maps && definition.Maps.length ? definition.Maps : [""]).map(mapBox));
    $("def-reduce").value = (definition && definition.Reduce) || "";
    $("fields").replaceChildren(...Object.entries((definition && definition.Fields) || {}).map(([field, options]) => fieldRow(field, options)));
    $("editor").hidden = false;
    $("editor").scrollIntoView({ block: "start" });
    (definition ? $("maps").querySelector("textarea") : $("def-name")).focus();
  };

  const save = async () => {
    const name = $("def-name").value.trim();
    const maps = Array.from($("maps").querySelectorAll("textarea")).map(t => t.value).filter(t => t.trim());
    const fields = {};
    for (const row of $("fields").querySelectorAll(".field-row")) {
      const field = row.querySelector(".field-name").value.trim();
      if (!field) continue;
      const [indexing, storage] = Array.from(row.querySelectorAll("select")).map(s => s.value);
      const analyzer = row.querySelector(".field-analyzer").value.trim();
      fields[field] = Object.assign({ Indexing: indexing, Storage: storage }, analyzer ? { Analyzer: analyzer } : {});
    }
    // The fetched definition with the edited parts overwritten: what the editor does not show
    // (the output collection, additional sources) stays as it was.
    const previous = state.editing;
    const definition = Object.assign(previous ? structuredClone(previous) : {}, { Name: name, Maps: maps, Fields: fields });
    const reduce = $("def-reduce").value.trim();
    if (reduce) {
      definition.Reduce = reduce;
    } else {
      // Only a map-reduce index writes to a collection.
      for (const key of ["Reduce", "OutputReduceToCollection", "PatternForOutputReduceToCollectionReferences", "PatternReferencesCollectionName"]) delete definition[key];
    }
    // The lock and priority have their own controls and may have changed since the definition
    // was fetched: left out, the server keeps the index's current ones.
    delete definition.LockMode;
    delete definition.Priority;
    try {
      await api("PUT", `${db()}/admin/indexes`, { body: { Indexes: [definition] } });
      $("editor").hidden = true;
      state.editing = null;
      await loadDefinitions();
      await refresh(true);
      const building = state.stats.some(s => s.ReplacementOf === name);
      Studio.message(previous
        ? building
          ? `Saved. '${name}' keeps answering queries while its new definition builds beside it as ${Replacement}${name}; it swaps in once caught up.`
          : `Saved '${name}' (the definition was unchanged or the index is locked).`
        : `Created '${name}'.`, "ok");
      await loadCleanup();
    } catch (e) {
      Studio.error(e);
    }
  };

  // The advisor's suggestions, each with the action that applies it.
  const renderCleanup = (advice) => {
    $("cleanup").hidden = false;
    if (!advice.length) {
      $("cleanup-list").replaceChildren(el("p", { class: "muted" }, "No suggestions: every index is in use and none duplicates another."));
      return;
    }
    $("cleanup-list").replaceChildren(Studio.table([
      { title: "Kind", value: a => el("span", { class: "badge " + (a.Type === "Errored" ? "bad" : "warn") }, a.Type) },
      { title: "Indexes", value: a => a.Indexes.join(", ") },
      { title: "Why", value: a => a.Reason },
      { title: "", value: a => applyButton(a) },
    ], advice, { class: "cleanup" }));
  };

  const applyButton = (advice) => {
    const [first, second] = advice.Indexes;
    switch (advice.Type) {
      case "Unused":
      case "Covered":
        return el("button", { type: "button", class: "danger apply", onclick: () => remove(first) }, `Delete ${first}`);
      case "Errored":
        return el("button", { type: "button", class: "apply", onclick: () => act(() => api("POST", `${db()}/indexes/reset`, { query: byName(first) }), `'${first}' is being rebuilt.`) }, `Reset ${first}`);
      case "Mergeable":
        if (!advice.MergedDefinition) return el("span", { class: "muted" }, "merge by hand");
        return el("button", { type: "button", class: "apply", onclick: () => merge(advice.MergedDefinition, advice.Indexes) }, `Create ${advice.MergedDefinition.Name}, delete ${first} and ${second}`);
      default:
        return "";
    }
  };

  const merge = async (definition, replaced) => {
    if (!await Studio.confirmTyped(`Create '${definition.Name}' and delete ${replaced.map(n => `'${n}'`).join(" and ")}? Queries that name the deleted indexes fail.`, "merge")) return;
    await act(async () => {
      const merged = Object.assign(structuredClone(definition), { Fields: definition.Fields || {} });
      delete merged.LockMode;
      delete merged.Priority;
      await api("PUT", `${db()}/admin/indexes`, { body: { Indexes: [merged] } });
      for (const name of replaced) await api("DELETE", `${db()}/indexes`, { query: byName(name) });
      await loadDefinitions();
      await loadCleanup();
    }, `Created '${definition.Name}' and deleted ${replaced.join(" and ")}.`);
  };

  document.addEventListener("DOMContentLoaded", async () => {
    $("performance-link").href = Studio.pageLink("indexing-performance");
    if (!await Studio.requireDatabase()) return;
    $("new-index").disabled = false;
    $("new-index").addEventListener("click", () => openEditor(null));
    $("add-map").addEventListener("click", () => $("maps").append(mapBox("")));
    $("add-field").addEventListener("click", () => $("fields").append(fieldRow("", null)));
    $("save").addEventListener("click", save);
    $("cancel").addEventListener("click", () => { $("editor").hidden = true; state.editing = null; });
    $("close-errors").addEventListener("click", () => { $("errors").hidden = true; });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") tick(); else clearTimeout(state.timer);
    });
    try {
      await Promise.all([loadDefinitions(), loadCleanup()]);
    } catch (e) {
      Studio.error(e);
    }
    await tick();
  });
})();
