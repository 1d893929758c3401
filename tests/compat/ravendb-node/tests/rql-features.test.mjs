import { test } from "node:test";
import assert from "node:assert/strict";
import { ExplainQueryCommand, IndexQuery } from "ravendb";
import { freshStore, User } from "./harness.mjs";

class Employee {
    constructor(notes) {
        this.notes = notes;
    }
}

async function seed(store) {
    const session = store.openSession();
    for (let i = 1; i <= 20; i++) {
        await session.store(new User(`${i % 2 === 0 ? "Anne" : "Bob"} ${i}`, i), `users/${i}`);
    }
    await session.store(new Employee(["Anne has fluent French", "she knows English"]), "employees/1");
    await session.store(new Employee(["fluent in French"]), "employees/2");
    // The words of two values are never near each other.
    await session.store(new Employee(["speaks fluent", "French cuisine"]), "employees/3");
    await session.saveChanges();
}

test("whereRegex: the documents whose value the pattern matches", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const session = store.openSession();
        const annes = await session.query({ collection: "Users" }).waitForNonStaleResults()
            .whereRegex("name", "^anne 1[0-9]$").orderBy("age").all();
        assert.deepEqual(annes.map(u => u.age), [10, 12, 14, 16, 18]);
        await assert.rejects(
            () => session.query({ collection: "Users" }).whereRegex("name", "a(").all(),
            e => e.name === "InvalidQueryException" && /not a valid regular expression/.test(e.message));
    } finally {
        store.dispose();
    }
});

test("filter and filterLimit: tested on what the where finds, before paging, with the scanned count", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const session = store.openSession();
        let stats;
        const filtered = await session.query({ collection: "Users" }).waitForNonStaleResults()
            .whereGreaterThanOrEqual("age", 5).orderBy("age")
            .filter(f => f.lessThan("age", 12).andAlso().not().equals("name", "Bob 7"))
            .statistics(s => stats = s)
            .skip(1).take(3).all();
        assert.deepEqual(filtered.map(u => u.age), [6, 8, 9]);
        assert.equal(stats.totalResults, 6);
        assert.equal(stats.scannedResults, 16);

        const limited = await session.query({ collection: "Users" }).waitForNonStaleResults()
            .whereGreaterThanOrEqual("age", 5).orderByDescending("age")
            .filter(f => f.lessThan("age", 18), 4)
            .statistics(s => stats = s)
            .all();
        assert.deepEqual(limited.map(u => u.age), [17]);
        assert.equal(stats.scannedResults, 4);
    } finally {
        store.dispose();
    }
});

test("proximity: words within the distance, and RavenDB's errors for one word or wildcards", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const session = store.openSession();
        const close = await session.query({ collection: "Employees" }).waitForNonStaleResults()
            .search("notes", "fluent french").proximity(0).all();
        assert.deepEqual(close.map(e => e.notes[0]), ["Anne has fluent French"]);
        const near = await session.query({ collection: "Employees" }).waitForNonStaleResults()
            .search("notes", "fluent french").proximity(1).orderBy("id()").all();
        assert.equal(near.length, 2);
        await assert.rejects(
            () => session.query({ collection: "Employees" }).search("notes", "fluent").proximity(1).all(),
            e => e.name === "InvalidQueryException" && /Proximity search works only on multiple search terms/.test(e.message));
        await assert.rejects(
            () => session.query({ collection: "Employees" }).search("notes", "*luent frenc*").proximity(1).all(),
            e => e.name === "InvalidQueryException" && /Proximity search works only on simple string terms, not wildcard/.test(e.message));
    } finally {
        store.dispose();
    }
});

test("timings: the query's stages and their durations", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const session = store.openSession();
        let timings;
        const results = await session.query({ collection: "Users" }).waitForNonStaleResults()
            .whereGreaterThan("age", 15).timings(t => timings = t).all();
        assert.equal(results.length, 5);
        assert.ok(timings.durationInMs >= 0);
        assert.deepEqual(Object.keys(timings.timings), ["optimizer", "staleness", "query"]);
        assert.ok(timings.timings.query.timings.lucene.durationInMs >= 0);
    } finally {
        store.dispose();
    }
});

test("ExplainQueryCommand: which index would answer the query, and why", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const query = new IndexQuery("from Users where name = 'x'");
        const command = new ExplainQueryCommand(store.conventions, query);
        await store.getRequestExecutor().execute(command);
        assert.equal(command.result.length, 1);
        assert.equal(command.result[0].index, "Auto/Users/Byname");
        assert.match(command.result[0].reason, /would create/);
    } finally {
        store.dispose();
    }
});
