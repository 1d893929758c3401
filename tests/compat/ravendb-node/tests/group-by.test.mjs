import { test } from "node:test";
import assert from "node:assert/strict";
import { GroupByField } from "ravendb";
import { freshStore } from "./harness.mjs";

class Order {
    constructor(company, freight) {
        this.company = company;
        this.freight = freight;
    }
}

test("group by: groupBy().selectKey().selectCount().selectSum() and a where and order by on an aggregate", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        // companies/0: 1 order, companies/1: 2, companies/2: 3; freight i + 0.5 each.
        let i = 0;
        for (const [company, orders] of [["companies/0", 1], ["companies/1", 2], ["companies/2", 3]]) {
            for (let k = 0; k < orders; k++) {
                i++;
                await session.store(new Order(company, i + 0.5), `orders/${i}`);
            }
        }
        await session.saveChanges();

        const reading = store.openSession();
        // selectCount() and selectSum() each hand back the query: both are called on the group-by.
        const grouped = reading.query({ collection: "Orders" }).waitForNonStaleResults().groupBy("company");
        grouped.selectKey().selectSum(new GroupByField("freight", "freight"));
        const rows = await grouped.selectCount().all();
        const byCompany = Object.fromEntries(rows.map(r => [r.company, r]));
        assert.equal(rows.length, 3);
        assert.equal(byCompany["companies/0"].count, 1);
        assert.equal(byCompany["companies/1"].count, 2);
        assert.equal(byCompany["companies/2"].count, 3);
        assert.equal(byCompany["companies/2"].freight, 4.5 + 5.5 + 6.5);

        const stats = [];
        const busy = await reading.query({ collection: "Orders" })
            .waitForNonStaleResults()
            .statistics(s => stats.push(s))
            .groupBy("company")
            .selectKey("company", "name")
            .selectCount()
            .whereGreaterThan("count", 1)
            .orderByDescending("count", "Long")
            .all();
        assert.deepEqual(busy.map(r => [r.name, r.count]), [["companies/2", 3], ["companies/1", 2]]);
        assert.equal(stats[0].indexName, "Auto/Orders/ByCountAndfreightReducedBycompany");
    } finally {
        store.dispose();
    }
});
