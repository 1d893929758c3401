import { test } from "node:test";
import assert from "node:assert/strict";
import {
    GetBuildNumberOperation,
    GetDocumentsCommand,
    GetIndexNamesOperation,
    GetIndexesOperation,
    GetStatisticsOperation,
    IndexDefinition,
    PutIndexesOperation,
} from "ravendb";
import { freshStore, User } from "./harness.mjs";

test("GetDocumentsCommand with metadataOnly answers metadata alone; an empty id among several is a hole", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/1");
        await session.store(new User("Grace", 45), "users/2");
        await session.saveChanges();

        const command = new GetDocumentsCommand({ ids: ["users/1", "users/2", "users/404"], metadataOnly: true, conventions: store.conventions });
        await store.getRequestExecutor().execute(command);
        const [ada, grace, missing] = command.result.results;
        assert.deepEqual(Object.keys(ada), ["@metadata"]);
        assert.equal(ada["@metadata"]["@id"], "users/1");
        assert.equal(grace["@metadata"]["@collection"], "Users");
        assert.equal(missing, null);

        const single = new GetDocumentsCommand({ id: "users/2", metadataOnly: true, conventions: store.conventions });
        await store.getRequestExecutor().execute(single);
        assert.deepEqual(Object.keys(single.result.results[0]), ["@metadata"]);

        const holes = new GetDocumentsCommand({ ids: ["users/1", "", "users/2"], conventions: store.conventions });
        await store.getRequestExecutor().execute(holes);
        assert.deepEqual(holes.result.results.map(r => r && r.name), ["Ada", null, "Grace"]);
    } finally {
        store.dispose();
    }
});

test("GetIndexNamesOperation, paged GetIndexesOperation, statistics with index times, the build number", async () => {
    const { store } = await freshStore();
    try {
        for (const name of ["C/Index", "A/Index", "B/Index"]) {
            const definition = new IndexDefinition();
            definition.name = name;
            definition.maps = new Set(["map('Users', u => ({ name: u.name }))"]);
            await store.maintenance.send(new PutIndexesOperation(definition));
        }
        assert.deepEqual(await store.maintenance.send(new GetIndexNamesOperation(0, 10)), ["A/Index", "B/Index", "C/Index"]);
        assert.deepEqual(await store.maintenance.send(new GetIndexNamesOperation(1, 1)), ["B/Index"]);
        assert.deepEqual((await store.maintenance.send(new GetIndexesOperation(2, 5))).map(d => d.name), ["C/Index"]);

        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/1");
        await session.saveChanges();
        await store.openSession().query({ indexName: "A/Index" }).waitForNonStaleResults().all();

        const stats = await store.maintenance.send(new GetStatisticsOperation());
        assert.equal(stats.countOfDocuments, 1);
        assert.equal(stats.countOfIndexes, 3);
        assert.equal(stats.countOfAttachments, 0);
        assert.equal(typeof stats.databaseChangeVector, "string");
        // The client hands dates over as it reads them (ISO text).
        assert.ok(!Number.isNaN(Date.parse(stats.lastIndexingTime)), `lastIndexingTime is a date: ${stats.lastIndexingTime}`);
        assert.ok(stats.sizeOnDisk.sizeInBytes > 0);
        const indexA = stats.indexes.find(i => i.name === "A/Index");
        assert.ok(!Number.isNaN(Date.parse(indexA.lastIndexingTime)), `each index's lastIndexingTime is a date: ${indexA.lastIndexingTime}`);
        assert.equal(indexA.isStale, false);

        const build = await store.maintenance.server.send(new GetBuildNumberOperation());
        assert.match(build.productVersion, /^\d+\.\d+$/);
        assert.equal(typeof build.buildVersion, "number");
        assert.ok(build.fullVersion.length > 0 && build.commitHash.length > 0);
    } finally {
        store.dispose();
    }
});
