import { test } from "node:test";
import assert from "node:assert/strict";
import { freshStore, nodeTag, User } from "./harness.mjs";

async function storeUsers(store, count) {
    const session = store.openSession();
    for (let i = 1; i <= count; i++) {
        await session.store(new User(`user ${i}`, 20 + i, i > 1 ? `users/${i - 1}` : undefined), `users/${i}`);
    }
    await session.saveChanges();
}

test("lazy loads, a lazy query and a lazy count go to the server as one multi_get", async () => {
    const { store } = await freshStore();
    try {
        await storeUsers(store, 5);
        // Make the auto-index the where needs first, so the lazy query does not wait for it.
        await store.openSession().query({ collection: "Users" }).waitForNonStaleResults().whereGreaterThan("age", 0).all();

        const session = store.openSession();
        const one = session.advanced.lazily.load("users/1");
        const several = session.advanced.lazily.load(["users/2", "users/3", "users/404"]);
        const older = session.query({ collection: "Users" }).whereGreaterThan("age", 23).orderBy("age", "Long").lazily();
        const count = session.query({ collection: "Users" }).countLazily();
        assert.equal(one.isValueCreated(), false);
        assert.equal(session.advanced.numberOfRequests, 0);

        await session.advanced.eagerly.executeAllPendingLazyOperations();
        assert.equal(session.advanced.numberOfRequests, 1, "all four operations in one request");

        const user1 = await one.getValue();
        assert.ok(user1 instanceof User);
        assert.equal(user1.name, "user 1");
        const loaded = await several.getValue();
        assert.deepEqual(Object.keys(loaded).sort(), ["users/2", "users/3", "users/404"]);
        assert.equal(loaded["users/2"].age, 22);
        assert.equal(loaded["users/404"], null);
        assert.deepEqual((await older.getValue()).map(u => u.name), ["user 4", "user 5"]);
        assert.equal(await count.getValue(), 5);
        assert.equal(session.advanced.numberOfRequests, 1);

        // The lazy results joined the session as loads do: same instances, no further request.
        assert.equal(await session.load("users/1"), user1);
        assert.equal(await session.load("users/4"), (await older.getValue())[0]);
        assert.equal(session.advanced.numberOfRequests, 1);

        // Changes to lazily loaded documents are saved.
        user1.name = "changed lazily";
        await session.saveChanges();
        assert.equal((await store.openSession().load("users/1")).name, "changed lazily");
    } finally {
        store.dispose();
    }
});

test("getValue() of one lazy operation runs every pending one; an id already in the session costs nothing", async () => {
    const { store } = await freshStore();
    try {
        await storeUsers(store, 3);
        const session = store.openSession();
        const first = await session.load("users/1");
        const again = session.advanced.lazily.load("users/1");
        assert.equal(await again.getValue(), first);
        assert.equal(session.advanced.numberOfRequests, 1);

        const second = session.advanced.lazily.load("users/2");
        const third = session.advanced.lazily.load("users/3");
        assert.equal((await third.getValue()).name, "user 3");
        assert.equal(session.advanced.numberOfRequests, 2);
        assert.equal(second.isValueCreated(), false);
        assert.equal((await second.getValue()).name, "user 2");
        assert.equal(session.advanced.numberOfRequests, 2, "the second load came with the third");
    } finally {
        store.dispose();
    }
});

test("lazy loadStartingWith and a lazy load with include", async () => {
    const { store } = await freshStore();
    try {
        await storeUsers(store, 4);
        const session = store.openSession();
        const page = session.advanced.lazily.loadStartingWith("users/", { pageSize: 2 });
        const withFriend = session.advanced.lazily.include("friendId").load("users/3");
        await session.advanced.eagerly.executeAllPendingLazyOperations();
        assert.equal(session.advanced.numberOfRequests, 1);

        assert.deepEqual(Object.keys(await page.getValue()).sort(), ["users/1", "users/2"]);
        const user3 = await withFriend.getValue();
        assert.equal(user3.friendId, "users/2");
        // The included friend is in the session already.
        assert.equal((await session.load("users/2")).name, "user 2");
        assert.equal(session.advanced.numberOfRequests, 1);
    } finally {
        store.dispose();
    }
});

test("a second lazy load of the same document is answered 304 and served from the client's cache", async () => {
    const { store } = await freshStore();
    try {
        await storeUsers(store, 1);
        {
            const session = store.openSession();
            assert.equal((await session.advanced.lazily.load("users/1").getValue()).name, "user 1");
        }
        const executor = store.getRequestExecutor();
        assert.ok(executor.cache.numberOfItems >= 1, "the lazy load's answer carried an ETag and was cached");
        const sent = [];
        executor.on("beforeRequest", e => { if (e.url.endsWith("/multi_get")) sent.push(JSON.parse(e.request.body)); });
        {
            const session = store.openSession();
            const lazy = session.advanced.lazily.load("users/1");
            assert.equal((await lazy.getValue()).name, "user 1");
        }
        // The client asked with the cached change vector (a 304 then keeps its cached copy).
        assert.match(sent[0].Requests[0].Headers["If-None-Match"], new RegExp(`^${nodeTag}:\\d+-`));
        // After a change the cached ETag no longer matches: the new version comes back.
        {
            const session = store.openSession();
            const user = await session.load("users/1");
            user.name = "renamed";
            await session.saveChanges();
        }
        const session = store.openSession();
        assert.equal((await session.advanced.lazily.load("users/1").getValue()).name, "renamed");
    } finally {
        store.dispose();
    }
});

test("an operation that fails on the server makes executeAllPendingLazyOperations throw", async () => {
    const { store } = await freshStore();
    try {
        await storeUsers(store, 1);
        const session = store.openSession();
        session.advanced.lazily.load("users/1");
        session.advanced.rawQuery("from Users where").lazily();
        await assert.rejects(() => session.advanced.eagerly.executeAllPendingLazyOperations(), /status code: 400/);
    } finally {
        store.dispose();
    }
});
