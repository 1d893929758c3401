import { test } from "node:test";
import assert from "node:assert/strict";
import { PatchOperation, PatchRequest, PatchByQueryOperation, DeleteByQueryOperation, IndexQuery } from "ravendb";
import { freshStore, User } from "./harness.mjs";

test("session.advanced.patch and increment: set a value, add to a number, on a loaded and an unloaded document", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(Object.assign(new User("Ada", 36), { visits: 1, address: { city: "London" } }), "users/ada");
        await session.store(new User("Grace", 45), "users/grace");
        await session.saveChanges();

        // Not loaded: the patch runs on the server only.
        const unloaded = store.openSession();
        unloaded.advanced.increment("users/ada", "visits", 5);
        unloaded.advanced.patch("users/ada", "name", "Ada Lovelace");
        unloaded.advanced.patch("users/ada", "address.city", "Marylebone");
        await unloaded.saveChanges();

        // Loaded: the client asks for the document back and takes it into the session.
        const loaded = store.openSession();
        const grace = await loaded.load("users/grace");
        loaded.advanced.increment(grace, "age", 1);
        await loaded.saveChanges();
        assert.equal(grace.age, 46);

        const check = store.openSession();
        const ada = await check.load("users/ada");
        assert.equal(ada.visits, 6);
        assert.equal(ada.name, "Ada Lovelace");
        assert.equal(ada.address.city, "Marylebone");
        assert.equal(ada.age, 36);
        assert.equal((await check.load("users/grace")).age, 46);

        // A patch of a missing document changes nothing and is not an error, as in RavenDB.
        const missing = store.openSession();
        missing.advanced.patch("users/none", "name", "x");
        await missing.saveChanges();
        assert.equal(await store.openSession().load("users/none"), null);
    } finally {
        store.dispose();
    }
});

test("PatchOperation with a script and values; PatchIfMissing; a failing script is a JavaScriptException", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(Object.assign(new User("Ada", 36), { tags: [] }), "users/ada");
        await session.saveChanges();

        const request = new PatchRequest();
        request.script = "this.age += args.years; this.tags.push(args.tag); delete this.name;";
        request.values = { years: 2, tag: "t" };
        const patched = await store.operations.send(new PatchOperation("users/ada", null, request));
        assert.equal(patched.status, "Patched");
        assert.equal(patched.document.age, 38);
        const ada = await store.openSession().load("users/ada");
        assert.equal(ada.age, 38);
        assert.deepEqual(ada.tags, ["t"]);
        assert.equal(ada.name, undefined);

        const missing = await store.operations.send(new PatchOperation("users/none", null, PatchRequest.forScript("this.age++")));
        assert.equal(missing.status, "DocumentDoesNotExist");

        const created = await store.operations.send(new PatchOperation("users/new", null, PatchRequest.forScript("this.age++"),
            Object.assign(new PatchRequest(), { script: "this.age = args.age; this.name = 'New';", values: { age: 1 } }), false));
        assert.equal(created.status, "Created");
        assert.equal((await store.openSession().load("users/new")).age, 1);

        await assert.rejects(
            store.operations.send(new PatchOperation("users/ada", null, PatchRequest.forScript("this.age = 1;\nthrow new Error('no');"))),
            (err) => err.name === "JavaScriptException" && /line 2/.test(err.message));
        assert.equal((await store.openSession().load("users/ada")).age, 38);
    } finally {
        store.dispose();
    }
});

test("PatchByQueryOperation and DeleteByQueryOperation, waited on with waitForCompletion", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        for (let i = 0; i < 30; i++) {
            await session.store(new User("user" + i, i), "users/" + i);
        }
        await session.saveChanges();

        const query = new IndexQuery();
        query.query = "from Users where age >= $min update { this.name = this.name + args.suffix; }";
        query.queryParameters = { min: 20, suffix: "!" };
        const patch = await store.operations.send(new PatchByQueryOperation(query));
        await patch.waitForCompletion();
        assert.equal((await store.openSession().load("users/25")).name, "user25!");
        assert.equal((await store.openSession().load("users/5")).name, "user5");

        const patchAll = await store.operations.send(new PatchByQueryOperation("from Users as u update { u.visited = true; }"));
        await patchAll.waitForCompletion();
        assert.equal((await store.openSession().load("users/0")).visited, true);

        const remove = new IndexQuery();
        remove.query = "from Users where age < $max";
        remove.queryParameters = { max: 10 };
        const deletion = await store.operations.send(new DeleteByQueryOperation(remove));
        await deletion.waitForCompletion();
        assert.equal(await store.openSession().load("users/3"), null);
        assert.notEqual(await store.openSession().load("users/10"), null);

        const failing = await store.operations.send(new PatchByQueryOperation("from Users update { throw new Error('nope'); }"));
        await assert.rejects(failing.waitForCompletion(), (err) => /nope/.test(err.message));
    } finally {
        store.dispose();
    }
});
