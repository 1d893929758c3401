// Shared by the compatibility tests: the Jackdaw server under test (JACKDAW_URL, started by the
// xunit suite on port 0 with a temp folder) and a fresh database per test.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { DocumentStore, CreateDatabaseOperation } from "ravendb";

export const url = process.env.JACKDAW_URL;
assert.ok(url, "JACKDAW_URL must name the Jackdaw server under test");

// A secured server (the suite's second run): the client's certificate (ClusterAdmin) as the
// client's authOptions take it, "pem" (certificate and PKCS#1 key in one file) or "pfx", and the
// server's certificate to trust. Undefined against an unsecured server.
export const authOptions = process.env.JACKDAW_AUTH_TYPE
    ? {
        type: process.env.JACKDAW_AUTH_TYPE,
        certificate: readFileSync(process.env.JACKDAW_CLIENT_CERT),
        password: process.env.JACKDAW_CLIENT_CERT_PASSWORD || undefined,
        ca: readFileSync(process.env.JACKDAW_CA),
    }
    : undefined;

/**
 * A plain HTTP request to the server under test (for what the client has no operation for):
 * global fetch, or on a secured server node:https with the client certificate. Answers
 * { status, json() }.
 */
export async function rawFetch(path, { method = "GET" } = {}) {
    if (!authOptions) {
        const response = await fetch(url + path, { method });
        return { status: response.status, json: () => response.json() };
    }
    const tls = authOptions.type === "pfx"
        ? { pfx: authOptions.certificate, passphrase: authOptions.password }
        : { cert: authOptions.certificate, key: authOptions.certificate, passphrase: authOptions.password };
    return new Promise((resolve, reject) => {
        const req = httpsRequest(url + path, { method, ...tls, ca: authOptions.ca }, res => {
            const chunks = [];
            res.on("data", chunk => chunks.push(chunk));
            res.on("end", () => {
                const body = Buffer.concat(chunks).toString();
                resolve({ status: res.statusCode, json: async () => JSON.parse(body) });
            });
            res.on("error", reject);
        });
        req.on("error", reject);
        req.end();
    });
}

/** A DocumentStore over `database` on the server under test, with its authOptions. */
export function storeFor(database) {
    return new DocumentStore(url, database, authOptions);
}

let counter = 0;

/** A DocumentStore with default conventions (topology updates on) over a database of its own. */
export async function freshStore(prefix = "compat") {
    const database = `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
    const admin = storeFor(database);
    admin.initialize();
    await admin.maintenance.server.send(new CreateDatabaseOperation({ databaseName: database }));
    admin.dispose();
    const store = storeFor(database);
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
