import { test } from "node:test";
import assert from "node:assert/strict";
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
