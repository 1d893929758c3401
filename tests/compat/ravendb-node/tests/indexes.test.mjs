import { test } from "node:test";
import assert from "node:assert/strict";
import {
    AbstractJavaScriptIndexCreationTask,
    DeleteIndexOperation,
    GetIndexesOperation,
    GetIndexStatisticsOperation,
    IndexDefinition,
    PutIndexesOperation,
    ResetIndexOperation,
} from "ravendb";
import { freshStore, User, Company } from "./harness.mjs";

class Order {
    constructor(company, freight, city, lines) {
        this.company = company;
        this.freight = freight;
        this.shipTo = { city };
        this.lines = lines;
    }
}

async function seed(store) {
    const session = store.openSession();
    await session.store(new Company("Acme"), "companies/1");
    await session.store(new Company("Globex"), "companies/2");
    for (let i = 1; i <= 10; i++) {
        const lines = [{ product: `products/${i}`, quantity: i, pricePerUnit: 10 }];
        await session.store(new Order(`companies/${1 + (i % 2)}`, i * 5.5, i % 3 === 0 ? "Paris" : "Berlin", lines), `orders/${i}`);
        await session.store(new User(`user ${i}`, 20 + i), `users/${i}`);
    }
    await session.saveChanges();
}

test("session.query through auto-indexes: equality, range, orderBy, paging, statistics", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const session = store.openSession();
        let stats;
        const paris = await session.query({ collection: "Orders" })
            .waitForNonStaleResults()
            .statistics(s => stats = s)
            .whereEquals("shipTo.city", "Paris")
            .orderByDescending("freight", "Double")
            .all();
        assert.deepEqual(paris.map(o => o.freight), [49.5, 33, 16.5]);
        assert.ok(paris[0] instanceof Order);
        assert.equal(stats.totalResults, 3);
        assert.equal(stats.isStale, false);
        assert.match(stats.indexName, /^Auto\/Orders\/By/);

        const range = await session.query({ collection: "Orders" })
            .waitForNonStaleResults()
            .whereGreaterThan("freight", 20)
            .andAlso()
            .whereLessThanOrEqual("freight", 44)
            .orderBy("freight", "Double")
            .skip(1)
            .take(2)
            .all();
        assert.deepEqual(range.map(o => o.freight), [27.5, 33]);

        const count = await session.query({ collection: "Orders" }).waitForNonStaleResults().whereEquals("company", "companies/1").count();
        assert.equal(count, 5);
        const first = await session.query({ collection: "Users" }).waitForNonStaleResults().whereIn("age", [23, 25]).orderBy("age").first();
        assert.equal(first.name, "user 3");
        // Query results join the session: the same instance on load, no request.
        const before = session.advanced.numberOfRequests;
        assert.equal(await session.load("orders/3"), paris[2]);
        assert.equal(session.advanced.numberOfRequests, before);
    } finally {
        store.dispose();
    }
});

test("search, projections, includes and rawQuery with parameters", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const session = store.openSession();
        const found = await session.query({ collection: "Users" }).waitForNonStaleResults().search("name", "user 7").all();
        assert.ok(found.some(u => u.name === "user 7"));

        const projected = await session.query({ collection: "Orders" })
            .waitForNonStaleResults()
            .whereEquals("company", "companies/2")
            .selectFields(["freight", "company"])
            .all();
        assert.equal(projected.length, 5);
        assert.ok(projected.every(p => p.company === "companies/2" && typeof p.freight === "number"));

        const withCompany = await session.query({ collection: "Orders" })
            .waitForNonStaleResults()
            .include("company")
            .whereEquals("shipTo.city", "Berlin")
            .all();
        assert.equal(withCompany.length, 7);
        const requests = session.advanced.numberOfRequests;
        assert.equal((await session.load("companies/1")).name, "Acme");
        assert.equal(session.advanced.numberOfRequests, requests);

        const raw = await session.advanced.rawQuery("from Orders where freight >= $min order by freight as double desc limit 2")
            .addParameter("min", 30)
            .waitForNonStaleResults()
            .all();
        assert.deepEqual(raw.map(o => o.freight), [55, 49.5]);

        await assert.rejects(
            () => session.advanced.rawQuery("from Orders where (").all(),
            error => /Invalid query/.test(error.message));
    } finally {
        store.dispose();
    }
});

class Orders_Totals extends AbstractJavaScriptIndexCreationTask {
    constructor() {
        super();
        this.map("Orders", o => ({
            company: o.company,
            total: o.lines.reduce((sum, l) => sum + l.quantity * l.pricePerUnit, 0),
        }));
        this.index("company", "Exact");
        this.store("total", "Yes");
    }
}

test("JavaScript index tasks and the index maintenance operations", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        await new Orders_Totals().execute(store);

        const session = store.openSession();
        const big = await session.query({ indexName: "Orders/Totals" })
            .waitForNonStaleResults()
            .whereGreaterThanOrEqual("total", 80)
            .orderByDescending("total", "Double")
            .all();
        assert.deepEqual(big.map(o => o.lines[0].quantity), [10, 9, 8]);

        const definitions = await store.maintenance.send(new GetIndexesOperation(0, 10));
        assert.ok(definitions.some(d => d.name === "Orders/Totals"));
        const stats = await store.maintenance.send(new GetIndexStatisticsOperation("Orders/Totals"));
        assert.equal(stats.name, "Orders/Totals");
        assert.equal(stats.entriesCount, 10);
        assert.equal(stats.isStale, false);

        const definition = new IndexDefinition();
        definition.name = "Users/ByAge";
        definition.maps = new Set(["map('Users', u => ({ age: u.age }))"]);
        await store.maintenance.send(new PutIndexesOperation(definition));
        await store.maintenance.send(new ResetIndexOperation("Users/ByAge"));
        const old = await store.openSession().query({ indexName: "Users/ByAge" }).waitForNonStaleResults().whereGreaterThan("age", 28).all();
        assert.deepEqual(old.map(u => u.age).sort(), [29, 30]);
        await store.maintenance.send(new DeleteIndexOperation("Users/ByAge"));
        const left = await store.maintenance.send(new GetIndexesOperation(0, 10));
        assert.ok(!left.some(d => d.name === "Users/ByAge"));
    } finally {
        store.dispose();
    }
});

class Orders_ByCompanyName extends AbstractJavaScriptIndexCreationTask {
    constructor() {
        super();
        // A tracked load in the map, a helper from AdditionalSources that loads without tracking.
        this.map(Order, o => {
            const company = load(o.company, "Companies");
            return { company: o.company, name: company.name, label: labelOf(o) };
        });
        this.additionalSources = {
            "labels.js": "function labelOf(o) { return noTracking.load(o.company, 'Companies').name + ' in ' + o.shipTo.city; }",
        };
    }
}

test("JavaScript maps that load other documents: load, noTracking.load and AdditionalSources", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        await new Orders_ByCompanyName().execute(store);
        const query = (field, value) => store.openSession().query({ indexName: "Orders/ByCompanyName" })
            .waitForNonStaleResults().whereEquals(field, value).all();

        assert.equal((await query("name", "Acme")).length, 5);
        assert.equal((await query("label", "Globex in Paris")).length, 2);
        const [definition] = (await store.maintenance.send(new GetIndexesOperation(0, 10))).filter(d => d.name === "Orders/ByCompanyName");
        assert.deepEqual(definition.additionalSources, { "labels.js": "function labelOf(o) { return noTracking.load(o.company, 'Companies').name + ' in ' + o.shipTo.city; }" });

        // The tracked load makes a change of the company map its orders again.
        const session = store.openSession();
        const acme = await session.load("companies/1");
        acme.name = "Acme Corp";
        await session.saveChanges();
        assert.equal((await query("name", "Acme Corp")).length, 5);
        assert.equal((await query("name", "Acme")).length, 0);
        // Re-mapped orders read the new name through the helper too.
        assert.equal((await query("label", "Acme Corp in Paris")).length, 1);
    } finally {
        store.dispose();
    }
});

test("a map whose only load is noTracking.load is not mapped again when the loaded document changes", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const definition = new IndexDefinition();
        definition.name = "Orders/ByCompanyNameUntracked";
        definition.maps = new Set(["map('Orders', o => ({ name: noTracking.load(o.company, 'Companies').name }))"]);
        await store.maintenance.send(new PutIndexesOperation(definition));
        const query = value => store.openSession().query({ indexName: "Orders/ByCompanyNameUntracked" })
            .waitForNonStaleResults().whereEquals("name", value).all();
        assert.equal((await query("Globex")).length, 5);

        const session = store.openSession();
        (await session.load("companies/2")).name = "Globex Inc";
        await session.saveChanges();
        // An order saved after the change maps with the new name; the others keep the old one.
        await session.store(new Order("companies/2", 1, "Rome", []), "orders/11");
        await session.saveChanges();
        assert.equal((await query("Globex")).length, 5);
        assert.equal((await query("Globex Inc")).length, 1);
    } finally {
        store.dispose();
    }
});
