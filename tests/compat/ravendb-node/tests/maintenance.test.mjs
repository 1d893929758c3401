import { test } from "node:test";
import assert from "node:assert/strict";
import {
    CreateDatabaseOperation, DeleteDatabasesOperation, GetDatabaseNamesOperation,
    GetStatisticsOperation, GetCollectionStatisticsOperation,
} from "ravendb";
import { storeFor, User, Company } from "./harness.mjs";

test("create, list, inspect and delete databases with the server's maintenance operations", async () => {
    const name = `maintenance-${process.pid}-${Date.now()}`;
    const store = storeFor(name);
    store.initialize();
    try {
        await store.maintenance.server.send(new CreateDatabaseOperation({ databaseName: name }));
        const names = await store.maintenance.server.send(new GetDatabaseNamesOperation(0, 1000));
        assert.ok(names.includes(name), `${name} is not in ${names}`);
        await assert.rejects(
            () => store.maintenance.server.send(new CreateDatabaseOperation({ databaseName: name })),
            error => error.name === "ConcurrencyException" || error.name === "DatabaseAlreadyExistsException");

        const session = store.openSession();
        await session.store(new User("Ada"), "users/1");
        await session.store(new User("Grace"), "users/2");
        await session.store(new Company("Acme"), "companies/1");
        await session.saveChanges();
        const deleting = store.openSession();
        await deleting.delete("users/2");
        await deleting.saveChanges();

        const stats = await store.maintenance.send(new GetStatisticsOperation());
        assert.equal(stats.countOfDocuments, 2);
        assert.equal(stats.countOfIndexes, 0);
        assert.equal(stats.countOfTombstones, 1);
        assert.ok(stats.lastDocEtag >= 4);
        assert.equal(typeof stats.databaseId, "string");

        const collections = await store.maintenance.send(new GetCollectionStatisticsOperation());
        assert.equal(collections.countOfDocuments, 2);
        assert.deepEqual(collections.collections, { Users: 1, Companies: 1 });

        await store.maintenance.server.send(new DeleteDatabasesOperation({ databaseNames: [name], hardDelete: true }));
        const after = await store.maintenance.server.send(new GetDatabaseNamesOperation(0, 1000));
        assert.ok(!after.includes(name));
    } finally {
        store.dispose();
    }
});
