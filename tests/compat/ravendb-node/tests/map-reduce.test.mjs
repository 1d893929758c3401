import { test } from "node:test";
import assert from "node:assert/strict";
import { AbstractJavaScriptIndexCreationTask, GetIndexesOperation, GetIndexStatisticsOperation } from "ravendb";
import { freshStore } from "./harness.mjs";

// RavenDB's Node client serializes `map` as "map('Orders', <the function's source>)" and `reduce`
// as "groupBy(<selector>).aggregate(<reducer>)" (StronglyTyped.js), and sends both in one
// PUT /databases/*/indexes with "Reduce".
class Orders_ByCompany extends AbstractJavaScriptIndexCreationTask {
    constructor() {
        super();
        this.map("Orders", o => ({
            company: o.company,
            count: 1,
            total: o.lines.reduce((s, l) => s + l.quantity * l.pricePerUnit, 0),
        }));
        this.reduce(results => results.groupBy(r => r.company).aggregate(g => ({
            company: g.key,
            count: g.values.reduce((c, r) => c + r.count, 0),
            total: g.values.reduce((t, r) => t + r.total, 0),
        })));
    }
}

class Orders_ByCompanyAndMonth extends AbstractJavaScriptIndexCreationTask {
    constructor() {
        super();
        this.map("Orders", o => ({ company: o.company, month: o.orderedAt.substring(0, 7), count: 1 }));
        this.reduce(results => results.groupBy(r => ({ company: r.company, month: r.month })).aggregate(g => ({
            company: g.key.company,
            month: g.key.month,
            count: g.values.reduce((c, r) => c + r.count, 0),
        })));
    }
}

class Order {
    constructor(company, orderedAt, lines) {
        this.company = company;
        this.orderedAt = orderedAt;
        this.lines = lines;
    }
}

class CompanyTotal {
}

// companies/1: orders 1..4 (totals 10, 20, 30, 40); companies/2: orders 5..6 (50, 60); companies/3: order 7 (70).
async function seed(store) {
    const session = store.openSession();
    const companyOf = i => i <= 4 ? "companies/1" : i <= 6 ? "companies/2" : "companies/3";
    for (let i = 1; i <= 7; i++) {
        const month = i % 2 === 0 ? "2024-02" : "2024-01";
        await session.store(new Order(companyOf(i), `${month}-1${i}T10:00:00.0000000`, [{ quantity: 1, pricePerUnit: i * 5 }, { quantity: 1, pricePerUnit: i * 5 }]), `orders/${i}`);
    }
    await session.saveChanges();
}

test("a map-reduce index task: execute, typed query with whereGreaterThan and orderByDescending", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        await new Orders_ByCompany().execute(store);

        const definition = (await store.maintenance.send(new GetIndexesOperation(0, 10))).find(d => d.name === "Orders/ByCompany");
        assert.equal(definition.type, "JavaScriptMapReduce");
        assert.match(definition.reduce, /^groupBy\(r => r\.company\)\.aggregate\(/);

        const session = store.openSession();
        let stats;
        const rows = await session.query({ indexName: "Orders/ByCompany", documentType: CompanyTotal })
            .waitForNonStaleResults()
            .statistics(s => stats = s)
            .whereGreaterThan("total", 60)
            .orderByDescending("total", "Double")
            .all();
        assert.deepEqual(rows.map(r => [r.company, r.count, r.total]), [["companies/2", 2, 110], ["companies/1", 4, 100], ["companies/3", 1, 70]]);
        assert.ok(rows[0] instanceof CompanyTotal);
        assert.equal(stats.isStale, false);
        assert.equal(stats.indexName, "Orders/ByCompany");
        assert.equal(stats.totalResults, 3);

        // A result row is no document: without an @id in its @metadata the session does not track it.
        assert.throws(() => session.advanced.getMetadataFor(rows[0]), /Could not find the document id/);

        const one = await session.query({ indexName: "Orders/ByCompany" })
            .waitForNonStaleResults()
            .whereEquals("company", "companies/2")
            .single();
        assert.deepEqual([one.company, one.count, one.total], ["companies/2", 2, 110]);
    } finally {
        store.dispose();
    }
});

test("a map-reduce index follows updates and deletes; composite keys", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        await new Orders_ByCompany().execute(store);
        await new Orders_ByCompanyAndMonth().execute(store);

        const write = store.openSession();
        const moved = await write.load("orders/7");
        moved.company = "companies/2";
        await write.delete("orders/1");
        await write.saveChanges();

        const session = store.openSession();
        const totals = await session.query({ indexName: "Orders/ByCompany" })
            .waitForNonStaleResults()
            .orderBy("company")
            .all();
        // companies/3 lost its only order: its row is gone.
        assert.deepEqual(totals.map(r => [r.company, r.count, r.total]), [["companies/1", 3, 90], ["companies/2", 3, 180]]);

        const months = await session.query({ indexName: "Orders/ByCompanyAndMonth" })
            .waitForNonStaleResults()
            .whereEquals("company", "companies/1")
            .orderBy("month")
            .all();
        assert.deepEqual(months.map(r => [r.month, r.count]), [["2024-01", 1], ["2024-02", 2]]);

        const stats = await store.maintenance.send(new GetIndexStatisticsOperation("Orders/ByCompany"));
        assert.equal(stats.isStale, false);
        assert.equal(stats.entriesCount, 2);
    } finally {
        store.dispose();
    }
});
