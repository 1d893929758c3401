// Revisions through RavenDB's Node.js client: the configuration, the revisions a put and a delete
// leave, the session's ways to read them, forced revisions, the revisions bin, reverting, and
// revisions included in a load or a query.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    ConfigureRevisionsOperation, RevisionsConfiguration, RevisionsCollectionConfiguration,
    GetRevisionsOperation, GetRevisionsBinEntryCommand, GetOperationStateOperation, RavenCommand,
} from "ravendb";
import { freshStore, User, Company } from "./harness.mjs";

class Order {
    constructor(total) {
        this.total = total;
    }
}

const delay = ms => new Promise(resolve => setTimeout(resolve, ms));

function collectionConfig(settings) {
    return Object.assign(new RevisionsCollectionConfiguration(), { disabled: false }, settings);
}

/** ConfigureRevisionsOperation with a default (or none) and per-collection settings. */
async function configureRevisions(store, { defaultConfig, collections = {} }) {
    const configuration = new RevisionsConfiguration();
    if (defaultConfig) {
        configuration.defaultConfig = collectionConfig(defaultConfig);
    }
    configuration.collections = new Map(Object.entries(collections).map(([name, settings]) => [name, collectionConfig(settings)]));
    return store.maintenance.send(new ConfigureRevisionsOperation(configuration));
}

/** Stores `entity` under `id`, then saves each of `changes` (applied to the loaded entity) in a session of its own. */
async function storeVersions(store, id, entity, changes) {
    const first = store.openSession();
    await first.store(entity, id);
    await first.saveChanges();
    for (const change of changes) {
        await delay(15); // distinct @last-modified times
        const session = store.openSession();
        const loaded = await session.load(id);
        change(loaded);
        await session.saveChanges();
    }
}

const flagsOf = metadata => (metadata["@flags"] || "").split(",").map(f => f.trim()).filter(f => f);

// RavenDB 7's RevertRevisionsOperation, which this client (7.2.6) does not have: POST
// /revisions/revert with RevertRevisionsRequest, answered with an operation id.
class RevertRevisionsOperation {
    constructor(time, windowInSec, collections) {
        this._request = { Time: time.toISOString(), WindowInSec: windowInSec, Collections: collections };
    }

    get resultType() {
        return "OperationId";
    }

    getCommand() {
        return new RevertRevisionsCommand(this._request);
    }
}

class RevertRevisionsCommand extends RavenCommand {
    constructor(request) {
        super();
        this._request = request;
    }

    get isReadRequest() {
        return false;
    }

    createRequest(node) {
        return {
            uri: `${node.url}/databases/${node.database}/revisions/revert`,
            method: "POST",
            headers: this._headers().typeAppJson().build(),
            body: JSON.stringify(this._request),
        };
    }

    async setResponseAsync(bodyStream) {
        if (!bodyStream) {
            this._throwInvalidResponse();
        }
        return this._parseResponseDefaultAsync(bodyStream);
    }
}

// RavenDB 6's RevertRevisionsByIdOperation (also missing from this client): each document back to
// the revision of the given change vector, in one request.
class RevertRevisionsByIdCommand extends RavenCommand {
    constructor(idToChangeVector) {
        super();
        this._idToChangeVector = idToChangeVector;
        this._responseType = "Empty";
    }

    get isReadRequest() {
        return false;
    }

    createRequest(node) {
        return {
            uri: `${node.url}/databases/${node.database}/revisions/revert/docs`,
            method: "POST",
            headers: this._headers().typeAppJson().build(),
            body: JSON.stringify({ IdToChangeVector: this._idToChangeVector }),
        };
    }
}

test("ConfigureRevisionsOperation: every put of a configured collection is a revision; getFor pages newest first; getCountFor", async () => {
    const { store } = await freshStore();
    try {
        const configured = await configureRevisions(store, { collections: { Users: { minimumRevisionsToKeep: 100 } } });
        assert.equal(typeof configured.raftCommandIndex, "number", "RavenDB answers { RaftCommandIndex }");

        await storeVersions(store, "users/ada", new User("Ada", 1), [u => { u.age = 2; }, u => { u.age = 3; }]);
        await storeVersions(store, "companies/acme", new Company("Acme"), [c => { c.name = "Acme Ltd"; }]);

        const session = store.openSession();
        assert.equal(await session.advanced.revisions.getCountFor("users/ada"), 3);
        const all = await session.advanced.revisions.getFor("users/ada");
        assert.deepEqual(all.map(u => u.age), [3, 2, 1]);
        assert.ok(all.every(u => u instanceof User), "revisions are revived as the stored class");
        assert.ok(all.every(u => u.name === "Ada"));

        const page = await session.advanced.revisions.getFor("users/ada", { start: 1, pageSize: 1 });
        assert.deepEqual(page.map(u => u.age), [2]);
        const pastTheEnd = await session.advanced.revisions.getFor("users/ada", { start: 3, pageSize: 10 });
        assert.deepEqual(pastTheEnd, []);

        const metadata = await session.advanced.revisions.getMetadataFor("users/ada");
        assert.equal(metadata.length, 3);
        for (const m of metadata) {
            assert.equal(m["@id"], "users/ada");
            assert.equal(m["@collection"], "Users");
            assert.deepEqual(flagsOf(m).sort(), ["HasRevisions", "Revision"]);
            assert.match(m["@change-vector"], /^A:\d+-/);
            assert.match(m["@last-modified"], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
        }
        assert.equal(new Set(metadata.map(m => m["@change-vector"])).size, 3);
        const lastModified = metadata.map(m => m["@last-modified"]);
        assert.deepEqual([...lastModified].sort().reverse(), lastModified, "newest first");
        assert.deepEqual((await session.advanced.revisions.getMetadataFor("users/ada", { start: 2, pageSize: 5 })).map(m => m["@change-vector"]),
            [metadata[2]["@change-vector"]]);

        // The newest revision is the document as it is now, with its change vector.
        const current = await session.load("users/ada");
        const currentMetadata = session.advanced.getMetadataFor(current);
        assert.equal(currentMetadata["@flags"], "HasRevisions");
        assert.equal(session.advanced.getChangeVectorFor(current), metadata[0]["@change-vector"]);

        // A collection with no configuration and no default: no revisions, no flag.
        assert.equal(await session.advanced.revisions.getCountFor("companies/acme"), 0);
        assert.deepEqual(await session.advanced.revisions.getFor("companies/acme"), []);
        assert.deepEqual(await session.advanced.revisions.getMetadataFor("companies/acme"), []);
        const acme = await session.load("companies/acme");
        assert.equal(session.advanced.getMetadataFor(acme)["@flags"], undefined);
        assert.equal(await session.advanced.revisions.getCountFor("users/none"), 0);

        // The operation: RevisionsResult with the total.
        const result = await store.operations.send(new GetRevisionsOperation("users/ada", { start: 0, pageSize: 2, documentType: User }));
        assert.equal(result.totalResults, 3);
        assert.deepEqual(result.results.map(u => u.age), [3, 2]);
    } finally {
        store.dispose();
    }
});

test("revisions.get by change vector, by several change vectors, and by id and date (getBefore)", async () => {
    const { store } = await freshStore();
    try {
        await configureRevisions(store, { defaultConfig: {} });
        await storeVersions(store, "users/ada", new User("Ada", 1), [u => { u.age = 2; }, u => { u.age = 3; }]);

        const session = store.openSession();
        const metadata = await session.advanced.revisions.getMetadataFor("users/ada");
        const [cv3, cv2, cv1] = metadata.map(m => m["@change-vector"]);

        const second = await session.advanced.revisions.get(cv2);
        assert.ok(second instanceof User);
        assert.equal(second.age, 2);
        assert.equal(session.advanced.getMetadataFor(second)["@change-vector"], cv2);

        const several = await session.advanced.revisions.get([cv1, cv3]);
        assert.deepEqual(Object.keys(several).sort(), [cv1, cv3].sort());
        assert.equal(several[cv1].age, 1);
        assert.equal(several[cv3].age, 3);

        // Before a date: the newest revision at or before it.
        const [t3, t2, t1] = metadata.map(m => Date.parse(m["@last-modified"]));
        assert.ok(t1 < t2 && t2 < t3, "the versions were saved at distinct times");
        const between = new Date(Math.floor((t1 + t2) / 2));
        const atFirst = await session.advanced.revisions.get("users/ada", between);
        assert.equal(atFirst.age, 1);
        const afterAll = await session.advanced.revisions.get("users/ada", new Date(t3 + 1000));
        assert.equal(afterAll.age, 3);
        const beforeAll = await session.advanced.revisions.get("users/ada", new Date(t1 - 60_000));
        assert.equal(beforeAll, null);
    } finally {
        store.dispose();
    }
});

test("minimumRevisionsToKeep keeps the newest; a disabled collection gets none; the default covers the others", async () => {
    const { store } = await freshStore();
    try {
        await configureRevisions(store, {
            defaultConfig: { minimumRevisionsToKeep: 2 },
            collections: { Users: { minimumRevisionsToKeep: 3 }, Companies: { disabled: true } },
        });
        const bump = u => { u.age += 1; };
        await storeVersions(store, "users/1", new User("One", 1), [bump, bump, bump, bump]);
        await storeVersions(store, "orders/1", new Order(1),
            [o => { o.total = 2; }, o => { o.total = 3; }, o => { o.total = 4; }]);
        await storeVersions(store, "companies/1", new Company("C1"), [c => { c.name = "C2"; }, c => { c.name = "C3"; }]);

        const session = store.openSession();
        assert.equal(await session.advanced.revisions.getCountFor("users/1"), 3);
        assert.deepEqual((await session.advanced.revisions.getFor("users/1")).map(u => u.age), [5, 4, 3]);

        assert.equal(await session.advanced.revisions.getCountFor("orders/1"), 2);
        assert.deepEqual((await session.advanced.revisions.getFor("orders/1")).map(o => o.total), [4, 3]);

        assert.equal(await session.advanced.revisions.getCountFor("companies/1"), 0);
        assert.deepEqual(await session.advanced.revisions.getFor("companies/1"), []);
        const company = await session.load("companies/1");
        assert.equal(company.name, "C3");
        assert.equal(session.advanced.getMetadataFor(company)["@flags"], undefined);

        // A lower limit applies at the document's next put.
        await configureRevisions(store, { collections: { Users: { minimumRevisionsToKeep: 1 } } });
        await storeVersions(store, "users/1", new User("One", 10), []);
        const after = store.openSession();
        assert.equal(await after.advanced.revisions.getCountFor("users/1"), 1);
        assert.deepEqual((await after.advanced.revisions.getFor("users/1")).map(u => u.age), [10]);
    } finally {
        store.dispose();
    }
});

test("a delete leaves a delete revision and a revisions bin entry; purgeOnDelete removes every revision", async () => {
    const { store } = await freshStore();
    try {
        await configureRevisions(store, { defaultConfig: {}, collections: { Companies: { purgeOnDelete: true } } });
        await storeVersions(store, "users/gone", new User("Gone", 1), [u => { u.age = 2; }]);
        await storeVersions(store, "users/kept", new User("Kept", 1), []);
        await storeVersions(store, "companies/gone", new Company("Gone"), [c => { c.name = "Gone 2"; }]);

        const deleting = store.openSession();
        await deleting.delete("users/gone");
        await deleting.delete("companies/gone");
        await deleting.saveChanges();

        const session = store.openSession();
        assert.equal(await session.advanced.revisions.getCountFor("users/gone"), 3);
        const metadata = await session.advanced.revisions.getMetadataFor("users/gone");
        assert.equal(metadata.length, 3);
        assert.ok(flagsOf(metadata[0]).includes("DeleteRevision"), `newest revision's flags: ${metadata[0]["@flags"]}`);
        assert.ok(!flagsOf(metadata[1]).includes("DeleteRevision"));
        const versions = await session.advanced.revisions.getFor("users/gone", { start: 1 });
        assert.deepEqual(versions.map(u => u.age), [2, 1], "the versions before the delete are still there");

        assert.equal(await session.advanced.revisions.getCountFor("companies/gone"), 0);
        assert.deepEqual(await session.advanced.revisions.getFor("companies/gone"), []);

        const binIds = async () => {
            const command = new GetRevisionsBinEntryCommand(store.conventions, 0, 100);
            await store.getRequestExecutor().execute(command);
            return command.result.results.map(entry => entry["@metadata"]["@id"]);
        };
        assert.deepEqual(await binIds(), ["users/gone"], "deleted documents with revisions; purged and live ones are not there");

        // The document comes back: it leaves the bin, its revisions stay and grow.
        await storeVersions(store, "users/gone", new User("Back", 3), []);
        assert.deepEqual(await binIds(), []);
        const back = store.openSession();
        assert.equal(await back.advanced.revisions.getCountFor("users/gone"), 4);
        assert.equal((await back.advanced.revisions.getFor("users/gone", { pageSize: 1 }))[0].name, "Back");
    } finally {
        store.dispose();
    }
});

test("forceRevisionCreationFor: a revision of a document whose collection has no revisions configured", async () => {
    const { store } = await freshStore();
    try {
        await storeVersions(store, "companies/1", new Company("A"), []);

        const forcing = store.openSession();
        const company = await forcing.load("companies/1");
        forcing.advanced.revisions.forceRevisionCreationFor(company);
        await forcing.saveChanges();
        const check = store.openSession();
        assert.equal(await check.advanced.revisions.getCountFor("companies/1"), 1);
        assert.deepEqual((await check.advanced.revisions.getFor("companies/1")).map(c => c.name), ["A"]);
        const loaded = await check.load("companies/1");
        assert.equal(check.advanced.getMetadataFor(loaded)["@flags"], "HasRevisions");
        // The forcing session took the new change vector, so it can save again.
        assert.equal(forcing.advanced.getChangeVectorFor(company), check.advanced.getChangeVectorFor(loaded));

        // Forcing again with nothing changed: the newest revision is already this version.
        const again = store.openSession();
        again.advanced.revisions.forceRevisionCreationFor("companies/1");
        await again.saveChanges();
        assert.equal(await store.openSession().advanced.revisions.getCountFor("companies/1"), 1);

        // A change without forcing: the collection keeps no revisions.
        await storeVersions(store, "companies/1", new Company("B"), []);
        assert.equal(await store.openSession().advanced.revisions.getCountFor("companies/1"), 1);

        // Forcing with a change in the same session ("Before"): the stored version (B) becomes a
        // revision, then the change (C) is saved.
        const before = store.openSession();
        const b = await before.load("companies/1");
        b.name = "C";
        before.advanced.revisions.forceRevisionCreationFor(b);
        await before.saveChanges();
        const last = store.openSession();
        assert.deepEqual((await last.advanced.revisions.getFor("companies/1")).map(c => c.name), ["B", "A"]);
        assert.equal((await last.load("companies/1")).name, "C");

        // A document that is not stored has no version to keep: by id, or new in the session
        // (its PUT carries "Before"). The whole batch is refused, naming the document.
        const missing = store.openSession();
        missing.advanced.revisions.forceRevisionCreationFor("companies/none");
        await assert.rejects(missing.saveChanges(),
            error => error.name === "DocumentDoesNotExistException" && /companies\/none/.test(error.message));
        const fresh = store.openSession();
        const created = new Company("New");
        await fresh.store(created, "companies/new");
        fresh.advanced.revisions.forceRevisionCreationFor(created);
        await assert.rejects(fresh.saveChanges(),
            error => error.name === "DocumentDoesNotExistException" && /companies\/new/.test(error.message));
        assert.equal(await store.openSession().load("companies/new"), null);
    } finally {
        store.dispose();
    }
});

test("RevertRevisionsOperation: a collection back to a point in time, waited on as an operation", async () => {
    const { store } = await freshStore();
    try {
        await configureRevisions(store, { defaultConfig: {} });
        const setup = store.openSession();
        await setup.store(new User("Ada v1", 1), "users/1");
        await setup.store(new User("Bob v1", 1), "users/2");
        await setup.store(new Company("Acme v1"), "companies/1");
        await setup.saveChanges();

        const loaded = store.openSession();
        const stamp = loaded.advanced.getMetadataFor(await loaded.load("users/2"))["@last-modified"];
        await delay(50);
        const pointInTime = new Date(Date.parse(stamp) + 25);
        await delay(50);

        const change = store.openSession();
        (await change.load("users/1")).name = "Ada v2";
        (await change.load("users/2")).age = 2;
        (await change.load("companies/1")).name = "Acme v2";
        await change.saveChanges();

        const operation = await store.operations.send(new RevertRevisionsOperation(pointInTime, 3600, ["Users"]));
        await operation.waitForCompletion();
        const state = await store.operations.send(new GetOperationStateOperation(operation.id));
        assert.equal(state.status, "Completed");

        const check = store.openSession();
        const u1 = await check.load("users/1");
        const u2 = await check.load("users/2");
        assert.equal(u1.name, "Ada v1");
        assert.equal(u2.name, "Bob v1");
        assert.equal(u2.age, 1);
        assert.equal((await check.load("companies/1")).name, "Acme v2", "another collection is not reverted");
        // A revert is a new version: one more revision, the reverted state on top.
        assert.equal(await check.advanced.revisions.getCountFor("users/1"), 3);
        assert.equal((await check.advanced.revisions.getFor("users/1", { pageSize: 1 }))[0].name, "Ada v1");

        // One document back to a revision of its own, by change vector.
        const v2 = (await check.advanced.revisions.getMetadataFor("users/1"))[1]["@change-vector"];
        assert.equal((await check.advanced.revisions.get(v2)).name, "Ada v2");
        await store.getRequestExecutor().execute(new RevertRevisionsByIdCommand({ "users/1": v2 }));
        const byId = store.openSession();
        assert.equal((await byId.load("users/1")).name, "Ada v2");
        assert.equal((await byId.load("users/2")).name, "Bob v1", "only the named document");
        assert.equal(await byId.advanced.revisions.getCountFor("users/1"), 4);
    } finally {
        store.dispose();
    }
});

/** users/ada at age 1 then 2, the second version naming the first's change vector in `firstVersion`. */
async function twoVersionsNamingTheFirst(store) {
    await configureRevisions(store, { collections: { Users: {} } });
    const first = store.openSession();
    const ada = new User("Ada", 1);
    await first.store(ada, "users/ada");
    await first.saveChanges();
    const firstVersion = first.advanced.getChangeVectorFor(ada);
    await delay(30);
    ada.age = 2;
    ada.firstVersion = firstVersion;
    await first.saveChanges();

    const metadata = await store.openSession().advanced.revisions.getMetadataFor("users/ada");
    assert.equal(metadata.length, 2);
    assert.equal(metadata[1]["@change-vector"], firstVersion);
    const [t2, t1] = metadata.map(m => Date.parse(m["@last-modified"]));
    const between = new Date(Math.floor((t1 + t2) / 2));

    return { firstVersion, between };
}

test("include revisions in a load, by a change vector path and by a date: no further request", async () => {
    const { store } = await freshStore();
    try {
        const { firstVersion, between } = await twoVersionsNamingTheFirst(store);
        const byPath = store.openSession();
        const loaded = await byPath.load("users/ada", { includes: b => b.includeRevisions("firstVersion") });
        assert.equal(loaded.age, 2);
        let requests = byPath.advanced.numberOfRequests;
        const included = await byPath.advanced.revisions.get(firstVersion);
        assert.equal(included.age, 1);
        assert.equal(byPath.advanced.numberOfRequests, requests, "the revision came with the load");

        const byDate = store.openSession();
        await byDate.load("users/ada", { includes: b => b.includeRevisions(between) });
        requests = byDate.advanced.numberOfRequests;
        const atDate = await byDate.advanced.revisions.get("users/ada", between);
        assert.equal(atDate.age, 1);
        assert.equal(byDate.advanced.numberOfRequests, requests, "the revision before the date came with the load");
    } finally {
        store.dispose();
    }
});

test("include revisions in a query: the included revision needs no further request", async () => {
    const { store } = await freshStore();
    try {
        const { firstVersion, between } = await twoVersionsNamingTheFirst(store);
        const byPath = store.openSession();
        const results = await byPath.query({ collection: "Users" })
            .include(b => b.includeRevisions("firstVersion"))
            .all();
        assert.deepEqual(results.map(u => u.age), [2]);
        let requests = byPath.advanced.numberOfRequests;
        assert.equal((await byPath.advanced.revisions.get(firstVersion)).age, 1);
        assert.equal(byPath.advanced.numberOfRequests, requests, "the revision came with the query");

        const byDate = store.openSession();
        await byDate.query({ collection: "Users" }).include(b => b.includeRevisions(between)).all();
        requests = byDate.advanced.numberOfRequests;
        assert.equal((await byDate.advanced.revisions.get("users/ada", between)).age, 1);
        assert.equal(byDate.advanced.numberOfRequests, requests, "the revision before the date came with the query");
    } finally {
        store.dispose();
    }
});
