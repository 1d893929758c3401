import { test } from "node:test";
import assert from "node:assert/strict";
import { freshStore, User, Company } from "./harness.mjs";

test("bulkInsert streams RavenDB's command array and every document arrives", async () => {
    const { store } = await freshStore();
    try {
        const bulk = store.bulkInsert();
        for (let i = 0; i < 2500; i++) {
            await bulk.store(new User(`user ${i}`, i % 90), `users/${i}`);
        }
        // Without an id: HiLo ranges, as for sessions.
        const acme = new Company("Acme");
        await bulk.store(acme);
        await bulk.finish();
        assert.match(acme.id, /^companies\/\d+-A$/);

        const session = store.openSession();
        const some = await session.load(["users/0", "users/1234", "users/2499", acme.id]);
        assert.equal(some["users/0"].name, "user 0");
        assert.equal(some["users/1234"].age, 1234 % 90);
        assert.equal(some["users/2499"].name, "user 2499");
        assert.equal(some[acme.id].name, "Acme");
        assert.equal(session.advanced.getMetadataFor(some["users/0"])["@collection"], "Users");
        assert.equal(session.advanced.getMetadataFor(some["users/0"])["Raven-Node-Type"], "User");
    } finally {
        store.dispose();
    }
});

test("a bulk insert that the server refuses is reported by the client with the server's reason", async () => {
    const { store } = await freshStore();
    try {
        const bulk = store.bulkInsert();
        await bulk.store(new User("fine"), "users/fine");
        // The client writes a control character of an id unescaped: not JSON, so the server stops there.
        await bulk.store(new User("bad"), "users/\u0001bad");
        await assert.rejects(() => bulk.finish(), error => error.name === "BulkInsertAbortedException" && /command 2/.test(error.message));

        // The database goes on working.
        const session = store.openSession();
        await session.store(new User("after"), "users/after");
        await session.saveChanges();
        assert.equal((await store.openSession().load("users/after")).name, "after");
    } finally {
        store.dispose();
    }
});

test("a compressed bulk insert (useCompression) arrives whole", async () => {
    const { store } = await freshStore();
    try {
        const bulk = store.bulkInsert({ useCompression: true });
        for (let i = 0; i < 500; i++) {
            await bulk.store(new User(`zipped ${i}`, i), `zipped/${i}`);
        }
        await bulk.finish();
        const session = store.openSession();
        assert.equal((await session.load("zipped/499")).name, "zipped 499");
    } finally {
        store.dispose();
    }
});

test("bulkInsert with skipOverwriteIfUnchanged leaves identical documents as they are", async () => {
    const { store } = await freshStore();
    try {
        const first = store.bulkInsert();
        for (let i = 1; i <= 3; i++) {
            await first.store(new User(`user ${i}`, 20 + i), `users/${i}`);
        }
        await first.finish();
        const before = store.openSession();
        const vectors = [];
        for (let i = 1; i <= 3; i++) {
            vectors.push(before.advanced.getChangeVectorFor(await before.load(`users/${i}`)));
        }

        const again = store.bulkInsert({ skipOverwriteIfUnchanged: true });
        await again.store(new User("user 1", 21), "users/1");
        await again.store(new User("user two", 22), "users/2");
        await again.store(new User("user 3", 23), "users/3");
        await again.finish();

        const after = store.openSession();
        const now = [];
        for (let i = 1; i <= 3; i++) {
            now.push(after.advanced.getChangeVectorFor(await after.load(`users/${i}`)));
        }
        assert.equal(now[0], vectors[0]);
        assert.notEqual(now[1], vectors[1]);
        assert.equal(now[2], vectors[2]);
    } finally {
        store.dispose();
    }
});
