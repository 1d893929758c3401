// Shared by the compatibility tests: the Jackdaw server under test (JACKDAW_URL, started by the
// xunit suite on port 0 with a temp folder) and a fresh database per test.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { DocumentStore, CreateDatabaseOperation } from "ravendb";

// A cluster (the suite's cluster run): JACKDAW_CLUSTER_URLS names every node, comma-separated, and each
// test's database is created with JACKDAW_REPLICATION_FACTOR copies. The stores get every URL and
// follow the database's topology; a node may be killed mid-run.
export const urls = process.env.JACKDAW_CLUSTER_URLS ? process.env.JACKDAW_CLUSTER_URLS.split(",") : [process.env.JACKDAW_URL];
export const url = urls[0];
assert.ok(url, "JACKDAW_URL (or JACKDAW_CLUSTER_URLS) must name the Jackdaw server under test");
const replicationFactor = Number(process.env.JACKDAW_REPLICATION_FACTOR || 1);

// The tag in generated ids and change vectors: "A" on one server; on a cluster, the tag of the
// node that served the request, which is another after a failover.
export const nodeTag = urls.length > 1 ? "[A-Z]" : "A";

/** The tag at the end of a generated id (`users/1-A` gives `A`), checked against {@link nodeTag}. */
export function tagOf(id) {
    const tag = id.slice(id.lastIndexOf("-") + 1);
    assert.match(tag, new RegExp(`^${nodeTag}$`), `${id} does not end with a node tag`);
    return tag;
}

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
        // On a cluster: the first node that answers (one may have been killed).
        for (const [i, node] of urls.entries()) {
            try {
                const response = await fetch(node + path, { method });
                return { status: response.status, json: () => response.json() };
            } catch (error) {
                if (i === urls.length - 1) {
                    throw error;
                }
            }
        }
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
    return new DocumentStore(urls, database, authOptions);
}

let counter = 0;

/** A DocumentStore with default conventions (topology updates on) over a database of its own. */
export async function freshStore(prefix = "compat") {
    const database = `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
    const admin = storeFor(database);
    admin.initialize();
    try {
        await admin.maintenance.server.send(new CreateDatabaseOperation({ databaseName: database }, replicationFactor));
    } catch (error) {
        // On a cluster whose leader dies under the create, the client sends it again to the next
        // node with a new raft-request-id (this client makes one per attempt), and the first may
        // have been committed: "already exists". The name is this test's own: it is the database.
        if (urls.length === 1 || !/already exists/.test(error.message)) {
            throw error;
        }
    } finally {
        // Even when the create failed: an open store keeps node from ending the test file.
        admin.dispose();
    }
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
