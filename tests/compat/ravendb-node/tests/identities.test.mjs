import { test } from "node:test";
import assert from "node:assert/strict";
import { GetIdentitiesOperation, NextIdentityForCommand, SeedIdentityForCommand } from "ravendb";
import { freshStore, User } from "./harness.mjs";

test("identities: users| in a session, NextIdentityForCommand, SeedIdentityForCommand, GetIdentitiesOperation", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        const adi = new User("Adi", 30);
        await session.store(adi, "users|");
        await session.saveChanges();
        assert.equal(adi.id, "users/1");

        const next = new NextIdentityForCommand("users");
        await store.getRequestExecutor().execute(next);
        assert.equal(next.result, 2);

        const avivi = new User("Avivi", 31);
        const later = store.openSession();
        await later.store(avivi, "users|");
        await later.saveChanges();
        assert.equal(avivi.id, "users/3");

        const seed = new SeedIdentityForCommand("users", 1990);
        await store.getRequestExecutor().execute(seed);
        assert.equal(seed.result, 1990);
        const lower = new SeedIdentityForCommand("users", 1975);
        await store.getRequestExecutor().execute(lower);
        assert.equal(lower.result, 1990);

        let identities = await store.maintenance.send(new GetIdentitiesOperation());
        assert.equal(identities["users|"], 1990);

        await store.getRequestExecutor().execute(new SeedIdentityForCommand("users", 0, true));
        identities = await store.maintenance.send(new GetIdentitiesOperation());
        assert.equal(identities["users|"], 0);

        const check = store.openSession();
        assert.equal((await check.load("users/1")).name, "Adi");
        assert.equal(await check.load("users/2"), null);
        assert.equal((await check.load("users/3")).name, "Avivi");
    } finally {
        store.dispose();
    }
});
