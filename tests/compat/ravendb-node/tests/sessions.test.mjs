import { test } from "node:test";
import assert from "node:assert/strict";
import { freshStore, storeFor, nodeTag, tagOf, User, Company } from "./harness.mjs";

test("store with an explicit id, saveChanges, load, and the metadata RavenDB's client tracks", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        const ada = new User("Ada", 36);
        await session.store(ada, "users/ada");
        await session.saveChanges();
        assert.equal(ada.id, "users/ada");
        const metadata = session.advanced.getMetadataFor(ada);
        assert.equal(metadata["@id"], "users/ada");
        assert.equal(metadata["@collection"], "Users");
        assert.match(metadata["@change-vector"], new RegExp(`^${nodeTag}:\\d+-`));

        const other = store.openSession();
        const loaded = await other.load("users/ada");
        assert.ok(loaded instanceof User, "the client revives its class from Raven-Node-Type");
        assert.equal(loaded.name, "Ada");
        assert.equal(loaded.age, 36);
        const loadedMetadata = other.advanced.getMetadataFor(loaded);
        assert.equal(loadedMetadata["@id"], "users/ada");
        assert.equal(loadedMetadata["@collection"], "Users");
        assert.match(loadedMetadata["@last-modified"], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    } finally {
        store.dispose();
    }
});

test("store with a collection prefix id: the server completes it and the client adopts it", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        const first = new User("First");
        const second = new User("Second");
        await session.store(first, "users/");
        await session.store(second, "users/");
        await session.saveChanges();
        assert.match(first.id, new RegExp(`^users/\\d+-${nodeTag}$`));
        assert.match(second.id, new RegExp(`^users/\\d+-${nodeTag}$`));
        assert.notEqual(first.id, second.id);
        const check = store.openSession();
        assert.equal((await check.load(second.id)).name, "Second");
    } finally {
        store.dispose();
    }
});

test("store with no id uses HiLo ranges: users/1-A, users/2-A, ... and never the same id twice", async () => {
    const { store, database } = await freshStore();
    try {
        const session = store.openSession();
        const users = [];
        for (let i = 0; i < 5; i++) {
            const user = new User(`user ${i}`);
            await session.store(user);
            users.push(user);
        }
        await session.saveChanges();
        const tag = tagOf(users[0].id);
        assert.deepEqual(users.map(u => u.id), [1, 2, 3, 4, 5].map(n => `users/${n}-${tag}`));

        // Another store (another process, to the server) gets a range of its own; the first store
        // returns the unused end of its range when it is disposed.
        const other = storeFor(database);
        other.initialize();
        const otherSession = other.openSession();
        const company = new Company("Acme");
        const user = new User("Other");
        await otherSession.store(company);
        await otherSession.store(user);
        await otherSession.saveChanges();
        assert.equal(company.id, `companies/1-${tag}`);
        assert.ok(!users.map(u => u.id).includes(user.id), `${user.id} was handed out twice`);
        other.dispose();

        const all = store.openSession();
        const loaded = await all.load([...users.map(u => u.id), user.id]);
        assert.equal(Object.values(loaded).filter(x => x).length, 6);
    } finally {
        store.dispose();
    }
});

test("load of many, with null for the missing, and include of a referenced document", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(new User("Grace", 45), "users/grace");
        await session.store(new User("Ada", 36, "users/grace"), "users/ada");
        await session.saveChanges();

        const many = store.openSession();
        const loaded = await many.load(["users/ada", "users/none", "users/grace"]);
        assert.equal(loaded["users/ada"].name, "Ada");
        assert.equal(loaded["users/none"], null);
        assert.equal(loaded["users/grace"].name, "Grace");

        const withInclude = store.openSession();
        const ada = await withInclude.include("friendId").load("users/ada");
        assert.equal(ada.friendId, "users/grace");
        const requests = withInclude.advanced.numberOfRequests;
        const grace = await withInclude.load(ada.friendId);
        assert.equal(grace.name, "Grace");
        assert.equal(withInclude.advanced.numberOfRequests, requests, "the included document came with the first load");

        const missing = store.openSession();
        assert.equal(await missing.load("users/none"), null);
    } finally {
        store.dispose();
    }
});

test("delete, and change tracking: an unchanged entity is not sent, a changed one is", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/ada");
        await session.store(new User("Grace", 45), "users/grace");
        await session.saveChanges();

        const tracking = store.openSession();
        const ada = await tracking.load("users/ada");
        const before = tracking.advanced.numberOfRequests;
        assert.equal(tracking.advanced.hasChanges(), false);
        await tracking.saveChanges();
        assert.equal(tracking.advanced.numberOfRequests, before, "nothing changed: no request");
        ada.age = 37;
        assert.equal(tracking.advanced.hasChanged(ada), true);
        await tracking.delete("users/grace");
        await tracking.saveChanges();

        const check = store.openSession();
        assert.equal((await check.load("users/ada")).age, 37);
        assert.equal(await check.load("users/grace"), null);
    } finally {
        store.dispose();
    }
});

test("useOptimisticConcurrency: a conflicting save gets the client's ConcurrencyException", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/ada");
        await session.saveChanges();

        const first = store.openSession();
        const second = store.openSession();
        first.advanced.useOptimisticConcurrency = true;
        second.advanced.useOptimisticConcurrency = true;
        const a = await first.load("users/ada");
        const b = await second.load("users/ada");
        a.age = 40;
        await first.saveChanges();
        b.age = 50;
        await assert.rejects(() => second.saveChanges(), error => error.name === "ConcurrencyException");

        // A new document with optimistic concurrency must not exist yet.
        const third = store.openSession();
        third.advanced.useOptimisticConcurrency = true;
        await third.store(new User("Impostor"), "users/ada");
        await assert.rejects(() => third.saveChanges(), error => error.name === "ConcurrencyException");

        const check = store.openSession();
        assert.equal((await check.load("users/ada")).age, 40);
    } finally {
        store.dispose();
    }
});

test("a database that does not exist gives the client's DatabaseDoesNotExistException", async () => {
    const store = storeFor("no-such-database");
    store.initialize();
    try {
        const session = store.openSession();
        await assert.rejects(() => session.load("users/1"), error => error.name === "DatabaseDoesNotExistException");
    } finally {
        store.dispose();
    }
});

test("the HiLo state is a document the client can load: Raven/Hilo/users with its Max", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        const user = new User("Ada", 36);
        await session.store(user);
        await session.saveChanges();
        assert.equal(user.id, `users/1-${tagOf(user.id)}`);

        const reader = store.openSession();
        const hilo = await reader.load("Raven/Hilo/users");
        assert.ok(hilo.Max >= 32, `Max is ${hilo.Max}`);
        assert.equal(reader.advanced.getMetadataFor(hilo)["@collection"], "@hilo");
    } finally {
        store.dispose();
    }
});

test("loadStartingWith with matches, exclude, startAfter and paging", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        for (const id of ["users/1", "users/10", "users/11", "users/2", "users/20", "users/21"]) {
            await session.store(new User(id, 1), id);
        }
        await session.saveChanges();
        const reader = store.openSession();
        const names = list => list.map(u => u.name);
        assert.deepEqual(names(await reader.advanced.loadStartingWith("users/", { matches: "1?|2?" })), ["users/10", "users/11", "users/20", "users/21"]);
        assert.deepEqual(names(await reader.advanced.loadStartingWith("users/", { exclude: "1*" })), ["users/2", "users/20", "users/21"]);
        assert.deepEqual(names(await reader.advanced.loadStartingWith("users/", { startAfter: "users/11", pageSize: 2 })), ["users/2", "users/20"]);
        assert.deepEqual(names(await reader.advanced.loadStartingWith("users/", { matches: "2*", start: 1, pageSize: 1 })), ["users/20"]);
    } finally {
        store.dispose();
    }
});
