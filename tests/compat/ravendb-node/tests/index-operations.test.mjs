// RavenDB's Node.js client's index operations (issue 19): lock modes, priorities, disable/enable,
// stop/start, errors, performance statistics, and a changed definition built side by side.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    DisableIndexOperation,
    EnableIndexOperation,
    GetIndexErrorsOperation,
    GetIndexesStatisticsOperation,
    GetIndexingStatusOperation,
    GetIndexOperation,
    GetIndexStatisticsOperation,
    IndexDefinition,
    PutIndexesOperation,
    RavenCommand,
    SetIndexesLockOperation,
    SetIndexesPriorityOperation,
    StartIndexingOperation,
    StartIndexOperation,
    StopIndexingOperation,
    StopIndexOperation,
} from "ravendb";
import { freshStore, User } from "./harness.mjs";

const byAge = "map('Users', u => ({ age: u.age }))";
const byAgeAndName = "map('Users', u => ({ age: u.age, name: u.name }))";
const byBrokenAddress = "map('Users', u => ({ city: u.address.city }))";

function definition(name, map) {
    const result = new IndexDefinition();
    result.name = name;
    result.maps = new Set([map]);
    return result;
}

async function seed(store, count = 10) {
    const session = store.openSession();
    for (let i = 1; i <= count; i++) {
        await session.store(new User(`user ${i}`, 20 + i), `users/${i}`);
    }
    await session.saveChanges();
}

async function allStats(store) {
    return store.maintenance.send(new GetIndexesStatisticsOperation());
}

async function waitUntil(condition, what) {
    const deadline = Date.now() + 30_000;
    while (!(await condition())) {
        if (Date.now() > deadline) {
            assert.fail(`timed out waiting until ${what}`);
        }
        await new Promise(resolve => setTimeout(resolve, 50));
    }
}

async function agesOver(store, index, age) {
    const found = await store.openSession().query({ indexName: index }).waitForNonStaleResults().whereGreaterThan("age", age).all();
    return found.map(u => u.age).sort((a, b) => a - b);
}

// RavenDB's C# client has GetIndexPerformanceStatisticsOperation; ravendb 7.2.6 for Node does not
// export one, so this sends the same request (GET indexes/performance, &name= per index) through
// the Node client's own request executor.
class GetIndexPerformanceStatisticsOperation {
    constructor(indexNames) {
        this._indexNames = indexNames;
    }

    get resultType() {
        return "CommandResult";
    }

    getCommand() {
        return new GetIndexPerformanceStatisticsCommand(this._indexNames);
    }
}

class GetIndexPerformanceStatisticsCommand extends RavenCommand {
    constructor(indexNames) {
        super();
        this._indexNames = indexNames;
    }

    get isReadRequest() {
        return true;
    }

    createRequest(node) {
        let uri = node.url + "/databases/" + node.database + "/indexes/performance";
        if (this._indexNames && this._indexNames.length > 0) {
            uri += "?";
            for (const name of this._indexNames) {
                uri += "&name=" + encodeURIComponent(name);
            }
        }
        return { uri };
    }

    async setResponseAsync(bodyStream) {
        let body = null;
        const results = await this._defaultPipeline(b => body = b).process(bodyStream);
        this.result = results["results"];
        return body;
    }
}

test("SetIndexesLockOperation: LockedIgnore keeps the definition, LockedError refuses a change", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge), definition("Users/Other", byAge)));

        await store.maintenance.send(new SetIndexesLockOperation("Users/ByAge", "LockedIgnore"));
        assert.equal((await store.maintenance.send(new GetIndexStatisticsOperation("Users/ByAge"))).lockMode, "LockedIgnore");
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAgeAndName)));
        assert.deepEqual([...(await store.maintenance.send(new GetIndexOperation("Users/ByAge"))).maps], [byAge]);
        assert.ok(!(await allStats(store)).some(s => s.name.startsWith("ReplacementOf/")));

        await store.maintenance.send(new SetIndexesLockOperation({ indexNames: ["Users/ByAge", "Users/Other"], mode: "LockedError" }));
        const stats = await allStats(store);
        assert.deepEqual(stats.map(s => s.lockMode), ["LockedError", "LockedError"]);
        await assert.rejects(
            () => store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAgeAndName))),
            error => /Users\/ByAge/.test(error.message) && /locked/i.test(error.message));
        // The same definition again is no change: a locked index takes it.
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge)));
        assert.deepEqual(await agesOver(store, "Users/ByAge", 28), [29, 30]);

        // The client itself refuses to lock auto-indexes.
        assert.throws(() => new SetIndexesLockOperation("Auto/Users/ByName", "LockedError"), /Auto-Indexes/);
    } finally {
        store.dispose();
    }
});

test("GetIndexOperation reports the lock mode and priority that were set", async () => {
    const { store } = await freshStore();
    try {
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge)));
        await store.maintenance.send(new SetIndexesLockOperation("Users/ByAge", "LockedIgnore"));
        await store.maintenance.send(new SetIndexesPriorityOperation("Users/ByAge", "High"));

        const current = await store.maintenance.send(new GetIndexOperation("Users/ByAge"));
        assert.equal(current.lockMode, "LockedIgnore");
        assert.equal(current.priority, "High");
    } finally {
        store.dispose();
    }
});

test("SetIndexesPriorityOperation sets each index's priority", async () => {
    const { store } = await freshStore();
    try {
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge), definition("Users/ByAgeAndName", byAgeAndName)));

        await store.maintenance.send(new SetIndexesPriorityOperation("Users/ByAge", "High"));
        await store.maintenance.send(new SetIndexesPriorityOperation({ indexNames: ["Users/ByAgeAndName"], priority: "Low" }));

        const priorities = Object.fromEntries((await allStats(store)).map(s => [s.name, s.priority]));
        assert.deepEqual(priorities, { "Users/ByAge": "High", "Users/ByAgeAndName": "Low" });
        await assert.rejects(() => store.maintenance.send(new SetIndexesPriorityOperation("Nope", "Low")));
    } finally {
        store.dispose();
    }
});

test("DisableIndexOperation stops an index until EnableIndexOperation", async () => {
    const { store } = await freshStore();
    try {
        await seed(store, 3);
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge)));
        assert.deepEqual(await agesOver(store, "Users/ByAge", 0), [21, 22, 23]);

        await store.maintenance.send(new DisableIndexOperation("Users/ByAge"));
        const disabled = await store.maintenance.send(new GetIndexStatisticsOperation("Users/ByAge"));
        assert.equal(disabled.state, "Disabled");
        assert.equal(disabled.status, "Disabled");
        const session = store.openSession();
        await session.store(new User("late", 40), "users/late");
        await session.saveChanges();

        await store.maintenance.send(new EnableIndexOperation("Users/ByAge"));
        const enabled = await store.maintenance.send(new GetIndexStatisticsOperation("Users/ByAge"));
        assert.equal(enabled.state, "Normal");
        assert.equal(enabled.status, "Running");
        assert.deepEqual(await agesOver(store, "Users/ByAge", 0), [21, 22, 23, 40]);
    } finally {
        store.dispose();
    }
});

test("StopIndexingOperation pauses every index until StartIndexingOperation", async () => {
    const { store } = await freshStore();
    try {
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge), definition("Users/ByAgeAndName", byAgeAndName)));

        await store.maintenance.send(new StopIndexingOperation());
        assert.deepEqual((await allStats(store)).map(s => s.status), ["Paused", "Paused"]);
        await seed(store, 2);
        assert.equal((await store.maintenance.send(new GetIndexStatisticsOperation("Users/ByAge"))).isStale, true);

        await store.maintenance.send(new StartIndexingOperation());
        assert.deepEqual((await allStats(store)).map(s => s.status), ["Running", "Running"]);
        assert.deepEqual(await agesOver(store, "Users/ByAge", 0), [21, 22]);
    } finally {
        store.dispose();
    }
});

test("GetIndexingStatusOperation reports stopped indexing", async () => {
    const { store } = await freshStore();
    try {
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge)));
        await store.maintenance.send(new StopIndexingOperation());
        try {
            const status = await store.maintenance.send(new GetIndexingStatusOperation());
            assert.equal(status.status, "Paused");
            assert.deepEqual(status.indexes.map(i => [i.name, i.status]), [["Users/ByAge", "Paused"]]);
        } finally {
            await store.maintenance.send(new StartIndexingOperation());
        }
    } finally {
        store.dispose();
    }
});

test("StopIndexOperation and StartIndexOperation pause one index only", async () => {
    const { store } = await freshStore();
    try {
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge), definition("Users/ByAgeAndName", byAgeAndName)));

        await store.maintenance.send(new StopIndexOperation("Users/ByAge"));
        try {
            const statuses = Object.fromEntries((await allStats(store)).map(s => [s.name, s.status]));
            assert.deepEqual(statuses, { "Users/ByAge": "Paused", "Users/ByAgeAndName": "Running" });
        } finally {
            await store.maintenance.send(new StartIndexOperation("Users/ByAge"));
        }
        assert.deepEqual((await allStats(store)).map(s => s.status), ["Running", "Running"]);
    } finally {
        store.dispose();
    }
});

test("GetIndexErrorsOperation: the documents a map failed on, for every index or one", async () => {
    const { store } = await freshStore();
    try {
        await seed(store, 3);
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByCity", byBrokenAddress), definition("Users/ByAge", byAge)));
        await waitUntil(async () => (await allStats(store)).every(s => !s.isStale), "both indexes caught up");

        const all = await store.maintenance.send(new GetIndexErrorsOperation());
        assert.deepEqual(all.map(e => e.name).sort(), ["Users/ByAge", "Users/ByCity"]);
        assert.deepEqual(all.find(e => e.name === "Users/ByAge").errors, []);

        const [byCity] = await store.maintenance.send(new GetIndexErrorsOperation(["Users/ByCity"]));
        assert.equal(byCity.name, "Users/ByCity");
        assert.deepEqual(byCity.errors.map(e => e.document).sort(), ["users/1", "users/2", "users/3"]);
        const error = byCity.errors[0];
        assert.equal(error.action, "Map");
        assert.match(error.error, /city|address/i);
        assert.ok(error.timestamp instanceof Date && !Number.isNaN(error.timestamp.getTime()));
    } finally {
        store.dispose();
    }
});

test("GetIndexErrorsOperation with several names answers each", async () => {
    const { store } = await freshStore();
    try {
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByCity", byBrokenAddress), definition("Users/ByAge", byAge)));

        const errors = await store.maintenance.send(new GetIndexErrorsOperation(["Users/ByCity", "Users/ByAge"]));

        assert.deepEqual(errors.map(e => e.name), ["Users/ByCity", "Users/ByAge"]);
    } finally {
        store.dispose();
    }
});

test("indexing performance statistics (the C# client's GetIndexPerformanceStatisticsOperation request)", async () => {
    const { store } = await freshStore();
    try {
        await seed(store, 25);
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge), definition("Users/ByAgeAndName", byAgeAndName)));
        assert.equal((await agesOver(store, "Users/ByAge", 0)).length, 25);
        assert.equal((await agesOver(store, "Users/ByAgeAndName", 0)).length, 25);

        const stats = await store.maintenance.send(new GetIndexPerformanceStatisticsOperation(["Users/ByAge", "Users/ByAgeAndName"]));
        assert.deepEqual(stats.map(s => s.name), ["Users/ByAge", "Users/ByAgeAndName"]);
        const batches = stats[0].performance;
        assert.ok(batches.length >= 1);
        assert.equal(batches.reduce((sum, b) => sum + b.inputCount, 0), 25);
        const batch = batches.find(b => b.inputCount > 0);
        assert.equal(batch.successCount + batch.failedCount, batch.inputCount);
        assert.ok(batch.durationInMs >= 0 && batch.documentsSize.sizeInBytes > 0);
        assert.ok(new Date(batch.completed) >= new Date(batch.started));
        assert.equal(batch.details.name, "Indexing");
        assert.ok(batch.details.operations.some(o => o.name === "Map" && o.operations.some(c => c.name === "Map/Users")));

        const everything = await store.maintenance.send(new GetIndexPerformanceStatisticsOperation());
        assert.deepEqual(everything.map(s => s.name).sort(), ["Users/ByAge", "Users/ByAgeAndName"]);
    } finally {
        store.dispose();
    }
});

test("PutIndexesOperation with a changed definition builds it side by side, then swaps it in", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAge)));
        assert.deepEqual(await agesOver(store, "Users/ByAge", 28), [29, 30]);

        // Stopped, the replacement waits beside the index, which keeps answering.
        await store.maintenance.send(new StopIndexingOperation());
        try {
            await store.maintenance.send(new PutIndexesOperation(definition("Users/ByAge", byAgeAndName)));
            const stats = await allStats(store);
            assert.deepEqual(stats.map(s => s.name).sort(), ["ReplacementOf/Users/ByAge", "Users/ByAge"]);
            const replacement = stats.find(s => s.name === "ReplacementOf/Users/ByAge");
            assert.equal(replacement.replacementOf, "Users/ByAge");
            assert.equal(replacement.progress.totalDocuments, 10);
            assert.equal(replacement.progress.processedDocuments, 0);
            const still = await store.openSession().query({ indexName: "Users/ByAge" }).whereGreaterThan("age", 28).all();
            assert.deepEqual(still.map(u => u.age).sort(), [29, 30]);
        } finally {
            await store.maintenance.send(new StartIndexingOperation());
        }

        await waitUntil(async () => (await allStats(store)).length === 1, "the replacement swapped in");
        assert.deepEqual([...(await store.maintenance.send(new GetIndexOperation("Users/ByAge"))).maps], [byAgeAndName]);
        const named = await store.openSession().query({ indexName: "Users/ByAge" }).waitForNonStaleResults().whereEquals("name", "user 3").all();
        assert.deepEqual(named.map(u => u.age), [23]);
    } finally {
        store.dispose();
    }
});
