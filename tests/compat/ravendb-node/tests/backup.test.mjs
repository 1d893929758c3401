import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
    UpdatePeriodicBackupOperation, StartBackupOperation, GetPeriodicBackupStatusOperation,
    RestoreBackupOperation, GetOngoingTaskInfoOperation, DeleteOngoingTaskOperation,
    OperationCompletionAwaiter, GetStatisticsOperation,
} from "ravendb";
import { freshStore, storeFor, User } from "./harness.mjs";

// The server writes the backups: it runs on this machine, so a temp folder here is one there.
function backupFolder() {
    return mkdtempSync(join(tmpdir(), "jackdaw-node-backup-"));
}

async function waitForBackup(store, operationId) {
    const awaiter = new OperationCompletionAwaiter(store.getRequestExecutor(), store.conventions, operationId);
    await awaiter.waitForCompletion();
}

test("a periodic backup task runs now, shows its status, and its chain restores into a new database", async () => {
    const { store, database } = await freshStore("backup");
    const folder = backupFolder();
    const restoredName = `${database}-restored`;
    try {
        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/1");
        await session.store(new User("Grace", 45), "users/2");
        await session.saveChanges();

        const created = await store.maintenance.send(new UpdatePeriodicBackupOperation({
            name: "nightly",
            backupType: "Snapshot",
            fullBackupFrequency: "0 2 * * *",
            incrementalBackupFrequency: "0 * * * *",
            localSettings: { folderPath: folder },
            retentionPolicy: { disabled: true },
        }));
        assert.ok(created.taskId > 0);

        const full = await store.maintenance.send(new StartBackupOperation(true, created.taskId));
        assert.equal(full.responsibleNode, "A");
        await waitForBackup(store, full.operationId);

        const { status } = await store.maintenance.send(new GetPeriodicBackupStatusOperation(created.taskId));
        assert.equal(status.taskId, created.taskId);
        assert.ok(status.lastFullBackup instanceof Date);
        assert.equal(status.lastOperationId, full.operationId);
        assert.equal(status.error, null);
        assert.ok(status.localBackup.backupDirectory.startsWith(folder));

        const task = await store.maintenance.send(new GetOngoingTaskInfoOperation(created.taskId, "Backup"));
        assert.equal(task.taskName, "nightly");
        assert.equal(task.backupType, "Snapshot");

        const more = store.openSession();
        await more.store(new User("Linus", 28), "users/3");
        await more.saveChanges();
        const incremental = await store.maintenance.send(new StartBackupOperation(false, created.taskId));
        await waitForBackup(store, incremental.operationId);
        const after = await store.maintenance.send(new GetPeriodicBackupStatusOperation(created.taskId));
        assert.ok(after.status.lastIncrementalBackup instanceof Date);

        const restore = await store.maintenance.server.send(new RestoreBackupOperation({
            databaseName: restoredName,
            backupLocation: after.status.localBackup.backupDirectory,
            type: "Local",
        }));
        await restore.waitForCompletion();

        const restored = storeFor(restoredName);
        restored.initialize();
        try {
            const check = restored.openSession();
            const users = await check.load(["users/1", "users/2", "users/3"]);
            assert.equal(users["users/1"].name, "Ada");
            assert.equal(users["users/3"].name, "Linus");
            const stats = await restored.maintenance.send(new GetStatisticsOperation());
            assert.equal(stats.countOfDocuments, 3);
        } finally {
            restored.dispose();
        }

        await store.maintenance.send(new DeleteOngoingTaskOperation(created.taskId, "Backup"));
        const gone = await store.maintenance.send(new GetPeriodicBackupStatusOperation(created.taskId));
        assert.equal(gone.status, null);
    } finally {
        store.dispose();
        rmSync(folder, { recursive: true, force: true });
    }
});

test("a logical backup task (BackupType Backup) writes RavenDB's files, full then incremental, and its chain restores with the deletions", async () => {
    const { store, database } = await freshStore("backup-logical");
    const folder = backupFolder();
    const restoredName = `${database}-restored`;
    try {
        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/1");
        await session.store(new User("Grace", 45), "users/2");
        await session.saveChanges();

        const created = await store.maintenance.send(new UpdatePeriodicBackupOperation({
            name: "logical",
            backupType: "Backup",
            fullBackupFrequency: "0 2 * * *",
            incrementalBackupFrequency: "0 * * * *",
            localSettings: { folderPath: folder },
            retentionPolicy: { disabled: true },
        }));
        const full = await store.maintenance.send(new StartBackupOperation(true, created.taskId));
        await waitForBackup(store, full.operationId);
        const first = await store.maintenance.send(new GetPeriodicBackupStatusOperation(created.taskId));
        assert.equal(first.status.error, null);
        assert.equal(first.status.backupType, "Backup");
        assert.ok(first.status.localBackup.backupDirectory.endsWith("-backup"));
        assert.ok(readdirSync(first.status.localBackup.backupDirectory).some(f => f.endsWith(".ravendb-full-backup")));

        const more = store.openSession();
        await more.store(new User("Linus", 28), "users/3");
        await more.delete("users/2");
        await more.saveChanges();
        const incremental = await store.maintenance.send(new StartBackupOperation(false, created.taskId));
        await waitForBackup(store, incremental.operationId);
        const after = await store.maintenance.send(new GetPeriodicBackupStatusOperation(created.taskId));
        assert.equal(after.status.error, null);
        assert.equal(after.status.isFull, false);
        assert.ok(after.status.lastEtag > first.status.lastEtag);
        assert.ok(readdirSync(after.status.localBackup.backupDirectory).some(f => f.endsWith(".ravendb-incremental-backup")));

        const restore = await store.maintenance.server.send(new RestoreBackupOperation({
            databaseName: restoredName,
            backupLocation: after.status.localBackup.backupDirectory,
            type: "Local",
        }));
        await restore.waitForCompletion();

        const restored = storeFor(restoredName);
        restored.initialize();
        try {
            const check = restored.openSession();
            const users = await check.load(["users/1", "users/2", "users/3"]);
            assert.equal(users["users/1"].name, "Ada");
            assert.equal(users["users/2"], null);
            assert.equal(users["users/3"].name, "Linus");
            const stats = await restored.maintenance.send(new GetStatisticsOperation());
            assert.equal(stats.countOfDocuments, 2);
        } finally {
            restored.dispose();
        }
        await store.maintenance.send(new DeleteOngoingTaskOperation(created.taskId, "Backup"));
    } finally {
        store.dispose();
        rmSync(folder, { recursive: true, force: true });
    }
});

test("a bad periodic backup configuration is refused naming the field", async () => {
    const { store } = await freshStore("backup-bad");
    try {
        await assert.rejects(
            () => store.maintenance.send(new UpdatePeriodicBackupOperation({
                backupType: "Snapshot",
                fullBackupFrequency: "every night",
                localSettings: { folderPath: backupFolder() },
            })),
            error => /FullBackupFrequency/.test(error.message));
    } finally {
        store.dispose();
    }
});
