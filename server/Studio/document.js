// Script of /studio/document (CSP: no inline script): the editor of one document, its related
// documents, attachments and revisions. Everything goes through the public HTTP API.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const REVISIONS_PAGE = 25;
  const MAX_RELATED_IDS = 1024;
  // Metadata the server keeps itself: shown, never sent back.
  const SERVER_METADATA = new Set(["@id", "@change-vector", "@last-modified", "@flags", "@attachments", "@counters",
    "@timeseries", "@counters-snapshot", "@timeseries-snapshot", "@index-score", "@projection"]);

  const state = {
    id: params.get("id"),
    isNew: !params.get("id"),
    changeVector: null,
    metadata: {},
    loadedText: "",
    revisionsStart: 0,
    revisions: [],
    compare: [], // change vectors chosen for the diff, at most two
  };

  const docPath = () => Studio.db() + "/docs";
  const collection = () => state.isNew ? $("new-collection").value.trim() : (state.metadata["@collection"] || "");

  // ---- JSON checking -----------------------------------------------------------------------

  // A JSON syntax check that says where the first error is (JSON.parse's messages differ between
  // browsers and do not all give a position). Returns null, or { position, line, column, text }.
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const checkJson = (text) => {
    let i = 0;
    const fail = (expected) => { throw { position: i, expected }; };
    const space = () => { while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++; };
    const string = () => {
      i++;
      while (i < text.length) {
        const c = text[i];
        if (c === "\"") { i++; return; }
        if (c === "\\") {
          i++;
          const e = text[i];
          if (e === "u") {
            if (!/^[0-9a-fA-F]{4}$/.test(text.substr(i + 1, 4))) fail("four hexadecimal digits after \\u");
            i += 5;
            continue;
          }
          if (e === undefined || !"\"\\/bfnrt".includes(e)) fail("an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX");
          i++;
          continue;
        }
        if (c < " ") fail("no control character inside a string (write \\n or \\t)");
        i++;
      }
      fail("a closing \" to end the string");
    };
    const value = (depth) => {
      space();
      if (depth > 256) fail("less nesting (at most 256 levels)");
      const c = text[i];
      if (c === "{") {
        i++; space();
        if (text[i] === "}") { i++; return; }
        for (;;) {
          space();
          if (text[i] !== "\"") fail("a property name in double quotes");
          string(); space();
          if (text[i] !== ":") fail("':' after the property name");
          i++;
          value(depth + 1); space();
          if (text[i] === ",") { i++; continue; }
          if (text[i] === "}") { i++; return; }
          fail("',' or '}' after the property's value");
        }
      }
      if (c === "[") {
        i++; space();
        if (text[i] === "]") { i++; return; }
        for (;;) {
          value(depth + 1); space();
          if (text[i] === ",") { i++; continue; }
          if (text[i] === "]") { i++; return; }
          fail("',' or ']' after the array's element");
        }
      }
      if (c === "\"") return string();
      if (c === "-" || (c >= "0" && c <= "9")) {
        NUMBER.lastIndex = i;
        const match = NUMBER.exec(text);
        if (!match) fail("a number");
        i += match[0].length;
        return;
      }
      for (const word of ["true", "false", "null"]) {
        if (text.startsWith(word, i)) { i += word.length; return; }
      }
      fail(i >= text.length ? "a value, not the end of the text" : "a value (an object, array, string, number, true, false or null)");
    };
    try {
      space();
      if (text[i] !== "{") fail("'{': a document is a JSON object");
      value(0); space();
      if (i < text.length) fail("the end of the document after its closing '}'");
      return null;
    } catch (e) {
      if (e instanceof Error) throw e;
      const before = text.slice(0, e.position);
      const line = before.split("\n").length;
      const column = e.position - before.lastIndexOf("\n");
      return { position: e.position, line, column, text: `Line ${line}, column ${column}: expected ${e.expected}.` };
    }
  };

  // The editor's document, or null after showing where the JSON is wrong.
  const parseEditor = (focus) => {
    const text = $("json").value;
    const problem = checkJson(text);
    if (problem) {
      $("json").classList.add("invalid");
      Studio.message(problem.text, "error", $("json-error"));
      $("json-error").dataset.line = String(problem.line);
      $("json-error").dataset.column = String(problem.column);
      if (focus) {
        $("json").focus();
        $("json").setSelectionRange(problem.position, Math.min(text.length, problem.position + 1));
      }
      return null;
    }
    $("json").classList.remove("invalid");
    Studio.clearMessage($("json-error"));
    const value = JSON.parse(text);
    delete value["@metadata"];
    return value;
  };

  const markDirty = () => {
    const dirty = $("json").value !== state.loadedText;
    $("dirty").textContent = dirty ? "unsaved changes" : "";
  };

  $("json").addEventListener("input", Studio.debounce(() => { parseEditor(false); markDirty(); }, 250));

  // ---- showing a document ------------------------------------------------------------------

  const pretty = (value) => JSON.stringify(value, null, 2);

  const bodyOf = (doc) => {
    const copy = Object.assign({}, doc);
    delete copy["@metadata"];
    return copy;
  };

  const showMetadata = () => {
    $("metadata").textContent = pretty(state.metadata);
    const attachments = state.metadata["@attachments"] || [];
    $("attachments-count").textContent = String(attachments.length);
    renderAttachments();
  };

  const setMode = () => {
    $("id-field").hidden = !state.isNew;
    $("collection-field").hidden = !state.isNew;
    $("clone").disabled = state.isNew;
    $("delete").disabled = state.isNew;
    $("reload").disabled = state.isNew;
    for (const tab of document.querySelectorAll(".tabs button[data-tab='attachments'], .tabs button[data-tab='revisions']")) tab.disabled = state.isNew;
    if (state.isNew) selectTab("document");
    const title = state.isNew ? "New document" : state.id;
    $("title").textContent = title;
    document.title = title + " · Jackdaw";
    $("back").href = Studio.pageLink("documents", { collection: collection() || null });
  };

  const show = (doc) => {
    state.metadata = doc["@metadata"] || {};
    state.id = state.metadata["@id"] || state.id;
    state.changeVector = state.metadata["@change-vector"] || null;
    state.loadedText = pretty(bodyOf(doc));
    $("json").value = state.loadedText;
    $("json").classList.remove("invalid");
    Studio.clearMessage($("json-error"));
    hideConflict();
    markDirty();
    showMetadata();
    setMode();
    findRelated(bodyOf(doc));
  };

  const load = async () => {
    try {
      const { Results } = await api("GET", docPath(), { query: { id: state.id } });
      show(Results[0]);
      return true;
    } catch (e) {
      if (e instanceof Studio.ApiError && e.type === "DocumentDoesNotExistException") {
        Studio.message(`There is no document '${state.id}' in '${Studio.database}'. Write one below and save it to create it.`, "info");
        startNew(state.id, "", {}, "{\n}\n");
        return false;
      }
      throw e;
    }
  };

  // Metadata and change vector again, the JSON being edited kept (an attachment changed).
  const refreshMetadata = async () => {
    const { Results } = await api("GET", docPath(), { query: { id: state.id, metadataOnly: true } });
    if (!Results || !Results[0]) return;
    state.metadata = Results[0]["@metadata"] || {};
    state.changeVector = state.metadata["@change-vector"] || null;
    showMetadata();
  };

  const startNew = (id, collectionName, metadata, text) => {
    state.isNew = true;
    state.changeVector = null;
    state.metadata = Object.assign({}, metadata, collectionName ? { "@collection": collectionName } : {});
    $("new-id").value = id || "";
    $("new-collection").value = collectionName || "";
    state.loadedText = text;
    $("json").value = text;
    hideConflict();
    markDirty();
    showMetadata();
    setMode();
    const query = new URLSearchParams({ database: Studio.database, new: "1" });
    if (collectionName) query.set("collection", collectionName);
    history.replaceState(null, "", "?" + query.toString());
  };

  $("new-collection").addEventListener("input", () => {
    const name = $("new-collection").value.trim();
    if (name) state.metadata["@collection"] = name; else delete state.metadata["@collection"];
    $("metadata").textContent = pretty(state.metadata);
  });

  // ---- related documents -------------------------------------------------------------------

  const stringsOf = (value, found) => {
    if (found.size >= MAX_RELATED_IDS) return found;
    if (typeof value === "string") {
      if (value.length > 0 && value.length <= 512 && !/[\u0000-\u001f]/.test(value)) found.add(value);
    } else if (Array.isArray(value)) {
      for (const item of value) stringsOf(item, found);
    } else if (value && typeof value === "object") {
      for (const item of Object.values(value)) stringsOf(item, found);
    }
    return found;
  };

  const findRelated = async (body) => {
    const own = (state.id || "").toLowerCase();
    const ids = [...stringsOf(body, new Set())].filter(s => s.toLowerCase() !== own);
    if (!ids.length) {
      $("related").replaceChildren("No string value of this document is a document id.");
      return;
    }
    try {
      const { Results } = await api("POST", docPath(), { query: { metadataOnly: true }, body: { Ids: ids } });
      const related = (Results || []).map((doc, i) => doc && { id: doc["@metadata"]["@id"] || ids[i], collection: doc["@metadata"]["@collection"] }).filter(Boolean);
      $("related").replaceChildren(related.length
        ? el("ul", { class: "related" }, related.map(r => el("li", null,
          el("a", { href: Studio.pageLink("document", { id: r.id }), dataset: { id: r.id } }, r.id),
          r.collection ? el("span", { class: "muted" }, " · " + r.collection) : null)))
        : "No string value of this document is a document id.");
      $("related").className = related.length ? "" : "muted";
    } catch (e) {
      $("related").textContent = "Could not check the ids: " + e.message;
    }
  };

  // ---- saving ------------------------------------------------------------------------------

  const sentMetadata = () => {
    const metadata = {};
    for (const [name, value] of Object.entries(state.metadata)) {
      if (!SERVER_METADATA.has(name)) metadata[name] = value;
    }
    if (state.isNew) {
      const name = $("new-collection").value.trim();
      if (name) metadata["@collection"] = name; else delete metadata["@collection"];
    }
    return metadata;
  };

  const put = async (id, body, ifMatch) => {
    const headers = ifMatch === undefined ? {} : { "If-Match": "\"" + ifMatch + "\"" };
    return api("PUT", docPath(), { query: { id }, body: JSON.stringify(body), headers });
  };

  const afterSave = async (id) => {
    state.isNew = false;
    state.id = id;
    history.replaceState(null, "", "?" + new URLSearchParams({ database: Studio.database, id }).toString());
    await load();
    loadRevisionsSummary();
    if (!$("tab-revisions").hidden) loadRevisions();
  };

  const save = async (overwriteChangeVector) => {
    const value = parseEditor(true);
    if (!value) return;
    const body = Object.assign(value, { "@metadata": sentMetadata() });
    try {
      if (!state.isNew) {
        const ifMatch = overwriteChangeVector !== undefined ? overwriteChangeVector : state.changeVector;
        await put(state.id, body, ifMatch === null ? undefined : ifMatch);
        await afterSave(state.id);
        Studio.message(`Saved '${state.id}'.`, "ok");
        return;
      }
      let id = $("new-id").value.trim();
      if (!id) {
        const name = $("new-collection").value.trim();
        if (!name) {
          // No id and no collection: the server gives the document a GUID.
          const { Results } = await api("POST", Studio.db() + "/bulk_docs", { body: { Commands: [{ Type: "PUT", Id: null, Document: body }] } });
          await afterSave(Results[0]["@id"]);
          Studio.message(`Saved the new document '${state.id}'.`, "ok");
          return;
        }
        id = name.toLowerCase() + "/";
      }
      // An id ending in / or | is completed by the server; any other must not exist yet.
      const generated = id.endsWith("/") || id.endsWith("|");
      const answer = await put(id, body, generated ? undefined : "");
      await afterSave(answer.Id);
      Studio.message(`Saved the new document '${state.id}'.`, "ok");
    } catch (e) {
      if (e instanceof Studio.ApiError && e.type === "ConcurrencyException") {
        if (state.isNew) {
          Studio.message(`A document '${$("new-id").value.trim()}' exists already: choose another id, or open it from the Documents page.`, "error");
        } else {
          await showConflict(overwriteChangeVector !== undefined ? overwriteChangeVector : state.changeVector);
        }
        return;
      }
      Studio.error(e);
    }
  };

  // ---- conflicts ---------------------------------------------------------------------------

  const hideConflict = () => {
    $("conflict").hidden = true;
    $("conflict").replaceChildren();
  };

  const showConflict = async (mine) => {
    let theirs = null;
    try {
      const { Results } = await api("GET", docPath(), { query: { id: state.id } });
      theirs = Results[0];
    } catch (e) {
      if (!(e instanceof Studio.ApiError && e.type === "DocumentDoesNotExistException")) {
        Studio.error(e);
        return;
      }
    }
    Studio.clearMessage();
    const box = $("conflict");
    const keep = el("button", { type: "button", class: "keep", onclick: hideConflict }, "Keep editing");
    if (!theirs) {
      box.replaceChildren(
        el("strong", null, "Conflict: "), `'${state.id}' was deleted on the server after you opened it (your edit is based on change vector `,
        el("code", { class: "mine" }, mine || ""), "). Saving again creates it anew.",
        el("div", { class: "row" },
          el("button", { type: "button", class: "danger overwrite", onclick: () => save("") }, "Create it again"), keep));
    } else {
      const theirVector = theirs["@metadata"]["@change-vector"];
      box.replaceChildren(
        el("strong", null, "Conflict: "), `'${state.id}' was changed on the server after you opened it. Your edit is based on change vector `,
        el("code", { class: "mine" }, mine || ""), "; the server's document now has ", el("code", { class: "theirs" }, theirVector),
        ". Nothing was saved.",
        el("div", { class: "row" },
          el("button", { type: "button", class: "reload-theirs", onclick: () => { show(theirs); Studio.message(`Showing the server's version of '${state.id}'; your edit was dropped.`, "info"); } }, "Reload theirs"),
          el("button", { type: "button", class: "danger overwrite", onclick: () => save(theirVector) }, "Overwrite with mine"),
          keep));
    }
    box.hidden = false;
  };

  // ---- other actions -----------------------------------------------------------------------

  const remove = async () => {
    const sure = await Studio.confirm(`Delete the document '${state.id}'?`, "Delete", true);
    if (!sure) return;
    try {
      const headers = state.changeVector ? { "If-Match": "\"" + state.changeVector + "\"" } : {};
      await api("DELETE", docPath(), { query: { id: state.id }, headers });
      location.href = Studio.pageLink("documents", { collection: collection() || null });
    } catch (e) {
      if (e instanceof Studio.ApiError && e.type === "ConcurrencyException") {
        Studio.message(`'${state.id}' was changed on the server after you opened it, so it was not deleted: reload it first.`, "error");
        return;
      }
      Studio.error(e);
    }
  };

  const clone = () => {
    const value = parseEditor(true);
    if (!value) return;
    const source = state.id;
    const metadata = sentMetadata();
    delete metadata["@collection"];
    startNew("", collection(), metadata, pretty(value));
    $("title").textContent = `New document (a clone of ${source})`;
    $("dirty").textContent = "not saved yet";
    $("new-id").focus();
  };

  $("save").addEventListener("click", () => save());
  $("reload").addEventListener("click", async () => {
    try { await load(); Studio.clearMessage(); } catch (e) { Studio.error(e); }
  });
  $("clone").addEventListener("click", clone);
  $("delete").addEventListener("click", remove);
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "s") { event.preventDefault(); save(); }
  });

  // ---- tabs --------------------------------------------------------------------------------

  const selectTab = (name) => {
    for (const tab of document.querySelectorAll(".tabs button")) tab.setAttribute("aria-selected", String(tab.dataset.tab === name));
    $("tab-document").hidden = name !== "document";
    $("tab-attachments").hidden = name !== "attachments";
    $("tab-revisions").hidden = name !== "revisions";
    if (name === "revisions") loadRevisions();
  };
  for (const tab of document.querySelectorAll(".tabs button")) tab.addEventListener("click", () => selectTab(tab.dataset.tab));

  // ---- attachments -------------------------------------------------------------------------

  const attachmentUrl = (name) => Studio.db() + "/attachments?" + new URLSearchParams({ id: state.id, name }).toString();

  const renderAttachments = () => {
    const attachments = state.metadata["@attachments"] || [];
    if (!attachments.length) {
      $("attachments").replaceChildren(el("tbody", null, el("tr", null, el("td", { class: "muted" }, "No attachments."))));
      return;
    }
    const table = Studio.table([
      { title: "Name", value: a => el("a", { href: attachmentUrl(a.Name), download: a.Name, class: "download" }, a.Name) },
      { title: "Content type", value: a => a.ContentType || "" },
      { title: "Size", class: "number", value: a => format.bytes(a.Size) },
      { title: "Hash", class: "cell mono", value: a => a.Hash },
      { title: "", class: "number", value: a => el("button", { type: "button", class: "danger delete-attachment", onclick: () => removeAttachment(a.Name) }, "Delete") },
    ], attachments, { key: a => a.Name });
    $("attachments").replaceChildren(...table.childNodes);
  };

  const removeAttachment = async (name) => {
    if (!(await Studio.confirm(`Delete the attachment '${name}' of '${state.id}'?`, "Delete", true))) return;
    try {
      await api("DELETE", Studio.db() + "/attachments", { query: { id: state.id, name } });
      await refreshMetadata();
      Studio.message(`Deleted the attachment '${name}'.`, "ok");
    } catch (e) {
      Studio.error(e);
    }
  };

  $("file").addEventListener("change", () => { $("upload").disabled = !$("file").files.length; });
  $("upload").addEventListener("click", async () => {
    const file = $("file").files[0];
    if (!file) return;
    try {
      $("upload").disabled = true;
      await api("PUT", Studio.db() + "/attachments", {
        query: { id: state.id, name: file.name, contentType: file.type || "application/octet-stream" },
        body: file,
        headers: { "Content-Type": file.type || "application/octet-stream" },
      });
      $("file").value = "";
      await refreshMetadata();
      Studio.message(`Attached '${file.name}' (${format.bytes(file.size)}).`, "ok");
    } catch (e) {
      Studio.error(e);
    } finally {
      $("upload").disabled = !$("file").files.length;
    }
  });

  // ---- revisions ---------------------------------------------------------------------------

  const revisionsNote = async () => {
    try {
      state.revisionsConfig = await api("GET", Studio.db() + "/revisions/config");
    } catch (e) {
      return;
    }
    renderRevisionsNote();
  };

  const renderRevisionsNote = () => {
    if (state.revisionsConfig === undefined) return;
    const config = state.revisionsConfig;
    const name = collection();
    const collections = (config && config.Collections) || {};
    const key = Object.keys(collections).find(k => k.toLowerCase() === name.toLowerCase());
    const applies = key !== undefined ? collections[key] : config && config.Default;
    const note = $("revisions-note");
    note.hidden = !!(applies && !applies.Disabled);
    note.textContent = note.hidden ? "" : `Revisions are not configured for the collection '${name || "@empty"}': a change keeps no earlier version. `
      + `Configure them with POST /databases/${Studio.database}/admin/revisions/config.`;
  };

  const loadRevisionsSummary = async () => {
    try {
      const { RevisionsCount } = await api("GET", Studio.db() + "/revisions/count", { query: { id: state.id } });
      $("revisions-count").textContent = format.number(RevisionsCount);
    } catch { /* the tab says it when opened */ }
  };

  const loadRevisions = async () => {
    if (state.isNew) return;
    try {
      const [answer] = await Promise.all([
        api("GET", Studio.db() + "/revisions", { query: { id: state.id, start: state.revisionsStart, pageSize: REVISIONS_PAGE, metadataOnly: true } }),
        revisionsNote(),
      ]);
      state.revisions = answer.Results || [];
      const total = answer.TotalResults || 0;
      $("revisions-count").textContent = format.number(total);
      renderRevisions(total);
    } catch (e) {
      Studio.error(e);
    }
  };

  const renderRevisions = (total) => {
    if (!state.revisions.length) {
      $("revisions").replaceChildren(el("tbody", null, el("tr", null, el("td", { class: "muted" }, "No revisions of this document."))));
    } else {
      const table = Studio.table([
        { title: "Compare", value: r => {
          const cv = r["@metadata"]["@change-vector"];
          const box = el("input", { type: "checkbox", checked: state.compare.includes(cv), "aria-label": "Compare " + cv });
          box.addEventListener("change", () => {
            state.compare = box.checked ? [...state.compare.filter(c => c !== cv), cv].slice(-2) : state.compare.filter(c => c !== cv);
            renderRevisions(total);
          });
          return box;
        } },
        { title: "#", class: "number", value: (r, i) => format.number(total - state.revisionsStart - i) },
        { title: "Change vector", class: "mono", value: r => r["@metadata"]["@change-vector"] },
        { title: "Modified", value: r => el("span", { title: r["@metadata"]["@last-modified"] }, format.date(r["@metadata"]["@last-modified"])) },
        { title: "", value: r => /DeleteRevision/.test(r["@metadata"]["@flags"] || "") ? el("span", { class: "badge bad" }, "deleted")
          : r["@metadata"]["@change-vector"] === state.changeVector ? el("span", { class: "badge ok" }, "current") : "" },
        { title: "", class: "number", value: r => el("span", null,
          el("button", { type: "button", class: "view", onclick: () => viewRevision(r["@metadata"]["@change-vector"]) }, "View"), " ",
          el("button", { type: "button", class: "revert", onclick: () => revert(r["@metadata"]["@change-vector"]) }, "Revert to this")) },
      ], state.revisions, { key: r => r["@metadata"]["@change-vector"] });
      $("revisions").replaceChildren(...table.childNodes);
    }
    const first = state.revisions.length ? state.revisionsStart + 1 : 0;
    $("revisions-range").textContent = `${format.number(first)}–${format.number(state.revisionsStart + state.revisions.length)} of ${format.number(total)}`;
    $("revisions-previous").disabled = state.revisionsStart === 0;
    $("revisions-next").disabled = state.revisionsStart + state.revisions.length >= total;
    $("compare").disabled = state.compare.length !== 2;
  };

  $("revisions-previous").addEventListener("click", () => { state.revisionsStart = Math.max(0, state.revisionsStart - REVISIONS_PAGE); loadRevisions(); });
  $("revisions-next").addEventListener("click", () => { state.revisionsStart += REVISIONS_PAGE; loadRevisions(); });

  const revisionsByVector = async (vectors) => {
    const { Results } = await api("GET", Studio.db() + "/revisions", { query: { changeVector: vectors } });
    return Results;
  };

  const viewRevision = async (cv) => {
    try {
      const [revision] = await revisionsByVector([cv]);
      $("revision-view").replaceChildren(el("h2", null, "Revision ", el("code", null, cv)),
        el("pre", { class: "revision" }, pretty(revision)));
    } catch (e) {
      Studio.error(e);
    }
  };

  const revert = async (cv) => {
    const dirty = $("json").value !== state.loadedText;
    const text = `Revert '${state.id}' to its revision ${cv}?` + (dirty ? " Your unsaved changes in the editor are dropped." : "");
    if (!(await Studio.confirm(text, "Revert"))) return;
    try {
      await api("POST", Studio.db() + "/revisions/revert/docs", { body: { IdToChangeVector: { [state.id]: cv } } });
      await load();
      state.revisionsStart = 0;
      await loadRevisions();
      Studio.message(`Reverted '${state.id}' to ${cv}.`, "ok");
    } catch (e) {
      Studio.error(e);
    }
  };

  // A line diff: the longest common subsequence of the lines between a common head and tail.
  const diffLines = (a, b) => {
    let head = 0;
    while (head < a.length && head < b.length && a[head] === b[head]) head++;
    let endA = a.length, endB = b.length;
    while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
    const ops = [];
    for (let k = 0; k < head; k++) ops.push({ type: "same", a: k, b: k });
    const n = endA - head, m = endB - head;
    if (n * m > 4_000_000) {
      for (let k = 0; k < n; k++) ops.push({ type: "del", a: head + k });
      for (let k = 0; k < m; k++) ops.push({ type: "add", b: head + k });
    } else {
      const width = m + 1;
      const lcs = new Uint32Array((n + 1) * width);
      for (let i = n - 1; i >= 0; i--) {
        for (let j = m - 1; j >= 0; j--) {
          lcs[i * width + j] = a[head + i] === b[head + j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
        }
      }
      let i = 0, j = 0;
      while (i < n && j < m) {
        if (a[head + i] === b[head + j]) { ops.push({ type: "same", a: head + i, b: head + j }); i++; j++; }
        else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) { ops.push({ type: "del", a: head + i }); i++; }
        else { ops.push({ type: "add", b: head + j }); j++; }
      }
      for (; i < n; i++) ops.push({ type: "del", a: head + i });
      for (; j < m; j++) ops.push({ type: "add", b: head + j });
    }
    for (let k = 0; k < a.length - endA; k++) ops.push({ type: "same", a: endA + k, b: endB + k });
    return ops;
  };

  const renderDiff = (left, right, leftTitle, rightTitle) => {
    const a = left.split("\n"), b = right.split("\n");
    const ops = diffLines(a, b);
    const rows = [];
    let added = 0, removed = 0;
    const cell = (lines, index, kind) => index === undefined
      ? [el("td", { class: "ln" }), el("td")]
      : [el("td", { class: "ln" }, String(index + 1)), el("td", { class: kind ? "diff-" + kind : undefined }, lines[index])];
    for (let k = 0; k < ops.length;) {
      if (ops[k].type === "same") {
        rows.push(el("tr", { dataset: { kind: "same" } }, cell(a, ops[k].a), cell(b, ops[k].b)));
        k++;
        continue;
      }
      // A run of changes: removed lines on the left beside added lines on the right.
      const dels = [], adds = [];
      while (k < ops.length && ops[k].type !== "same") { (ops[k].type === "del" ? dels : adds).push(ops[k]); k++; }
      removed += dels.length; added += adds.length;
      for (let r = 0; r < Math.max(dels.length, adds.length); r++) {
        rows.push(el("tr", { dataset: { kind: "change" } },
          cell(a, dels[r] && dels[r].a, "del"), cell(b, adds[r] && adds[r].b, "add")));
      }
    }
    return [
      el("p", { class: "diff-summary" }, added || removed ? `${added} line(s) added, ${removed} removed.` : "The two versions are the same."),
      el("div", { class: "diff-scroll" }, el("table", { class: "diff" },
        el("colgroup", null, el("col", { style: "width: 44px" }), el("col"), el("col", { style: "width: 44px" }), el("col")),
        el("thead", null, el("tr", null, el("th", { colspan: 2 }, leftTitle), el("th", { colspan: 2 }, rightTitle))),
        el("tbody", null, rows))),
    ];
  };

  $("compare").addEventListener("click", async () => {
    if (state.compare.length !== 2) return;
    // The older one on the left, told by the revisions themselves (the two may have been ticked
    // on different pages of the list): by modification time, then by change vector.
    const time = (r) => Date.parse(r["@metadata"]["@last-modified"]) || 0;
    const etag = (r) => Math.max(0, ...String(r["@metadata"]["@change-vector"] || "").split(",").map(e => Number((/:(\d+)/.exec(e) || [])[1]) || 0));
    try {
      const fetched = (await revisionsByVector(state.compare)).filter(Boolean);
      if (fetched.length !== 2) {
        Studio.message("One of the two revisions is gone; tick two that are listed.", "error");
        return;
      }
      const [left, right] = fetched.sort((x, y) => time(x) - time(y) || etag(x) - etag(y));
      const title = (r) => `${r["@metadata"]["@change-vector"]} · ${format.date(r["@metadata"]["@last-modified"])}`;
      $("revision-view").replaceChildren(el("h2", null, "Compare"),
        ...renderDiff(pretty(bodyOf(left)), pretty(bodyOf(right)), title(left), title(right)));
    } catch (e) {
      Studio.error(e);
    }
  });

  // ---- start -------------------------------------------------------------------------------

  // The document, its revision count and the revisions configuration at once; an unknown
  // database is said by their answer.
  const start = async () => {
    if (!Studio.database || state.isNew) {
      if (!(await Studio.requireDatabase())) return;
      $("editor").hidden = false;
      startNew("", params.get("collection") || "", {}, "{\n  \n}\n");
      $("json").focus();
      return;
    }
    try {
      const [found] = await Promise.all([load(), loadRevisionsSummary(), revisionsNote()]);
      renderRevisionsNote();
      $("editor").hidden = false;
      if (!found) $("json").focus();
    } catch (e) {
      if (!Studio.databaseMissing(e)) Studio.error(e);
    }
  };

  start();
})();
