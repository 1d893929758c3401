import { test } from "node:test";
import assert from "node:assert/strict";
import { IndexDefinition, PutIndexesOperation } from "ravendb";
import { freshStore, rawFetch, User, Company } from "./harness.mjs";

// The Node.js client's changes API over Jackdaw's /databases/{db}/changes WebSocket.

/** Collects an observable's changes; `next(predicate)` waits for the first one that matches. */
function collect(observable) {
    const seen = [];
    const waiters = [];
    observable.on("data", change => {
        seen.push(change);
        for (const waiter of [...waiters]) {
            if (waiter.predicate(change)) {
                waiters.splice(waiters.indexOf(waiter), 1);
                clearTimeout(waiter.timer);
                waiter.resolve(change);
            }
        }
    });
    return {
        seen,
        next(predicate, what = "a change") {
            const found = seen.find(predicate);
            if (found) {
                return Promise.resolve(found);
            }
            return new Promise((resolve, reject) => {
                const timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}; seen: ${JSON.stringify(seen)}`)), 20000);
                waiters.push({ predicate, resolve, timer });
            });
        },
    };
}

async function put(store, entity, id) {
    const session = store.openSession();
    await session.store(entity, id);
    await session.saveChanges();
}

async function remove(store, id) {
    const session = store.openSession();
    session.delete(id);
    await session.saveChanges();
}

test("forDocument: a Put then a Delete of that document, with RavenDB's fields", async () => {
    const { store } = await freshStore();
    try {
        const changes = store.changes();
        await changes.ensureConnectedNow();
        const observable = changes.forDocument("users/1");
        const received = collect(observable);
        await observable.ensureSubscribedNow();

        await put(store, new User("Other"), "users/2");
        await put(store, new User("Ada"), "users/1");
        const session = store.openSession();
        const loaded = await session.load("users/1");
        const changeVector = session.advanced.getChangeVectorFor(loaded);
        const putChange = await received.next(c => c.type === "Put", "the Put");
        assert.equal(putChange.id, "users/1");
        assert.equal(putChange.collectionName, "Users");
        assert.equal(putChange.changeVector, changeVector);

        await remove(store, "users/1");
        const deleteChange = await received.next(c => c.type === "Delete", "the Delete");
        assert.equal(deleteChange.id, "users/1");
        assert.deepEqual(received.seen.map(c => `${c.type} ${c.id}`), ["Put users/1", "Delete users/1"]);
    } finally {
        store.dispose();
    }
});

test("forDocumentsInCollection (class and name), forDocumentsStartingWith and forAllDocuments", async () => {
    const { store } = await freshStore();
    try {
        const changes = store.changes();
        const byClass = changes.forDocumentsInCollection(Company);
        const byName = changes.forDocumentsInCollection("users");
        const byPrefix = changes.forDocumentsStartingWith("companies/1");
        const all = changes.forAllDocuments();
        const companies = collect(byClass);
        const users = collect(byName);
        const prefixed = collect(byPrefix);
        const everything = collect(all);
        await Promise.all([byClass, byName, byPrefix, all].map(o => o.ensureSubscribedNow()));

        await put(store, new Company("Acme"), "companies/1");
        await put(store, new User("Ada"), "users/1");
        await put(store, new Company("Globex"), "companies/2");
        await put(store, new Company("Initech"), "companies/10");
        await put(store, new User("Bob"), "users/2");

        await everything.next(c => c.id === "users/2", "users/2 in forAllDocuments");
        await users.next(c => c.id === "users/2", "users/2 in the Users collection");
        await companies.next(c => c.id === "companies/10", "companies/10 in the Companies collection");
        await prefixed.next(c => c.id === "companies/10", "companies/10 by prefix");
        assert.deepEqual(everything.seen.map(c => c.id), ["companies/1", "users/1", "companies/2", "companies/10", "users/2"]);
        assert.deepEqual(users.seen.map(c => c.id), ["users/1", "users/2"]);
        assert.deepEqual(companies.seen.map(c => c.id), ["companies/1", "companies/2", "companies/10"]);
        assert.deepEqual(prefixed.seen.map(c => c.id), ["companies/1", "companies/10"]);
        assert.ok(everything.seen.every(c => c.type === "Put" && /^A:\d+-/.test(c.changeVector)));
    } finally {
        store.dispose();
    }
});

test("forIndex and forAllIndexes: IndexAdded, then BatchCompleted as documents are indexed", async () => {
    const { store } = await freshStore();
    try {
        const changes = store.changes();
        const one = changes.forIndex("Users/ByName");
        const all = changes.forAllIndexes();
        const indexChanges = collect(one);
        const allChanges = collect(all);
        await one.ensureSubscribedNow();
        await all.ensureSubscribedNow();

        const definition = new IndexDefinition();
        definition.name = "Users/ByName";
        definition.maps = new Set(["map('Users', u => ({ name: u.name }))"]);
        await store.maintenance.send(new PutIndexesOperation(definition));
        await indexChanges.next(c => c.type === "IndexAdded", "IndexAdded");
        await put(store, new User("Ada"), "users/1");
        const batch = await indexChanges.next(c => c.type === "BatchCompleted", "BatchCompleted");
        assert.equal(batch.name, "Users/ByName");
        await allChanges.next(c => c.type === "BatchCompleted" && c.name === "Users/ByName", "BatchCompleted for every index");
    } finally {
        store.dispose();
    }
});

test("an unsubscribed observable gets nothing more; a dropped connection reconnects and subscribes again", async () => {
    const { store, database } = await freshStore();
    try {
        const changes = store.changes();
        const first = changes.forDocument("users/1");
        const handler = () => assert.fail("unsubscribed, yet a change arrived");
        first.on("data", handler);
        await first.ensureSubscribedNow();
        first.off("data", handler);

        const observable = changes.forDocumentsInCollection("Users");
        const received = collect(observable);
        await observable.ensureSubscribedNow();

        // The server closes the connection (as on a restart): the client opens another and watches again.
        const debug = await (await rawFetch(`/databases/${encodeURIComponent(database)}/changes/debug`)).json();
        const connection = debug.Connections.find(c => c.WatchCollections.includes("Users"));
        assert.ok(connection, JSON.stringify(debug));
        assert.deepEqual(connection.WatchDocuments, []);
        const dropped = await rawFetch(`/databases/${encodeURIComponent(database)}/changes?id=${connection.Id}`, { method: "DELETE" });
        assert.equal(dropped.status, 204);
        const deadline = Date.now() + 20000;
        for (;;) {
            const again = await (await rawFetch(`/databases/${encodeURIComponent(database)}/changes/debug`)).json();
            if (again.Connections.some(c => c.Id !== connection.Id && c.WatchCollections.includes("Users"))) {
                break;
            }
            assert.ok(Date.now() < deadline, "the client did not reconnect: " + JSON.stringify(again));
            await new Promise(resolve => setTimeout(resolve, 50));
        }

        await put(store, new User("Ada"), "users/1");
        await received.next(c => c.id === "users/1", "users/1 after the reconnection");
    } finally {
        store.dispose();
    }
});
