// The certificate operations of RavenDB's Node.js client against a secured Jackdaw server (the
// authOptions of harness.mjs: a ClusterAdmin client certificate); skipped against an unsecured one.
// The server certificate's replacement needs two server certificates to swap between, given by
// the run that sets JACKDAW_SERVER_PFX (the server's own) and JACKDAW_NEXT_SERVER_PFX with
// JACKDAW_NEXT_SERVER_CA (another for 127.0.0.1, and its certificate as PEM), PFX without password.
import { test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect } from "node:tls";
import { inflateRawSync } from "node:zlib";
import {
    DocumentStore, CreateDatabaseOperation, GetDatabaseNamesOperation,
    CreateClientCertificateOperation, PutClientCertificateOperation, GetCertificatesOperation,
    GetCertificateOperation, EditClientCertificateOperation, DeleteCertificateOperation,
    GetCertificateMetadataOperation, GetCertificatesMetadataOperation, ReplaceClusterCertificateOperation,
} from "ravendb";
import { url, authOptions } from "./harness.mjs";

const unsecured = authOptions === undefined && "needs a secured server (JACKDAW_AUTH_TYPE)";
const swap = process.env.JACKDAW_SERVER_PFX && process.env.JACKDAW_NEXT_SERVER_PFX && process.env.JACKDAW_NEXT_SERVER_CA;
let counter = 0;

/** The entries of a zip: its central directory, then each entry's data (stored or deflated). */
function unzip(zip) {
    let end = zip.length - 22;
    while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) {
        end--;
    }
    assert.ok(end >= 0, "not a zip: no end of central directory");
    const entries = new Map();
    let at = zip.readUInt32LE(end + 16);
    for (let i = 0; i < zip.readUInt16LE(end + 10); i++) {
        assert.equal(zip.readUInt32LE(at), 0x02014b50, "a central directory entry");
        const method = zip.readUInt16LE(at + 10);
        const size = zip.readUInt32LE(at + 20);
        const nameLength = zip.readUInt16LE(at + 28);
        const skip = nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
        const local = zip.readUInt32LE(at + 42);
        const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
        const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
        const data = zip.subarray(start, start + size);
        entries.set(name, method === 8 ? inflateRawSync(data) : Buffer.from(data));
        at += 46 + skip;
    }
    return entries;
}

function thumbprintOf(pem) {
    return new X509Certificate(pem).fingerprint.replaceAll(":", "");
}

/** The SHA-1 thumbprint of the certificate a new TLS handshake presents. */
function presentedThumbprint() {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
        const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
            const thumbprint = socket.getPeerCertificate().fingerprint.replaceAll(":", "");
            socket.end();
            resolve(thumbprint);
        });
        socket.on("error", reject);
    });
}

function openStore(database, options = authOptions) {
    const store = new DocumentStore(url, database, options);
    store.initialize();
    return store;
}

async function freshDatabase(admin) {
    const database = `certs-${process.pid}-${Date.now()}-${counter++}`;
    await admin.maintenance.server.send(new CreateDatabaseOperation({ databaseName: database }));
    return database;
}

test("CreateClientCertificateOperation: the zip's PFX and PEM each work as a client's authOptions", { skip: unsecured }, async () => {
    const admin = openStore("unused");
    const stores = [admin];
    try {
        const database = await freshDatabase(admin);
        const other = await freshDatabase(admin);
        const name = `writer-${counter++}`;
        const created = await admin.maintenance.server.send(
            new CreateClientCertificateOperation(name, { [database]: "ReadWrite" }, "ValidUser", "pa55"));
        const files = unzip(created.rawData);
        assert.deepEqual([...files.keys()].sort(), [`${name}.crt`, `${name}.key`, `${name}.pfx`]);
        const crt = files.get(`${name}.crt`).toString();
        const key = files.get(`${name}.key`).toString();
        assert.match(key, /^-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: DES-EDE3-CBC,/);

        const viaPfx = openStore(database, { type: "pfx", certificate: files.get(`${name}.pfx`), password: "pa55", ca: authOptions.ca });
        const viaPem = openStore(database, { type: "pem", certificate: crt + key, password: "pa55", ca: authOptions.ca });
        stores.push(viaPfx, viaPem);
        for (const [store, id] of [[viaPfx, "notes/pfx"], [viaPem, "notes/pem"]]) {
            const session = store.openSession();
            await session.store({ text: id }, id);
            await session.saveChanges();
            const loaded = await store.openSession().load(id);
            assert.equal(loaded.text, id);
        }
        // A ValidUser lists only its databases, and reaches no other.
        const names = await viaPem.maintenance.server.send(new GetDatabaseNamesOperation(0, 1000));
        assert.deepEqual(names, [database]);
        const elsewhere = openStore(other, { type: "pem", certificate: crt + key, password: "pa55", ca: authOptions.ca });
        stores.push(elsewhere);
        await assert.rejects(() => elsewhere.openSession().load("notes/1"), error => error.name === "AuthorizationException");
        const mine = await admin.maintenance.server.send(new GetCertificateOperation(thumbprintOf(crt)));
        assert.equal(mine.name, name);
    } finally {
        stores.forEach(store => store.dispose());
    }
});

test("Put, get, list, edit and delete a client certificate, with the clearance rules", { skip: unsecured }, async () => {
    const admin = openStore("unused");
    const stores = [admin];
    try {
        const database = `Mixed.Case-${counter++}`;
        await admin.maintenance.server.send(new CreateDatabaseOperation({ databaseName: database }));
        const name = `operator-${counter++}`;
        const created = await admin.maintenance.server.send(
            new CreateClientCertificateOperation(name, { [database]: "Read" }, "Operator"));
        const files = unzip(created.rawData);
        const crt = files.get(`${name}.crt`).toString();
        const thumbprint = thumbprintOf(crt);

        const one = await admin.maintenance.server.send(new GetCertificateOperation(thumbprint));
        assert.equal(one.name, name);
        assert.equal(one.thumbprint, thumbprint);
        assert.equal(one.securityClearance, "Operator");
        assert.deepEqual(one.permissions, { [database]: "Read" });
        assert.ok(one.notAfter instanceof Date && one.notAfter > new Date(Date.now() + 4 * 365 * 86400_000));
        assert.ok(one.notBefore instanceof Date && one.notBefore < new Date());
        assert.equal(typeof one.publicKeyPinningHash, "string");
        assert.equal(await admin.maintenance.server.send(new GetCertificateOperation("0".repeat(40))), undefined);

        const all = await admin.maintenance.server.send(new GetCertificatesOperation(0, 1000));
        assert.ok(all.some(c => c.name === "Server Certificate" && c.securityClearance === "ClusterNode"));
        assert.ok(all.some(c => c.thumbprint === thumbprint));
        assert.equal((await admin.maintenance.server.send(new GetCertificatesOperation(0, 1))).length, 1);
        const metadata = await admin.maintenance.server.send(new GetCertificateMetadataOperation(thumbprint));
        assert.deepEqual([metadata.name, metadata.certificate], [name, undefined]);
        assert.ok(metadata.notAfter instanceof Date);
        const named = await admin.maintenance.server.send(new GetCertificatesMetadataOperation(name));
        assert.deepEqual(named.map(c => c.thumbprint), [thumbprint]);

        // The generated certificate, PFX without a password, is an Operator: it may not grant ClusterAdmin.
        const asOperator = openStore(database, { type: "pfx", certificate: files.get(`${name}.pfx`), ca: authOptions.ca });
        stores.push(asOperator);
        await assert.rejects(
            () => asOperator.maintenance.server.send(new PutClientCertificateOperation("escalated", new X509Certificate(crt).raw.toString("base64"), {}, "ClusterAdmin")),
            error => error.name === "AuthorizationException" && /only a ClusterAdmin/i.test(error.message));
        assert.ok((await asOperator.maintenance.server.send(new GetCertificatesOperation(0, 1000))).length >= 2);

        await admin.maintenance.server.send(new EditClientCertificateOperation({
            thumbprint, name: `${name}-edited`, permissions: { [database]: "Admin" }, clearance: "ValidUser",
        }));
        const edited = await admin.maintenance.server.send(new GetCertificateOperation(thumbprint));
        assert.equal(edited.name, `${name}-edited`);
        assert.equal(edited.securityClearance, "ValidUser");
        assert.deepEqual(edited.permissions, { [database]: "Admin" });

        await admin.maintenance.server.send(new DeleteCertificateOperation(thumbprint));
        assert.equal(await admin.maintenance.server.send(new GetCertificateOperation(thumbprint)), undefined);
        const forgotten = openStore(database, { type: "pfx", certificate: files.get(`${name}.pfx`), ca: authOptions.ca });
        stores.push(forgotten);
        await assert.rejects(() => forgotten.openSession().load("a"), error => error.name === "AuthorizationException");

        // Registered again from its public part alone, it has its access back.
        await admin.maintenance.server.send(new PutClientCertificateOperation(
            `${name}-again`, new X509Certificate(crt).raw.toString("base64"), { [database]: "ReadWrite" }, "ValidUser"));
        const again = await admin.maintenance.server.send(new GetCertificateOperation(thumbprint));
        assert.deepEqual([again.name, again.securityClearance], [`${name}-again`, "ValidUser"]);
        const back = openStore(database, { type: "pem", certificate: crt + files.get(`${name}.key`).toString(), ca: authOptions.ca });
        stores.push(back);
        const session = back.openSession();
        await session.store({ back: true }, "notes/back");
        await session.saveChanges();
    } finally {
        stores.forEach(store => store.dispose());
    }
});

test("ReplaceClusterCertificateOperation: new handshakes present the new certificate at once", { skip: unsecured || (!swap && "needs JACKDAW_SERVER_PFX, JACKDAW_NEXT_SERVER_PFX and JACKDAW_NEXT_SERVER_CA") }, async () => {
    const own = readFileSync(process.env.JACKDAW_SERVER_PFX);
    const next = readFileSync(process.env.JACKDAW_NEXT_SERVER_PFX);
    const nextCa = readFileSync(process.env.JACKDAW_NEXT_SERVER_CA, "utf8");
    const admin = openStore("unused");
    const trustingNext = openStore("unused", { ...authOptions, ca: nextCa });
    try {
        const before = await presentedThumbprint();
        await admin.maintenance.server.send(new ReplaceClusterCertificateOperation(next, true));
        assert.equal(await presentedThumbprint(), thumbprintOf(nextCa));
        assert.notEqual(thumbprintOf(nextCa), before);
        // A client that trusts only the new certificate works on a new connection.
        assert.ok(Array.isArray(await trustingNext.maintenance.server.send(new GetDatabaseNamesOperation(0, 10))));

        await trustingNext.maintenance.server.send(new ReplaceClusterCertificateOperation(own, true));
        assert.equal(await presentedThumbprint(), before);
    } finally {
        admin.dispose();
        trustingNext.dispose();
    }
});
