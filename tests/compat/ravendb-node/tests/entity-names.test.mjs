import { test } from "node:test";
import assert from "node:assert/strict";
import { GetCollectionStatisticsOperation } from "ravendb";
import { freshStore, storeFor, tagOf } from "./harness.mjs";

class $Gadget_Ünïcode {
    constructor(name, size) {
        this.name = name;
        this.size = size;
    }
}

test("custom entity names: any character a class name gives, in collections, HiLo tags and queries", async () => {
    const { store: plain, database } = await freshStore();
    plain.dispose();
    const store = storeFor(database);
    store.conventions.findCollectionName = () => "$Gadget_Ünïcode.Items-v2";
    store.conventions.registerEntityType($Gadget_Ünïcode);
    store.initialize();
    try {
        const session = store.openSession();
        const gadgets = [new $Gadget_Ünïcode("spanner", 3), new $Gadget_Ünïcode("lever", 5), new $Gadget_Ünïcode("cog", 5)];
        for (const gadget of gadgets) {
            await session.store(gadget);
        }
        await session.saveChanges();
        // HiLo ids under the collection's own prefix.
        const tag = tagOf(gadgets[0].id);
        assert.deepEqual(gadgets.map(g => g.id), [1, 2, 3].map(n => `$Gadget_Ünïcode.Items-v2/${n}-${tag}`));

        const found = await store.openSession().query({ collection: "$Gadget_Ünïcode.Items-v2" })
            .waitForNonStaleResults()
            .whereEquals("size", 5)
            .orderBy("name")
            .all();
        assert.deepEqual(found.map(g => g.name), ["cog", "lever"]);
        assert.ok(found[0] instanceof $Gadget_Ünïcode);

        const stats = await store.maintenance.send(new GetCollectionStatisticsOperation());
        assert.equal(stats.collections["$Gadget_Ünïcode.Items-v2"], 3);
        assert.equal((await store.openSession().load(gadgets[0].id)).name, "spanner");
    } finally {
        store.dispose();
    }
});
