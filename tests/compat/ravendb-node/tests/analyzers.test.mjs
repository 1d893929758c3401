import { test } from "node:test";
import assert from "node:assert/strict";
import {
    AbstractJavaScriptIndexCreationTask,
    DeleteAnalyzerOperation,
    DeleteIndexOperation,
    GetIndexOperation,
    IndexDefinition,
    PutAnalyzersOperation,
    PutIndexesOperation,
} from "ravendb";
import { freshStore } from "./harness.mjs";

// Jackdaw compiles no C#: an analyzer's code is a built-in analyzer's name or a JSON chain of Lucene parts.
const folding = JSON.stringify({ Tokenizer: "Whitespace", TokenFilters: ["LowerCase", "ASCIIFolding"] });
const prefixes = JSON.stringify({ Tokenizer: "Standard", TokenFilters: ["LowerCase", { Type: "EdgeNGram", minGramSize: 2, maxGramSize: 10 }] });

class Product {
    constructor(name, title) {
        this.name = name;
        this.title = title;
    }
}

class Products_Search extends AbstractJavaScriptIndexCreationTask {
    constructor() {
        super();
        this.map(Product, p => ({ name: p.name, title: p.title }));
        // As RavenDB: a field that names an analyzer and no indexing is a full-text field.
        this.analyze("name", "Folding");
        this.index("title", "Search");
        this.analyze("title", "Prefixes");
    }
}

async function seed(store) {
    const session = store.openSession();
    await session.store(new Product("Crème Brûlée", "Bestseller of the year"), "products/1");
    await session.store(new Product("creme caramel", "Best value"), "products/2");
    await session.store(new Product("Chocolate Cake", "Seasonal"), "products/3");
    await session.saveChanges();
}

async function search(store, field, words, index = "Products/Search") {
    const session = store.openSession();
    const found = await session.query({ indexName: index, documentType: Product })
        .waitForNonStaleResults()
        .search(field, words)
        .all();
    return found.map(p => session.advanced.getDocumentId(p)).sort();
}

test("PutAnalyzersOperation: an index field's analyzer folds accents and makes prefixes searchable", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        await store.maintenance.send(new PutAnalyzersOperation({ name: "Folding", code: folding }, { name: "Prefixes", code: prefixes }));
        await new Products_Search().execute(store);

        const definition = await store.maintenance.send(new GetIndexOperation("Products/Search"));
        assert.equal(definition.fields["name"].analyzer, "Folding");
        assert.equal(definition.fields["name"].indexing, "Search");

        // ASCII folding on both sides: "creme" finds "Crème", "brulee" finds "Brûlée".
        assert.deepEqual(await search(store, "name", "creme"), ["products/1", "products/2"]);
        assert.deepEqual(await search(store, "name", "brulee"), ["products/1"]);
        // StandardAnalyzer (an auto-index's search) does not fold.
        const session = store.openSession();
        const plain = await session.query({ collection: "Products" }).waitForNonStaleResults().search("name", "creme").all();
        assert.deepEqual(plain.map(p => p.name), ["creme caramel"]);

        // Edge n-grams: the beginning of a word finds it, which StandardAnalyzer would not.
        assert.deepEqual(await search(store, "title", "bestsel"), ["products/1"]);
        assert.deepEqual(await search(store, "title", "seas"), ["products/3"]);
        const whole = await session.query({ collection: "Products" }).waitForNonStaleResults().search("title", "bestsel").all();
        assert.deepEqual(whole, []);
    } finally {
        store.dispose();
    }
});

test("a field may name a built-in Lucene analyzer by RavenDB's names", async () => {
    const { store } = await freshStore();
    try {
        await seed(store);
        const definition = new IndexDefinition();
        definition.name = "Products/Exactly";
        definition.maps = new Set(["map('Products', p => ({ name: p.name }))"]);
        definition.fields = { name: { indexing: "Search", analyzer: "Lucene.Net.Analysis.WhitespaceAnalyzer" } };
        await store.maintenance.send(new PutIndexesOperation(definition));
        // WhitespaceAnalyzer keeps case.
        assert.deepEqual(await search(store, "name", "Cake", "Products/Exactly"), ["products/3"]);
        assert.deepEqual(await search(store, "name", "cake", "Products/Exactly"), []);
    } finally {
        store.dispose();
    }
});

test("analyzer errors: C# code, an unknown name in an index, deleting one in use", async () => {
    const { store } = await freshStore();
    try {
        await assert.rejects(
            () => store.maintenance.send(new PutAnalyzersOperation({ name: "MyAnalyzer", code: "public class MyAnalyzer : StandardAnalyzer { }" })),
            error => /does not compile analyzer classes/.test(error.message));

        const unknown = new IndexDefinition();
        unknown.name = "Products/Broken";
        unknown.maps = new Set(["map('Products', p => ({ name: p.name }))"]);
        unknown.fields = { name: { analyzer: "MyAnalyzer" } };
        await assert.rejects(
            () => store.maintenance.send(new PutIndexesOperation(unknown)),
            error => /Cannot find analyzer type 'MyAnalyzer' for field: name/.test(error.message));

        await store.maintenance.send(new PutAnalyzersOperation({ name: "Folding", code: folding }, { name: "Prefixes", code: prefixes }));
        await new Products_Search().execute(store);
        // Jackdaw keeps an analyzer an index names (a 409, which this client reads as its ConcurrencyException).
        await assert.rejects(
            () => store.maintenance.send(new DeleteAnalyzerOperation("Folding")),
            error => /is used by the index 'Products\/Search'/.test(error.message));
        await store.maintenance.send(new DeleteIndexOperation("Products/Search"));
        await store.maintenance.send(new DeleteAnalyzerOperation("Folding"));
        // Deleting one that is not there is no error, as in RavenDB.
        await store.maintenance.send(new DeleteAnalyzerOperation("Folding"));
    } finally {
        store.dispose();
    }
});
