// Shared by the compatibility tests: the Jackdaw server under test (JACKDAW_URL, started by the
// xunit suite on port 0 with a temp folder) and a fresh database per test.
import assert from "node:assert/strict";
import { DocumentStore, CreateDatabaseOperation } from "ravendb";

export const url = process.env.JACKDAW_URL;
assert.ok(url, "JACKDAW_URL must name the Jackdaw server under test");

let counter = 0;

/** A DocumentStore with default conventions (topology updates on) over a database of its own. */
export async function freshStore(prefix = "compat") {
    const database = `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
    const admin = new DocumentStore(url, database);
    admin.initialize();
    await admin.maintenance.server.send(new CreateDatabaseOperation({ databaseName: database }));
    admin.dispose();
    const store = new DocumentStore(url, database);
    store.initialize();
    return { store, database };
}

export class User {
    constructor(name, age, friendId) {
        this.name = name;
        this.age = age;
        this.friendId = friendId;
    }
}

export class Company {
    constructor(name) {
        this.name = name;
    }
}
