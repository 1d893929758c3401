import { test } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { AbstractJavaScriptIndexCreationTask } from "ravendb";
import { freshStore, User, Company } from "./harness.mjs";

/** Every item of a stream the client hands out (a Node.js Readable in object mode). */
async function collect(readable) {
    const items = [];
    for await (const item of readable) {
        items.push(item);
    }
    return items;
}

async function seedUsers(store, count) {
    const session = store.openSession();
    for (let i = 1; i <= count; i++) {
        await session.store(new User(`user ${i}`, 20 + i), `users/${i}`);
    }
    await session.store(new Company("Acme"), "companies/1");
    await session.saveChanges();
}

class UsersByAge extends AbstractJavaScriptIndexCreationTask {
    constructor() {
        super();
        this.map(User, u => ({ age: u.age, name: u.name }));
    }
}

test("session.advanced.stream(startsWith): documents in id order with id, change vector and metadata; matches, exclude, startAfter, start, pageSize", async () => {
    const { store } = await freshStore();
    try {
        await seedUsers(store, 12);
        const session = store.openSession();

        const items = await collect(await session.advanced.stream("users/"));
        const expected = Array.from({ length: 12 }, (_, i) => `users/${i + 1}`).sort();
        assert.deepEqual(items.map(x => x.id), expected);
        for (const item of items) {
            assert.match(item.changeVector, /^A:\d+-/);
            assert.equal(item.metadata["@collection"], "Users");
            assert.equal(item.metadata["@id"], item.id);
            assert.equal(item.document.name, `user ${item.id.slice("users/".length)}`);
        }
        // Streamed documents are not tracked: a load asks the server.
        const before = session.advanced.numberOfRequests;
        await session.load("users/3");
        assert.equal(session.advanced.numberOfRequests, before + 1);

        const page = await collect(await session.advanced.stream("users/", { matches: "1*", startAfter: "users/1", start: 1, pageSize: 2 }));
        assert.deepEqual(page.map(x => x.id), ["users/11", "users/12"]);
        const excluded = await collect(await session.advanced.stream("users/", { exclude: "1*|2" }));
        assert.deepEqual(excluded.map(x => x.id), ["users/3", "users/4", "users/5", "users/6", "users/7", "users/8", "users/9"]);
        const typed = await collect(await session.advanced.stream("users/1", { documentType: User }));
        assert.ok(typed.every(x => x.document instanceof User));
    } finally {
        store.dispose();
    }
});

test("session.advanced.stream(query, statsCallback): an auto-index query in order, its statistics, raw and collection queries", async () => {
    const { store } = await freshStore();
    try {
        await seedUsers(store, 30);
        const session = store.openSession();
        // The auto-index is built first: a stream does not wait for indexing.
        await session.query({ collection: "Users" }).waitForNonStaleResults().whereGreaterThan("age", 35).all();

        let stats;
        const query = session.query({ collection: "Users" }).whereGreaterThan("age", 35).orderByDescending("age", "Long");
        const items = await collect(await session.advanced.stream(query, s => stats = s));
        assert.deepEqual(items.map(x => x.document.age), Array.from({ length: 15 }, (_, i) => 50 - i));
        assert.deepEqual(items.map(x => x.id), Array.from({ length: 15 }, (_, i) => `users/${30 - i}`));
        assert.equal(stats.totalResults, 15);
        assert.match(stats.indexName, /^Auto\/Users\/By/);
        assert.equal(stats.isStale, false);
        assert.equal(typeof stats.resultEtag, "number");
        assert.ok(stats.indexTimestamp instanceof Date);

        let rawStats;
        const raw = session.advanced.rawQuery("from Users where age between $low and $high").addParameter("low", 22).addParameter("high", 24);
        const rawItems = await collect(await session.advanced.stream(raw, s => rawStats = s));
        assert.deepEqual(rawItems.map(x => x.id).sort(), ["users/2", "users/3", "users/4"]);
        assert.equal(rawStats.totalResults, 3);

        let allStats;
        const all = await collect(await session.advanced.stream(session.query({ collection: "Users" }), s => allStats = s));
        assert.equal(all.length, 30);
        assert.equal(allStats.totalResults, 30);
        assert.equal(allStats.indexName, "collection/Users");

        // streamInto: the results as JSON lines into a writable. Its promise never settles in
        // ravendb 7.2.6 (RavenCommandResponsePipeline.stream drops the callback it is given, on
        // any server), so the writable's end is what to wait for.
        const lines = [];
        const sink = new Writable({ write(chunk, encoding, done) { lines.push(chunk.toString()); done(); } });
        session.advanced.streamInto(session.query({ collection: "Users" }).whereGreaterThan("age", 35), sink);
        await finished(sink);
        const written = lines.join("").split("\n").filter(l => l.length > 0).map(l => JSON.parse(l));
        assert.equal(written.length, 15);
        assert.ok(written.every(d => d.age > 35 && d["@metadata"]["@id"].startsWith("users/")));

        const projected = await collect(await session.advanced.stream(session.query({ collection: "Users" }).whereEquals("age", 25).selectFields(["name"])));
        assert.deepEqual(projected.map(x => x.document), ["user 5"]);
    } finally {
        store.dispose();
    }
});

test("session.advanced.stream of a static index query", async () => {
    const { store } = await freshStore();
    try {
        await seedUsers(store, 20);
        await new UsersByAge().execute(store);
        const session = store.openSession();
        await session.query({ indexName: "UsersByAge" }).waitForNonStaleResults().all();

        let stats;
        const query = session.query({ indexName: "UsersByAge" }).whereLessThan("age", 26).orderBy("name");
        const items = await collect(await session.advanced.stream(query, s => stats = s));
        assert.deepEqual(items.map(x => x.document.name), ["user 1", "user 2", "user 3", "user 4", "user 5"]);
        assert.equal(stats.indexName, "UsersByAge");
        assert.equal(stats.totalResults, 5);
    } finally {
        store.dispose();
    }
});

test("session.advanced.stream of a bad query fails with the server's message", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await assert.rejects(
            async () => collect(await session.advanced.stream(session.advanced.rawQuery("from Users where"))),
            err => /position/.test(err.message));
    } finally {
        store.dispose();
    }
});
