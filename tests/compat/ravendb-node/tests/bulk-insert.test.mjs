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

test("bulkInsert reports its progress on 'progress' with growing counts while it runs", async () => {
    const { store } = await freshStore();
    try {
        const bulk = store.bulkInsert();
        const seen = [];
        // Registered before the first store: the client then watches its operation on the changes feed.
        bulk.on("progress", e => seen.push(e.progress));
        // The server reports about once a second while the counts move, and the client sends its
        // buffer each MB: keep inserting until two reports came (not for a fixed time), with a cap.
        let stored = 0;
        const deadline = Date.now() + 120_000;
        while (seen.length < 2 && Date.now() < deadline) {
            for (let k = 0; k < 1000; k++, stored++) {
                await bulk.store(new User(`progress ${stored}`, stored % 90), `progress/${stored}`);
            }
            await new Promise(resolve => setTimeout(resolve, 20));
        }
        await bulk.finish();

        assert.ok(seen.length >= 2, `expected at least two progress reports after ${stored} documents, got ${seen.length}`);
        for (const progress of seen) {
            assert.ok(progress.documentsProcessed > 0 && progress.documentsProcessed <= stored);
            assert.ok(progress.total <= progress.documentsProcessed);
            assert.equal(progress.attachmentsProcessed, 0);
            if (progress.total > 0) {
                assert.match(progress.lastProcessedId, /^progress\/\d+$/);
            }
        }
        for (let i = 1; i < seen.length; i++) {
            assert.ok(seen[i].documentsProcessed >= seen[i - 1].documentsProcessed, "the counts never go back");
        }
        assert.ok(seen.at(-1).documentsProcessed > seen[0].documentsProcessed, "the counts grew");

        const session = store.openSession();
        assert.equal((await session.load(`progress/${stored - 1}`)).name, `progress ${stored - 1}`);
    } finally {
        store.dispose();
    }
});
