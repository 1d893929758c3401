import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import {
    CreateDatabaseOperation,
    DatabaseSmugglerExportOptions,
    DatabaseSmugglerImportOptions,
    GetIndexesOperation,
    IndexDefinition,
    PutIndexesOperation,
} from "ravendb";
import { freshStore, storeFor, User, Company } from "./harness.mjs";

async function newDatabase(store, prefix) {
    const name = `${prefix}-${process.pid}-${Date.now()}`;
    await store.maintenance.server.send(new CreateDatabaseOperation({ databaseName: name }));
    return name;
}

test("store.smuggler.export to a file and import into a new database give the same data", async () => {
    const { store, database } = await freshStore("smuggler");
    const folder = mkdtempSync(join(tmpdir(), "jackdaw-smuggler-"));
    const target = storeFor(await newDatabase(store, "smuggler-copy"));
    target.initialize();
    try {
        const session = store.openSession();
        for (let i = 0; i < 300; i++) {
            await session.store(new User(`user ${i}`, i % 70), `users/${i}`);
        }
        await session.store(new Company("Acme"), "companies/1");
        await session.saveChanges();
        const definition = new IndexDefinition();
        definition.name = "Users/ByAge";
        definition.maps = new Set(["map('Users', u => ({ age: u.age }))"]);
        await store.maintenance.send(new PutIndexesOperation(definition));
        await store.subscriptions.create({ name: "Adults", query: "from Users where age >= 18" });

        const file = join(folder, "export.ravendbdump");
        const exported = await store.smuggler.export(new DatabaseSmugglerExportOptions(), file);
        await exported.waitForCompletion();
        assert.ok(statSync(file).size > 100);

        const imported = await store.smuggler.forDatabase(target.database).import(new DatabaseSmugglerImportOptions(), file);
        await imported.waitForCompletion();

        const copy = target.openSession();
        const users = await copy.load(["users/0", "users/123", "users/299"]);
        assert.equal(users["users/0"].name, "user 0");
        assert.equal(users["users/123"].age, 123 % 70);
        assert.equal(users["users/299"].name, "user 299");
        assert.equal(copy.advanced.getMetadataFor(users["users/0"])["@collection"], "Users");
        assert.equal(copy.advanced.getMetadataFor(users["users/0"])["Raven-Node-Type"], "User");
        assert.equal((await copy.load("companies/1")).name, "Acme");
        assert.equal(await target.openSession().query({ collection: "Users" }).count(), 300);

        const indexes = await target.maintenance.send(new GetIndexesOperation(0, 10));
        assert.deepEqual(indexes.map(i => i.name), ["Users/ByAge"]);
        assert.deepEqual([...indexes[0].maps], [...definition.maps]);
        const subscriptions = await target.subscriptions.getSubscriptions(0, 10);
        assert.deepEqual(subscriptions.map(s => [s.subscriptionName, s.query]), [["Adults", "from Users where age >= 18"]]);
    } finally {
        target.dispose();
        store.dispose();
        rmSync(folder, { recursive: true, force: true });
    }
});

test("store.smuggler.import of a dump with entries to refuse imports the rest", async () => {
    const { store } = await freshStore("smuggler-bad");
    const folder = mkdtempSync(join(tmpdir(), "jackdaw-smuggler-"));
    try {
        const file = join(folder, "hand-made.ravendbdump");
        writeFileSync(file, gzipSync(JSON.stringify({
            BuildVersion: 60000,
            Docs: [
                { name: "kept", "@metadata": { "@id": "users/1", "@collection": "Users", "@flags": "HasCounters", "@counters": ["likes"] } },
                { name: "no id", "@metadata": { "@collection": "Users" } },
                { name: "bad id", "@metadata": { "@id": "users/\u0001" } },
                "not a document",
                { name: "kept too", "@metadata": { "@id": "users/2", "@collection": "Users" } },
            ],
        })));
        const operation = await store.smuggler.import(new DatabaseSmugglerImportOptions(), file);
        await operation.waitForCompletion();
        const session = store.openSession();
        const users = await session.load(["users/1", "users/2"]);
        assert.equal(users["users/1"].name, "kept");
        assert.equal(users["users/2"].name, "kept too");
        assert.equal(session.advanced.getMetadataFor(users["users/1"])["@counters"], undefined);
        assert.equal(await store.openSession().query({ collection: "Users" }).count(), 2);
    } finally {
        store.dispose();
        rmSync(folder, { recursive: true, force: true });
    }
});

test("store.smuggler.import of a file that is no dump is refused with the server's reason", async () => {
    const { store } = await freshStore("smuggler-none");
    const folder = mkdtempSync(join(tmpdir(), "jackdaw-smuggler-"));
    try {
        const file = join(folder, "plain.json");
        writeFileSync(file, JSON.stringify({ Docs: [] }));
        await assert.rejects(() => store.smuggler.import(new DatabaseSmugglerImportOptions(), file), error => /not a \.ravendbdump/.test(error.message));
    } finally {
        store.dispose();
        rmSync(folder, { recursive: true, force: true });
    }
});
