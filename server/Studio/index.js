// Script of /studio/ (CSP: no inline script).
"use strict";
(() => {
  const text = (tag, value, className) => {
    const element = document.createElement(tag);
    element.textContent = value;
    if (className) element.className = className;
    return element;
  };
  const fail = (message) => {
    const status = document.getElementById("status");
    status.className = "message";
    status.textContent = message;
  };
  const json = async (path) => {
    const response = await fetch(path, { headers: { Accept: "application/json" } });
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new Error((body && body.Message) || `${path} answered ${response.status}`);
    return body;
  };

  document.getElementById("origin").textContent = location.origin;
  document.getElementById("origin2").textContent = location.origin;

  json("/build/version").then(v => { document.getElementById("version").textContent = "version " + v.FullVersion; }).catch(() => {});

  json("/admin/databases").then(async ({ Databases }) => {
    const status = document.getElementById("status");
    if (!Databases.length) {
      status.textContent = "No databases yet.";
      return;
    }
    status.hidden = true;
    const table = document.getElementById("databases");
    const body = table.querySelector("tbody");
    for (const name of Databases) {
      const row = document.createElement("tr");
      row.dataset.database = name;
      row.append(text("td", name));
      const documents = text("td", "…", "number");
      const indexes = text("td", "…", "number");
      row.append(documents, indexes);
      const pages = document.createElement("td");
      const timeline = text("a", "Indexing performance");
      timeline.href = "/studio/indexing-performance?database=" + encodeURIComponent(name);
      pages.append(timeline);
      row.append(pages);
      body.append(row);
      json("/databases/" + encodeURIComponent(name) + "/stats").then(stats => {
        documents.textContent = stats.CountOfDocuments.toLocaleString();
        indexes.textContent = stats.CountOfIndexes.toLocaleString();
      }).catch(e => { documents.textContent = "?"; indexes.textContent = "?"; documents.title = e.message; });
    }
    table.hidden = false;
  }).catch(e => fail("Could not list the databases: " + e.message));
})();
