// RavenDB's Node.js client's subscription operations against Jackdaw. Its subscription *worker*
// speaks RavenDB's TCP protocol, which Jackdaw replaces on purpose with a WebSocket on the HTTP
// port (docs/architecture.md, section 5, Subscriptions), so no worker is tested here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { freshStore, User } from "./harness.mjs";

test("store.subscriptions.create with a query and a name, and with a generated name", async () => {
    const { store } = await freshStore("subs");
    try {
        const name = await store.subscriptions.create({ name: "Adults", query: "from Users where age >= 18" });
        assert.equal(name, "Adults");
        const generated = await store.subscriptions.create({ query: "from Users" });
        assert.equal(typeof generated, "string");
        assert.ok(generated.length > 0);
        // The client maps any 409 to ConcurrencyException (it has no SubscriptionAlreadyExistsException).
        await assert.rejects(
            () => store.subscriptions.create({ name: "adults", query: "from Users" }),
            error => (error.name === "ConcurrencyException" || error.name === "SubscriptionAlreadyExistsException") && /exists already/.test(error.message));
        await assert.rejects(
            () => store.subscriptions.create({ query: "from Users order by name" }),
            error => error.name === "InvalidQueryException" || /order by/i.test(error.message));
    } finally {
        store.dispose();
    }
});

test("store.subscriptions.getSubscriptions(0, 10) lists each subscription with its query", async () => {
    const { store } = await freshStore("subs");
    try {
        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/1");
        await session.saveChanges();
        await store.subscriptions.create({ name: "First", query: "from Users" });
        await store.subscriptions.create({ name: "Second", query: "from Users where age > 40" });

        const subscriptions = await store.subscriptions.getSubscriptions(0, 10);
        assert.deepEqual(subscriptions.map(s => s.subscriptionName), ["First", "Second"]);
        const second = subscriptions[1];
        assert.equal(second.query, "from Users where age > 40");
        assert.equal(typeof second.subscriptionId, "number");
        assert.equal(second.disabled, false);
        assert.equal(typeof second.changeVectorForNextBatchStartingPoint, "string");
    } finally {
        store.dispose();
    }
});

test("store.subscriptions.delete(name) removes the subscription", async () => {
    const { store } = await freshStore("subs");
    try {
        await store.subscriptions.create({ name: "Doomed", query: "from Users" });
        await store.subscriptions.create({ name: "Kept", query: "from Users" });
        await store.subscriptions.delete("Doomed");
        const left = await store.subscriptions.getSubscriptions(0, 10);
        assert.deepEqual(left.map(s => s.subscriptionName), ["Kept"]);
        await assert.rejects(() => store.subscriptions.delete("Doomed"));
    } finally {
        store.dispose();
    }
});

// RavenDB's GetSubscriptionStateCommand sends GET /databases/{db}/subscriptions/state?name=... and
// reads the state object itself (not a {"Results":[...]} list); Jackdaw has no such route yet.
test("store.subscriptions.getSubscriptionState(name) answers the subscription's state", async () => {
    const { store } = await freshStore("subs");
    try {
        await store.subscriptions.create({ name: "Watched", query: "from Users" });
        const state = await store.subscriptions.getSubscriptionState("Watched");
        assert.equal(state.subscriptionName, "Watched");
        assert.equal(state.query, "from Users");
        assert.equal(state.disabled, false);
        // A missing one is a 404 with SubscriptionDoesNotExistException; the client reads a 404 of
        // this command as "no body" and fails with its own MappingError.
        await assert.rejects(() => store.subscriptions.getSubscriptionState("Nothing"));
    } finally {
        store.dispose();
    }
});
