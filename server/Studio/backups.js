// Script of /studio/backups?database= (CSP: no inline script). The first view asks for the
// database's periodic tasks (GET /databases/{db}/tasks) and each task's status: a few small
// requests, whatever the size of the database. Backups, restores and verifications are
// operations; follow() polls their state until they end.
"use strict";
(() => {
  const { el, api, db, format } = Studio;
  const RefreshMs = 5000;
  const $ = (id) => document.getElementById(id);

  const tasksArea = $("tasks");
  let editing = 0;
  let refreshing = false;
  let firstLoad = true;

  const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms));

  const progressText = (p) => !p ? "starting…" : [p.Stage, p.Pages ? format.number(p.Pages) + " pages" : "", p.Entries ? format.number(p.Entries) + " entries" : "", p.Bytes ? format.bytes(p.Bytes) : ""].filter(Boolean).join(" · ");

  // Follows an operation (of the database, or of the server for restores and verifications)
  // until it ends, showing its progress in `target`; resolves to its final state.
  const follow = async (target, operationId, { server = false, title, done } = {}) => {
    const statePath = server ? "/operations/state" : db() + "/operations/state";
    const status = el("span", { class: "badge" }, "running");
    const text = el("span", null, "starting…");
    target.dataset.state = "InProgress";
    target.dataset.operation = String(operationId);
    target.replaceChildren(el("div", { class: "row" }, el("strong", null, title), status, text));
    let first = true;
    while (true) {
      let state;
      try {
        state = await api("GET", statePath, { query: { id: operationId }, quiet: !first });
      } catch (e) {
        target.dataset.state = "Unknown";
        Studio.error(e, text);
        return null;
      }
      first = false;
      if (state.Status === "InProgress") {
        text.textContent = progressText(state.Progress);
        await sleep(300);
        continue;
      }
      target.dataset.state = state.Status;
      const result = state.Result || {};
      if (state.Status === "Completed") {
        status.className = "badge ok";
        status.textContent = "completed";
        text.replaceChildren(...[(result.Messages || []).join(" "), result.DurationInMs !== undefined ? " (" + format.ms(result.DurationInMs) + ")" : ""]);
        if (done) done(result, text);
      } else {
        status.className = "badge bad";
        status.textContent = state.Status === "Canceled" ? "canceled" : "failed";
        text.textContent = (result.Type ? result.Type + ": " : "") + (result.Message || result.Error || state.Status);
      }
      return state;
    }
  };

  const lastResult = (task, status) => {
    if (task.OnGoingBackup) return el("span", { class: "badge warn" }, "running");
    if (status && status.Error) {
      return el("span", null, el("span", { class: "badge bad" }, "failed"), " ", format.ago(status.Error.At), el("br"),
        el("span", { class: "cell", title: status.Error.Exception }, status.Error.Exception));
    }
    if (!status || (!status.LastFullBackup && !status.LastIncrementalBackup)) return el("span", { class: "muted" }, "never run");
    const folder = status.LocalBackup && status.LocalBackup.BackupDirectory;
    return el("span", null, el("span", { class: "badge ok" }, "ok"), " ",
      [status.IsFull ? "full" : "incremental", status.SizeInBytes ? format.bytes(status.SizeInBytes) : "", status.DurationInMs !== null && status.DurationInMs !== undefined ? format.ms(status.DurationInMs) : ""].filter(Boolean).join(" · "),
      folder ? el("br") : null, folder ? el("code", { class: "cell chain", title: folder }, folder) : null);
  };

  const when = (value) => value ? el("span", { title: format.date(value) }, format.ago(value)) : el("span", { class: "muted" }, "never");

  const runNow = async (task, isFull) => {
    const { OperationId } = await api("POST", db() + "/admin/backup/database", { query: { taskId: task.TaskId, isFullBackup: isFull } });
    refresh();
    await follow($("task-operation"), OperationId, { title: `${task.TaskName || "Task " + task.TaskId}, ${isFull ? "full" : "incremental"} backup:` });
    await refresh();
  };

  const button = (label, title, run, className) => el("button", {
    type: "button", title, class: className, dataset: { action: label.toLowerCase().replace(/[^a-z]+/g, "-").replace(/-$/, "") },
    onclick: async (event) => {
      const target = event.currentTarget;
      target.disabled = true;
      try { await run(); } catch (e) { Studio.error(e); } finally { target.disabled = false; }
    },
  }, label);

  const taskActions = (task, status) => {
    const folder = status && status.LocalBackup && status.LocalBackup.BackupDirectory;
    return el("div", { class: "actions" },
      button("Run full", "Run a full backup now", () => runNow(task, true), "primary"),
      button("Run incremental", "Run an incremental backup now (a full one when there is no chain yet)", () => runNow(task, false)),
      button("Edit", "Change the task's folder, type or schedules", () => edit(task.TaskId)),
      folder ? button("Restore…", "Restore this chain into a new database", async () => {
        $("restore-folder").value = folder;
        $("restore-name").focus();
        $("restore-section").scrollIntoView({ block: "nearest" });
      }) : null,
      folder ? button("Verify…", "Verify this chain", async () => {
        $("verify-folder").value = folder;
        $("verify-section").scrollIntoView({ block: "nearest" });
      }) : null,
      button("Delete", "Delete the task (its backups stay on disk)", async () => {
        const name = task.TaskName || String(task.TaskId);
        if (!await Studio.confirmTyped(`Delete the periodic backup task '${name}'? Its backup files stay on disk.`, name)) return;
        await api("DELETE", db() + "/admin/tasks", { query: { id: task.TaskId, type: "Backup" } });
        Studio.message(`Task '${name}' deleted.`, "ok");
        await refresh();
      }, "danger"));
  };

  const render = (tasks, statuses) => {
    $("no-tasks").hidden = tasks.length > 0;
    if (!tasks.length) { tasksArea.replaceChildren(); return; }
    const columns = [
      { title: "Task", value: t => el("span", null, el("strong", null, t.TaskName || "(no name)"), el("span", { class: "muted" }, " #" + t.TaskId)), class: "name" },
      { title: "Type", value: t => t.BackupType, class: "type" },
      { title: "State", value: t => el("span", { class: "badge" + (t.TaskState === "Enabled" ? " ok" : "") }, t.TaskState.toLowerCase()), class: "state" },
      { title: "Last full", value: t => when(t.LastFullBackup), class: "last-full" },
      { title: "Last incremental", value: t => when(t.LastIncrementalBackup), class: "last-incremental" },
      {
        title: "Next", class: "next",
        value: t => t.NextBackup ? el("span", { title: format.date(t.NextBackup.DateTime) }, format.ago(t.NextBackup.DateTime), " (" + (t.NextBackup.IsFull ? "full" : "incremental") + ")") : el("span", { class: "muted" }, "not scheduled"),
      },
      { title: "Last result", value: t => lastResult(t, statuses.get(t.TaskId)), class: "result" },
      { title: "", value: t => taskActions(t, statuses.get(t.TaskId)) },
    ];
    tasksArea.replaceChildren(Studio.table(columns, tasks, { key: t => String(t.TaskId) }));
  };

  const refresh = async () => {
    if (refreshing) return;
    refreshing = true;
    try {
      const { OngoingTasksList } = await api("GET", db() + "/tasks", { quiet: !firstLoad });
      const statuses = new Map(await Promise.all(OngoingTasksList.map(async t => {
        const { Status } = await api("GET", db() + "/periodic-backup/status", { query: { taskId: t.TaskId }, quiet: true });
        return [t.TaskId, Status];
      })));
      firstLoad = false;
      // A refresh must not take a button away while it is being pressed.
      if (!tasksArea.querySelector("button:disabled")) render(OngoingTasksList, statuses);
    } catch (e) {
      Studio.error(e);
    } finally {
      refreshing = false;
    }
  };

  const showEditor = (title) => {
    $("task-editor-title").textContent = title;
    $("task-editor").hidden = false;
    $("task-name").focus();
  };

  const edit = async (taskId) => {
    const configuration = await api("GET", "/periodic-backup", { query: { name: Studio.database, taskId } });
    editing = taskId;
    $("task-name").value = configuration.Name || "";
    $("task-type").value = configuration.BackupType || "Backup";
    $("task-folder").value = (configuration.LocalSettings && configuration.LocalSettings.FolderPath) || "";
    $("task-full").value = configuration.FullBackupFrequency || "";
    $("task-incremental").value = configuration.IncrementalBackupFrequency || "";
    $("task-keep").value = (configuration.RetentionPolicy && !configuration.RetentionPolicy.Disabled && configuration.RetentionPolicy.MinimumBackupAgeToKeep) || "";
    $("task-disabled").checked = !!configuration.Disabled;
    showEditor(`Edit task '${configuration.Name || taskId}' (#${taskId})`);
  };

  $("new-task").addEventListener("click", () => {
    editing = 0;
    for (const id of ["task-name", "task-folder", "task-full", "task-incremental", "task-keep"]) $(id).value = "";
    $("task-type").value = "Backup";
    $("task-disabled").checked = false;
    showEditor("New periodic backup task");
  });

  $("task-cancel").addEventListener("click", () => { $("task-editor").hidden = true; });

  $("task-save").addEventListener("click", async () => {
    const keep = $("task-keep").value.trim();
    const body = {
      TaskId: editing,
      Name: $("task-name").value.trim() || null,
      Disabled: $("task-disabled").checked,
      BackupType: $("task-type").value,
      FullBackupFrequency: $("task-full").value.trim() || null,
      IncrementalBackupFrequency: $("task-incremental").value.trim() || null,
      LocalSettings: { Disabled: false, FolderPath: $("task-folder").value.trim() },
      RetentionPolicy: { Disabled: !keep, MinimumBackupAgeToKeep: keep || null },
    };
    try {
      const { TaskId } = await api("POST", db() + "/admin/periodic-backup", { body });
      Studio.message(editing ? `Task #${TaskId} saved.` : `Task #${TaskId} created.`, "ok");
      $("task-editor").hidden = true;
      editing = 0;
      await refresh();
    } catch (e) {
      Studio.error(e);
    }
  });

  const guarded = (id, run) => $(id).addEventListener("click", async (event) => {
    const target = event.currentTarget;
    target.disabled = true;
    try { await run(); } catch (e) { Studio.error(e); } finally { target.disabled = false; }
  });

  guarded("once-run", async () => {
    const { OperationId } = await api("POST", db() + "/admin/backup", { body: { BackupType: $("once-type").value, LocalSettings: { FolderPath: $("once-folder").value.trim() } } });
    await follow($("once-operation"), OperationId, {
      title: "One-time backup:",
      done: (result) => {
        const folder = result.LocalBackup && result.LocalBackup.BackupDirectory;
        if (folder) {
          $("restore-folder").value = folder;
          $("verify-folder").value = folder;
        }
      },
    });
  });

  guarded("verify-run", async () => {
    const { OperationId } = await api("POST", "/admin/backup/verify", { query: { path: $("verify-folder").value.trim() } });
    await follow($("verify-operation"), OperationId, { server: true, title: "Verification:" });
  });

  guarded("restore-run", async () => {
    const name = $("restore-name").value.trim();
    const last = $("restore-last").value.trim();
    const { OperationId } = await api("POST", "/admin/restore/database", {
      body: { DatabaseName: name, BackupLocation: $("restore-folder").value.trim(), LastFileNameToRestore: last || null, Type: "Local" },
    });
    await follow($("restore-operation"), OperationId, {
      server: true,
      title: `Restore into '${name}':`,
      done: (result, text) => {
        text.append(" ", el("a", { href: Studio.pageLink("documents", { database: result.DatabaseName || name }), class: "restored" }, `Open '${result.DatabaseName || name}'`));
      },
    });
  });

  Studio.requireDatabase().then(ok => {
    if (!ok) return;
    $("content").hidden = false;
    refresh();
    setInterval(() => { if (document.visibilityState === "visible") refresh(); }, RefreshMs);
  });
})();
