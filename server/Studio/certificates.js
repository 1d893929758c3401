// Script of /studio/certificates (CSP: no inline script). The browser's client certificate is
// the identity: every call here is answered by the same rules as any client's, and a refusal is
// shown as the server words it. Certificate files picked here are read in the browser and sent
// as base64 in the JSON body; nothing is uploaded otherwise.
"use strict";
(() => {
  const { el, api, format } = Studio;
  const $ = (id) => document.getElementById(id);
  const page = $("page");
  const Accesses = ["Read", "ReadWrite", "Admin"];

  const base64 = (buffer) => {
    const bytes = new Uint8Array(buffer);
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(text);
  };

  // Rows of (database, access) for a ValidUser's permissions; the databases come from a datalist.
  const permissionsEditor = (container) => {
    const rows = el("div", { class: "stack" });
    const add = (database = "", access = "Read") => {
      const row = el("div", { class: "row permission" },
        el("input", { type: "text", list: "database-names", placeholder: "database", value: database, "aria-label": "Database", class: "permission-database" }),
        el("select", { "aria-label": "Access", class: "permission-access" }, Accesses.map(a => el("option", { value: a, selected: a === access }, a))),
        el("button", { type: "button", title: "Remove this database", onclick: () => row.remove() }, "Remove"));
      rows.append(row);
    };
    container.replaceChildren(el("div", { class: "stack" }, rows,
      el("div", null, el("button", { type: "button", class: "add-permission", onclick: () => add() }, "Add a database"),
        el("span", { class: "muted" }, " (ValidUser only: Operator and ClusterAdmin reach every database)"))));
    return {
      get: () => Object.fromEntries([...rows.querySelectorAll(".permission")]
        .map(r => [r.querySelector("input").value.trim(), r.querySelector("select").value])
        .filter(([database]) => database)),
      set: (permissions) => {
        rows.replaceChildren();
        for (const [database, access] of Object.entries(permissions || {})) add(database, access);
      },
      add,
    };
  };

  const editors = {
    generate: permissionsEditor($("generate-permissions")),
    register: permissionsEditor($("register-permissions")),
    edit: permissionsEditor($("edit-permissions")),
  };

  const guarded = (id, run) => $(id).addEventListener("click", async (event) => {
    const target = event.currentTarget;
    target.disabled = true;
    try { await run(); } catch (e) { Studio.error(e); } finally { target.disabled = false; }
  });

  const fact = (term, ...value) => [el("dt", null, term), el("dd", null, ...value)];

  const renderServer = (server) => {
    const expiry = $("expiry");
    expiry.className = "badge " + (server.Expiring ? "bad" : "ok");
    expiry.textContent = server.Expiring ? `expires in ${server.DaysLeft} days` : `${Math.floor(server.DaysLeft)} days left`;
    $("server-certificate").replaceChildren(
      ...fact("Subject", server.Subject),
      ...fact("Issuer", server.Issuer),
      ...fact("Thumbprint", el("code", null, server.Thumbprint)),
      ...fact("Valid from", format.date(server.NotBefore)),
      ...fact("Expires", el("span", { id: "not-after", title: server.NotAfter }, format.date(server.NotAfter)), ` (${server.DaysLeft} days; a warning within ${server.ExpiryWarningDays} days)`),
      ...fact("Replaced", `${server.Replacements} time${server.Replacements === 1 ? "" : "s"} since the server started`));
  };

  const databases = (c) => {
    if (c.SecurityClearance !== "ValidUser") return el("span", { class: "muted" }, "all");
    const entries = Object.entries(c.Permissions || {});
    if (!entries.length) return el("span", { class: "muted" }, "none");
    return el("ul", { class: "plain" }, entries.map(([database, access]) => el("li", null, database + ": " + access)));
  };

  let serverThumbprint = null;
  let editing = null;

  const actions = (c) => c.Thumbprint === serverThumbprint ? el("span", { class: "muted" }, "the server's own") : el("div", { class: "actions" },
    el("button", { type: "button", dataset: { action: "edit" }, onclick: () => startEdit(c) }, "Edit"),
    el("button", {
      type: "button", class: "danger", dataset: { action: "delete" },
      onclick: async () => {
        try {
          if (!await Studio.confirmTyped(`Delete the certificate '${c.Name}' (${c.Thumbprint})? Its connections lose their access at their next request.`, c.Name)) return;
          await api("DELETE", "/admin/certificates", { query: { thumbprint: c.Thumbprint } });
          Studio.message(`Certificate '${c.Name}' deleted.`, "ok");
          await loadList();
        } catch (e) {
          Studio.error(e);
        }
      },
    }, "Delete"));

  const renderList = ({ Results, WellKnownAdminCerts }) => {
    const wellKnown = new Set((WellKnownAdminCerts || []).map(t => t.toUpperCase()));
    const columns = [
      { title: "Name", value: c => el("strong", null, c.Name), class: "name" },
      { title: "Clearance", value: c => el("span", { class: "badge" }, c.SecurityClearance + (wellKnown.has(c.Thumbprint.toUpperCase()) ? " (well-known)" : "")), class: "clearance" },
      { title: "Databases", value: databases, class: "databases" },
      { title: "Thumbprint", value: c => el("code", { class: "cell", title: c.Thumbprint }, c.Thumbprint), class: "thumbprint" },
      { title: "Expires", value: c => el("span", { title: c.NotAfter }, format.date(c.NotAfter)), class: "expires" },
      { title: "", value: actions },
    ];
    $("certificates").replaceChildren(Studio.table(columns, Results, { key: c => c.Thumbprint }));
  };

  const loadList = async () => renderList(await api("GET", "/admin/certificates", { query: { metadataOnly: true } }));

  const startEdit = (c) => {
    editing = c;
    $("edit-title").textContent = `Edit '${c.Name}'`;
    $("edit-name").value = c.Name;
    $("edit-clearance").value = c.SecurityClearance;
    editors.edit.set(c.Permissions);
    $("edit-section").hidden = false;
    $("edit-section").scrollIntoView({ block: "nearest" });
  };

  $("edit-cancel").addEventListener("click", () => { $("edit-section").hidden = true; editing = null; });
  guarded("edit-save", async () => {
    if (!editing) return;
    await api("POST", "/admin/certificates/edit", {
      body: { Thumbprint: editing.Thumbprint, Name: $("edit-name").value.trim(), SecurityClearance: $("edit-clearance").value, Permissions: editors.edit.get() },
    });
    Studio.message(`Certificate '${$("edit-name").value.trim()}' saved.`, "ok");
    $("edit-section").hidden = true;
    editing = null;
    await loadList();
  });

  guarded("generate-run", async () => {
    const name = $("generate-name").value.trim();
    const password = $("generate-password").value;
    const response = await api("POST", "/admin/certificates", {
      raw: true,
      body: { Name: name, SecurityClearance: $("generate-clearance").value, Permissions: editors.generate.get(), Password: password || undefined },
    });
    const blob = await response.blob();
    Studio.download(blob, (name || "certificate") + ".zip");
    Studio.message(`Certificate '${name}' generated and registered; its zip (${format.bytes(blob.size)}) was downloaded.`, "ok");
    await loadList();
  });

  $("register-file").addEventListener("change", async () => {
    const file = $("register-file").files[0];
    if (!file) return;
    const buffer = await file.arrayBuffer();
    const text = new TextDecoder().decode(buffer);
    $("register-certificate").value = text.includes("-----BEGIN") ? text : base64(buffer);
    if (!$("register-name").value) $("register-name").value = file.name.replace(/\.[^.]+$/, "");
  });

  guarded("register-run", async () => {
    const name = $("register-name").value.trim();
    const certificate = $("register-certificate").value.trim();
    if (!certificate) {
      Studio.message("Paste a certificate (PEM or base64 DER) or pick its file first.", "error");
      return;
    }
    await api("PUT", "/admin/certificates", { body: { Name: name, Certificate: certificate, SecurityClearance: $("register-clearance").value, Permissions: editors.register.get() } });
    Studio.message(`Certificate '${name}' registered.`, "ok");
    $("register-certificate").value = "";
    $("register-file").value = "";
    await loadList();
  });

  $("replace-open").addEventListener("click", () => { $("replace-form").hidden = false; });
  $("replace-cancel").addEventListener("click", () => { $("replace-form").hidden = true; });
  guarded("replace-run", async () => {
    const file = $("replace-file").files[0];
    if (!file) {
      Studio.message("Pick the new server certificate's PFX file first.", "error");
      return;
    }
    const certificate = base64(await file.arrayBuffer());
    await api("POST", "/admin/certificates/replace-cluster-cert", { query: { replaceImmediately: true }, body: { Certificate: certificate, Password: $("replace-password").value } });
    Studio.message("The server certificate was replaced: new connections are presented the new one.", "ok");
    $("replace-form").hidden = true;
    $("replace-password").value = "";
    const server = await api("GET", "/admin/certificates/server");
    serverThumbprint = server.Thumbprint;
    renderServer(server);
    await loadList();
  });

  const load = async () => {
    let me;
    try {
      me = await api("GET", "/certificates/whoami");
    } catch (e) {
      // An unsecured server answers 400 saying how to secure it; no certificate is a 401, an
      // unknown one a 403: each message is the server's.
      page.dataset.state = e.status === 400 ? "unsecured" : "refused";
      if (e.status === 400) Studio.message(e.message, "info"); else Studio.error(e);
      return;
    }
    $("whoami").hidden = false;
    $("whoami").textContent = `This browser's certificate: ${me.Name} (${me.SecurityClearance}), thumbprint ${me.Thumbprint}.`;
    try {
      const [server, list] = await Promise.all([api("GET", "/admin/certificates/server"), api("GET", "/admin/certificates", { query: { metadataOnly: true } })]);
      serverThumbprint = server.Thumbprint;
      renderServer(server);
      renderList(list);
    } catch (e) {
      page.dataset.state = "refused";
      Studio.error(e);
      return;
    }
    $("content").hidden = false;
    page.dataset.state = "ready";
    const names = el("datalist", { id: "database-names" });
    document.body.append(names);
    api("GET", "/databases", { query: { namesOnly: true, pageSize: 1024 }, quiet: true })
      .then(({ Databases }) => names.append(...(Databases || []).map(name => el("option", { value: name }))))
      .catch(() => { /* the names only help typing */ });
  };

  load();
})();
