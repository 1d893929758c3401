import { test } from "node:test";
import assert from "node:assert/strict";
import { freshStore, User } from "./harness.mjs";

test("collection queries: session.query, paging, rawQuery on id(), a where through an auto-index", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        for (let i = 1; i <= 5; i++) {
            await session.store(new User(`user ${i}`, 20 + i), `users/${i}`);
        }
        await session.saveChanges();

        const reading = store.openSession();
        const all = await reading.query({ collection: "Users" }).all();
        assert.deepEqual(all.map(u => u.name), ["user 1", "user 2", "user 3", "user 4", "user 5"]);
        const page = await reading.query({ collection: "Users" }).skip(1).take(2).all();
        assert.deepEqual(page.map(u => u.name), ["user 2", "user 3"]);
        const byId = await reading.advanced.rawQuery("from Users where id() = $id").addParameter("id", "users/4").all();
        assert.equal(byId.length, 1);
        assert.equal(byId[0].age, 24);
        // Query results join the session: a later load is served from it.
        const before = reading.advanced.numberOfRequests;
        assert.equal((await reading.load("users/4")).name, "user 4");
        assert.equal(reading.advanced.numberOfRequests, before);

        // A where on a field is answered by the auto-index it creates.
        const named = await reading.query({ collection: "Users" }).waitForNonStaleResults().whereEquals("name", "user 1").all();
        assert.deepEqual(named.map(u => u.age), [21]);
    } finally {
        store.dispose();
    }
});
