// Script of /studio/, the Databases page (CSP: no inline script). The list comes from one
// GET /databases; each row reads its database's counts only when it scrolls into view, so a
// server with many databases answers as fast as one with a few.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const $ = (id) => document.getElementById(id);
  const body = $("databases").querySelector("tbody");
  const rows = new Map(); // name -> tr
  let exampleShown = false;

  const dbPath = (name) => "/databases/" + encodeURIComponent(name);

  const indexesCell = (count, stale, errored) => {
    if (!count) return el("span", { class: "muted" }, "none");
    return [
      el("span", { class: "count" }, format.number(count)), " ",
      stale ? el("span", { class: "badge warn", title: "Indexes that have not caught up with the documents" }, format.number(stale) + " stale") : null, " ",
      errored ? el("span", { class: "badge bad", title: "Indexes in error or with indexing errors" }, format.number(errored) + " errored") : null,
    ];
  };

  // The counts of one row: /stats, and /indexes/stats for errors when the database has indexes.
  const loadRow = async (name, tr) => {
    if (tr.dataset.loaded) return;
    tr.dataset.loaded = "loading";
    // One row's calls are shown in the API bar as an example; the others would only crowd it.
    const quiet = exampleShown;
    exampleShown = true;
    const cells = { documents: tr.querySelector(".documents"), size: tr.querySelector(".size"), indexes: tr.querySelector(".indexes") };
    try {
      // Both at once: one round trip less than asking for the index stats only when there are indexes.
      const [stats, indexes] = await Promise.all([
        api("GET", dbPath(name) + "/stats", { quiet }),
        api("GET", dbPath(name) + "/indexes/stats", { quiet }),
      ]);
      cells.documents.textContent = format.number(stats.CountOfDocuments);
      cells.size.textContent = format.bytes(stats.SizeOnDisk ? stats.SizeOnDisk.SizeInBytes : 0);
      const errored = ((indexes && indexes.Results) || []).filter(i => i.State === "Error" || i.ErrorsCount > 0).length;
      cells.indexes.replaceChildren(...[indexesCell(stats.CountOfIndexes, stats.CountOfStaleIndexes, errored)].flat().filter(Boolean));
      tr.dataset.loaded = "done";
    } catch (e) {
      for (const cell of Object.values(cells)) { cell.textContent = "?"; cell.title = e.message; }
      tr.dataset.loaded = "failed";
    }
  };

  const observer = "IntersectionObserver" in window
    ? new IntersectionObserver(entries => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        loadRow(entry.target.dataset.database, entry.target);
      }
    }, { rootMargin: "200px" })
    : null;

  const remove = async (name) => {
    const sure = await Studio.confirmTyped(`Delete the database '${name}', its documents, indexes and files? This cannot be undone.`, name);
    if (!sure) return;
    try {
      await api("DELETE", "/admin/databases", { query: { name } });
      const tr = rows.get(name);
      if (tr) { tr.remove(); rows.delete(name); }
      Studio.message(`Deleted the database '${name}'.`, "ok");
      showEmpty();
    } catch (e) {
      Studio.error(e);
    }
  };

  // The first rows are on screen when the list arrives: their counts are asked at once, without
  // waiting a frame for the observer; further rows are read as they scroll into view.
  const eagerRows = 20;

  const row = (name, index) => {
    const tr = el("tr", { dataset: { database: name } },
      el("td", null, el("a", { class: "open", href: Studio.pageLink("documents", { database: name }) }, name)),
      el("td", { class: "number documents" }, "…"),
      el("td", { class: "number size" }, "…"),
      el("td", { class: "indexes" }, "…"),
      el("td", null,
        el("a", { href: Studio.pageLink("documents", { database: name }) }, "Documents"), " · ",
        el("a", { href: Studio.pageLink("indexes", { database: name }) }, "Indexes"), " · ",
        el("a", { class: "timeline", href: Studio.pageLink("indexing-performance", { database: name }) }, "Indexing performance")),
      el("td", { class: "number" }, el("button", { type: "button", class: "danger delete", onclick: () => remove(name) }, "Delete")));
    rows.set(name, tr);
    if (observer && index >= eagerRows) observer.observe(tr); else loadRow(name, tr);
    return tr;
  };

  const showEmpty = () => {
    const empty = rows.size === 0;
    $("status").hidden = !empty;
    $("status").textContent = empty ? "No databases yet: create one above." : "";
    $("databases").hidden = empty;
  };

  const list = async () => {
    try {
      const { Databases } = await api("GET", "/databases", { query: { namesOnly: true, pageSize: 100000 } });
      body.replaceChildren(...(Databases || []).map((name, index) => row(name, index)));
      showEmpty();
    } catch (e) {
      $("status").hidden = true;
      Studio.error(e);
    }
  };

  const create = async () => {
    const input = $("new-name");
    const name = input.value.trim();
    if (!name) {
      Studio.message("Type the new database's name first.", "error");
      input.focus();
      return;
    }
    try {
      await api("PUT", "/admin/databases", { query: { name } });
      input.value = "";
      Studio.message(`Created the database '${name}'.`, "ok");
      const names = [...rows.keys(), name].sort((a, b) => a.localeCompare(b, "en", { sensitivity: "base" }));
      const tr = row(name);
      const next = rows.get(names[names.indexOf(name) + 1]);
      if (next && next !== tr) body.insertBefore(tr, next); else body.append(tr);
      showEmpty();
    } catch (e) {
      Studio.error(e);
    }
  };

  $("create").addEventListener("click", create);
  $("new-name").addEventListener("keydown", (event) => { if (event.key === "Enter") create(); });
  api("GET", "/build/version", { quiet: true }).then(v => { $("version").textContent = "Jackdaw " + v.FullVersion; }).catch(() => {});
  list();
})();
