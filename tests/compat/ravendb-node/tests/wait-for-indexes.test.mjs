import { test } from "node:test";
import assert from "node:assert/strict";
import { IndexDefinition, PutIndexesOperation, StartIndexingOperation, StopIndexingOperation } from "ravendb";
import { freshStore, User } from "./harness.mjs";

async function withIndex(store) {
    const definition = new IndexDefinition();
    definition.name = "Users/ByName";
    definition.maps = new Set(["map('Users', u => ({ name: u.name }))"]);
    await store.maintenance.send(new PutIndexesOperation(definition));
}

test("waitForIndexesAfterSaveChanges: a query right after the save sees it", async () => {
    const { store } = await freshStore();
    try {
        await withIndex(store);
        for (let i = 0; i < 5; i++) {
            const session = store.openSession();
            session.advanced.waitForIndexesAfterSaveChanges({ indexes: ["Users/ByName"], timeout: 30_000 });
            await session.store(new User(`user ${i}`, 20 + i));
            await session.saveChanges();
            const found = await store.openSession().query({ indexName: "Users/ByName" }).whereEquals("name", `user ${i}`).all();
            assert.equal(found.length, 1);
        }
    } finally {
        store.dispose();
    }
});

test("waitForIndexesAfterSaveChanges with indexing stopped throws, or returns when throwOnTimeout is false", async () => {
    const { store } = await freshStore();
    try {
        await withIndex(store);
        await store.maintenance.send(new StopIndexingOperation());
        const started = Date.now();
        const session = store.openSession();
        session.advanced.waitForIndexesAfterSaveChanges({ timeout: 60_000 });
        await session.store(new User("late", 40), "users/late");
        await assert.rejects(() => session.saveChanges(), error => /its indexing is stopped/.test(error.message));

        const relaxed = store.openSession();
        relaxed.advanced.waitForIndexesAfterSaveChanges({ timeout: 60_000, throwOnTimeout: false });
        await relaxed.store(new User("relaxed", 41), "users/relaxed");
        await relaxed.saveChanges();
        assert.ok(Date.now() - started < 30_000, "a stopped index is not waited for");
        assert.equal((await store.openSession().load("users/late")).name, "late");
    } finally {
        await store.maintenance.send(new StartIndexingOperation());
        store.dispose();
    }
});
