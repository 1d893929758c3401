// Attachments through RavenDB's Node.js client: the session's attachments (sent with saveChanges
// as one multipart bulk_docs), the attachment operations, and what a document's metadata says
// about them. Every scenario reads the bytes back and compares them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes, createHash } from "node:crypto";
import { Readable } from "node:stream";
import {
    PutAttachmentOperation, GetAttachmentOperation, DeleteAttachmentOperation,
    ConfigureRevisionsOperation, RevisionsConfiguration, RevisionsCollectionConfiguration,
} from "ravendb";
import { freshStore, rawFetch, User } from "./harness.mjs";

/** The whole body of an attachment the client hands back, disposed of afterwards. */
async function bytesOf(attachment) {
    try {
        const chunks = [];
        for await (const chunk of attachment.data) {
            chunks.push(Buffer.from(chunk));
        }
        return Buffer.concat(chunks);
    } finally {
        attachment.dispose();
    }
}

const sha256 = bytes => createHash("sha256").update(bytes).digest("hex");

// RavenDB's hash of an attachment: 32 bytes, base64 (44 characters with the padding).
const HASH = /^[A-Za-z0-9+/]{43}=$/;

test("session: store attachments (Buffer, stream, empty), saveChanges, then names, @flags and the bytes", async () => {
    const { store } = await freshStore();
    try {
        const photo = randomBytes(4096);
        const notes = Buffer.from("first line\nsecond line\n", "utf8");
        const session = store.openSession();
        const ada = new User("Ada", 36);
        await session.store(ada, "users/ada");
        session.advanced.attachments.store("users/ada", "photo.png", photo, "image/png");
        session.advanced.attachments.store(ada, "notes.txt", Readable.from([notes.subarray(0, 5), notes.subarray(5)]), "text/plain");
        session.advanced.attachments.store(ada, "empty.bin", Buffer.alloc(0));
        await session.saveChanges();

        // The saving session took the server's answer into the entity's metadata.
        const saved = session.advanced.attachments.getNames(ada).map(a => a.name).sort();
        assert.deepEqual(saved, ["empty.bin", "notes.txt", "photo.png"]);

        const reader = store.openSession();
        const loaded = await reader.load("users/ada");
        const metadata = reader.advanced.getMetadataFor(loaded);
        assert.equal(metadata["@flags"], "HasAttachments");
        const names = reader.advanced.attachments.getNames(loaded);
        // RavenDB lists a document's attachments sorted by name.
        assert.deepEqual(names.map(a => a.name), ["empty.bin", "notes.txt", "photo.png"]);
        const byName = Object.fromEntries(names.map(a => [a.name, a]));
        assert.equal(byName["photo.png"].contentType, "image/png");
        assert.equal(byName["photo.png"].size, 4096);
        assert.equal(byName["notes.txt"].contentType, "text/plain");
        assert.equal(byName["notes.txt"].size, notes.length);
        assert.equal(byName["empty.bin"].size, 0);
        for (const a of names) {
            assert.match(a.hash, HASH, `${a.name}'s hash`);
        }
        assert.notEqual(byName["photo.png"].hash, byName["notes.txt"].hash);

        const got = await reader.advanced.attachments.get("users/ada", "photo.png");
        assert.equal(got.details.name, "photo.png");
        assert.equal(got.details.documentId, "users/ada");
        assert.equal(got.details.contentType, "image/png");
        assert.equal(got.details.size, 4096);
        assert.equal(got.details.hash, byName["photo.png"].hash);
        assert.equal(typeof got.details.changeVector, "string");
        assert.ok(got.details.changeVector.length > 0);
        assert.deepEqual(await bytesOf(got), photo);

        // By the tracked entity, too.
        const text = await reader.advanced.attachments.get(loaded, "notes.txt");
        assert.equal((await bytesOf(text)).toString("utf8"), notes.toString("utf8"));
        const empty = await reader.advanced.attachments.get(loaded, "empty.bin");
        assert.equal(empty.details.size, 0);
        assert.equal((await bytesOf(empty)).length, 0);

        assert.equal(await reader.advanced.attachments.exists("users/ada", "photo.png"), true);
        assert.equal(await reader.advanced.attachments.exists("users/ada", "PHOTO.PNG"), true, "names are case-insensitive, as ids");
        assert.equal(await reader.advanced.attachments.exists("users/ada", "missing.png"), false);
        assert.equal(await reader.advanced.attachments.exists("users/none", "photo.png"), false);
        assert.equal(await reader.advanced.attachments.get("users/ada", "missing.png"), null);
    } finally {
        store.dispose();
    }
});

test("session: delete, copy, move and rename; the same bytes on two documents have the same hash", async () => {
    const { store } = await freshStore();
    try {
        const a = Buffer.from("the contents of a");
        const b = Buffer.from("the contents of b");
        const setup = store.openSession();
        await setup.store(new User("A"), "users/a");
        await setup.store(new User("B"), "users/b");
        setup.advanced.attachments.store("users/a", "a.txt", a, "text/plain");
        setup.advanced.attachments.store("users/a", "b.txt", b, "text/plain");
        await setup.saveChanges();

        const first = store.openSession();
        first.advanced.attachments.delete("users/a", "b.txt");
        first.advanced.attachments.copy("users/a", "a.txt", "users/b", "copy.txt");
        await first.saveChanges();

        let check = store.openSession();
        const userA = await check.load("users/a");
        const userB = await check.load("users/b");
        assert.deepEqual(check.advanced.attachments.getNames(userA).map(x => x.name), ["a.txt"]);
        const copy = check.advanced.attachments.getNames(userB);
        assert.deepEqual(copy.map(x => x.name), ["copy.txt"]);
        assert.equal(copy[0].hash, check.advanced.attachments.getNames(userA)[0].hash, "a copy has the source's hash");
        assert.equal(copy[0].contentType, "text/plain");
        assert.equal(copy[0].size, a.length);
        assert.equal(await check.advanced.attachments.exists("users/a", "b.txt"), false);
        assert.deepEqual(await bytesOf(await check.advanced.attachments.get("users/b", "copy.txt")), a);

        const second = store.openSession();
        const loadedA = await second.load("users/a");
        const loadedB = await second.load("users/b");
        second.advanced.attachments.move(loadedA, "a.txt", loadedB, "moved.txt");
        second.advanced.attachments.rename("users/b", "copy.txt", "renamed.txt");
        await second.saveChanges();

        check = store.openSession();
        const afterA = await check.load("users/a");
        const afterB = await check.load("users/b");
        assert.deepEqual(check.advanced.attachments.getNames(afterA), []);
        assert.equal(check.advanced.getMetadataFor(afterA)["@flags"], undefined, "no attachments left: no HasAttachments");
        const names = check.advanced.attachments.getNames(afterB);
        assert.deepEqual(names.map(x => x.name), ["moved.txt", "renamed.txt"]);
        assert.equal(names[0].hash, names[1].hash);
        assert.equal(check.advanced.getMetadataFor(afterB)["@flags"], "HasAttachments");
        assert.deepEqual(await bytesOf(await check.advanced.attachments.get("users/b", "moved.txt")), a);
        assert.deepEqual(await bytesOf(await check.advanced.attachments.get("users/b", "renamed.txt")), a);
        assert.equal(await check.advanced.attachments.get("users/a", "a.txt"), null);

        // The same bytes stored on its own on a third document: the same hash again.
        const third = store.openSession();
        await third.store(new User("C"), "users/c");
        third.advanced.attachments.store("users/c", "same.txt", Buffer.from(a), "text/plain");
        await third.saveChanges();
        const c = await store.openSession().advanced.attachments.get("users/c", "same.txt");
        assert.equal(c.details.hash, names[0].hash);
        c.dispose();
    } finally {
        store.dispose();
    }
});

test("PutAttachmentOperation, GetAttachmentOperation, DeleteAttachmentOperation; the document's change vector moves", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(new User("Grace", 45), "users/grace");
        await session.saveChanges();
        const before = session.advanced.getChangeVectorFor(await session.load("users/grace"));

        const bytes = randomBytes(1000);
        const name = "résumé final.pdf";
        const put = await store.operations.send(new PutAttachmentOperation("users/grace", name, bytes, "application/pdf"));
        assert.equal(put.name, name);
        assert.equal(put.documentId, "users/grace");
        assert.equal(put.contentType, "application/pdf");
        assert.equal(put.size, 1000);
        assert.match(put.hash, HASH);
        assert.equal(typeof put.changeVector, "string");

        const reader = store.openSession();
        const grace = await reader.load("users/grace");
        assert.notEqual(reader.advanced.getChangeVectorFor(grace), before, "adding an attachment changes the document");
        assert.deepEqual(reader.advanced.attachments.getNames(grace).map(x => [x.name, x.hash, x.size]), [[name, put.hash, 1000]]);

        const got = await store.operations.send(new GetAttachmentOperation("users/grace", name, "Document", null));
        assert.equal(got.details.hash, put.hash);
        assert.equal(got.details.contentType, "application/pdf");
        assert.equal(got.details.size, 1000);
        assert.deepEqual(await bytesOf(got), bytes);

        // Another put under the same name replaces it. (A Buffer: client 7.2.6 cannot send a
        // Readable here, its fetch wants a `duplex` option it does not give.)
        const replacement = randomBytes(300);
        const replaced = await store.operations.send(new PutAttachmentOperation("users/grace", name, replacement, "application/octet-stream"));
        assert.equal(replaced.size, 300);
        assert.notEqual(replaced.hash, put.hash);
        const again = await store.operations.send(new GetAttachmentOperation("users/grace", name, "Document", null));
        assert.equal(again.details.contentType, "application/octet-stream");
        assert.deepEqual(await bytesOf(again), replacement);

        // (No change vector: client 7.2.6's PutAttachmentOperation and DeleteAttachmentOperation
        // fail before sending one, setting If-Match on headers they never created.)

        await store.operations.send(new DeleteAttachmentOperation("users/grace", name));
        assert.equal(await store.operations.send(new GetAttachmentOperation("users/grace", name, "Document", null)), null);
        const afterDelete = store.openSession();
        const gone = await afterDelete.load("users/grace");
        assert.deepEqual(afterDelete.advanced.attachments.getNames(gone), []);
        assert.equal(afterDelete.advanced.getMetadataFor(gone)["@flags"], undefined);
        assert.equal(gone.name, "Grace", "the document itself is untouched");

        // Deleting an attachment that is not there is not an error, as in RavenDB.
        await store.operations.send(new DeleteAttachmentOperation("users/grace", name));
    } finally {
        store.dispose();
    }
});

// PUT /attachments on a missing document answers 404 with DocumentDoesNotExistException naming it
// (RavenDB answers 500, its InvalidOperationException). This client reads any 404 as "no result",
// so PutAttachmentOperation fails with a MappingError and the message is lost: the client's
// limitation, shown here with the raw answer beside it. In bulk_docs the same error is a 409, which
// the client throws as DocumentDoesNotExistException with our message.
test("an attachment on a missing document is refused with an error naming it, in a session and as an operation", async () => {
    const { store, database } = await freshStore();
    try {
        await assert.rejects(
            store.operations.send(new PutAttachmentOperation("users/none", "a.txt", Buffer.from("a"), "text/plain")),
            error => error.name === "MappingError",
            "PutAttachmentOperation reads the 404 as no result");
        const raw = await rawFetch(`/databases/${database}/attachments?id=users%2Fnone&name=a.txt`, { method: "PUT" });
        assert.equal(raw.status, 404);
        const body = await raw.json();
        assert.equal(body.Type, "DocumentDoesNotExistException");
        assert.match(body.Message, /users\/none/);

        const session = store.openSession();
        await session.store(new User("Real"), "users/real");
        session.advanced.attachments.store("users/none", "a.txt", Buffer.from("a"), "text/plain");
        await assert.rejects(
            session.saveChanges(),
            error => error.name === "DocumentDoesNotExistException" && /users\/none/.test(error.message),
            "saveChanges");

        // The batch is atomic: the document stored with it was not saved either.
        const check = store.openSession();
        assert.equal(await check.load("users/real"), null);
        assert.equal(await check.load("users/none"), null);
        assert.equal(await check.advanced.attachments.exists("users/none", "a.txt"), false);
    } finally {
        store.dispose();
    }
});

test("a 5 MB attachment round trip, from a stream in a session and from a Buffer as an operation", async () => {
    const { store } = await freshStore();
    try {
        const size = 5 * 1024 * 1024;
        const big = randomBytes(size);
        // In 64 KiB pieces through a stream (the client reads it whole into the multipart body).
        const pieces = [];
        for (let offset = 0; offset < size; offset += 65536) {
            pieces.push(big.subarray(offset, offset + 65536));
        }
        const session = store.openSession();
        await session.store(new User("Big"), "users/big");
        session.advanced.attachments.store("users/big", "big.bin", Readable.from(pieces), "application/octet-stream");
        await session.saveChanges();

        const got = await store.openSession().advanced.attachments.get("users/big", "big.bin");
        assert.equal(got.details.size, size);
        const back = await bytesOf(got);
        assert.equal(back.length, size);
        assert.equal(sha256(back), sha256(big));

        // The same bytes as an operation, to another document: the same hash as the first.
        const other = store.openSession();
        await other.store(new User("Other"), "users/other");
        await other.saveChanges();
        const put = await store.operations.send(new PutAttachmentOperation("users/other", "big.bin", big, "application/octet-stream"));
        assert.equal(put.size, size);
        assert.equal(put.hash, got.details.hash);
        const second = await store.operations.send(new GetAttachmentOperation("users/other", "big.bin", "Document", null));
        assert.equal(sha256(await bytesOf(second)), sha256(big));
    } finally {
        store.dispose();
    }
});

test("deleting a document deletes its attachments; a new document with the id starts with none", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(new User("Temp"), "users/temp");
        session.advanced.attachments.store("users/temp", "one.txt", Buffer.from("one"), "text/plain");
        session.advanced.attachments.store("users/temp", "two.txt", Buffer.from("two"), "text/plain");
        await session.saveChanges();
        assert.equal(await store.openSession().advanced.attachments.exists("users/temp", "one.txt"), true);

        const deleting = store.openSession();
        await deleting.delete("users/temp");
        await deleting.saveChanges();

        const recreate = store.openSession();
        await recreate.store(new User("Temp again"), "users/temp");
        await recreate.saveChanges();

        const check = store.openSession();
        const temp = await check.load("users/temp");
        assert.equal(temp.name, "Temp again");
        assert.deepEqual(check.advanced.attachments.getNames(temp), []);
        assert.equal(check.advanced.getMetadataFor(temp)["@flags"], undefined);
        assert.equal(await check.advanced.attachments.exists("users/temp", "one.txt"), false);
        assert.equal(await check.advanced.attachments.get("users/temp", "two.txt"), null);
    } finally {
        store.dispose();
    }
});

test("a document stored again by the session keeps its attachments: the server, not the body, decides @attachments", async () => {
    const { store } = await freshStore();
    try {
        const session = store.openSession();
        await session.store(new User("Keeper", 1), "users/keeper");
        session.advanced.attachments.store("users/keeper", "kept.txt", Buffer.from("kept"), "text/plain");
        await session.saveChanges();

        // A session that loaded the document before the attachment existed writes it back
        // with its old metadata: the attachment stays.
        const stale = store.openSession();
        const keeper = await stale.load("users/keeper");
        await store.operations.send(new PutAttachmentOperation("users/keeper", "later.txt", Buffer.from("later"), "text/plain"));
        keeper.age = 2;
        await stale.saveChanges();

        const check = store.openSession();
        const loaded = await check.load("users/keeper");
        assert.equal(loaded.age, 2);
        assert.deepEqual(check.advanced.attachments.getNames(loaded).map(x => x.name), ["kept.txt", "later.txt"]);
        assert.equal(check.advanced.getMetadataFor(loaded)["@flags"], "HasAttachments");
    } finally {
        store.dispose();
    }
});

test("attachments on a document with revisions: both flags, and the newest revision lists the attachment", async () => {
    const { store } = await freshStore();
    try {
        const configuration = new RevisionsConfiguration();
        configuration.defaultConfig = Object.assign(new RevisionsCollectionConfiguration(), { disabled: false });
        await store.maintenance.send(new ConfigureRevisionsOperation(configuration));

        const bytes = Buffer.from("signed time sheet");
        const session = store.openSession();
        await session.store(new User("Ada", 36), "users/ada");
        session.advanced.attachments.store("users/ada", "sheet.pdf", bytes, "application/pdf");
        await session.saveChanges();

        const reader = store.openSession();
        const ada = await reader.load("users/ada");
        const flags = reader.advanced.getMetadataFor(ada)["@flags"].split(",").map(f => f.trim()).sort();
        assert.deepEqual(flags, ["HasAttachments", "HasRevisions"]);
        const [attachment] = reader.advanced.attachments.getNames(ada);
        assert.equal(attachment.name, "sheet.pdf");

        // With revisions on, the newest revision is the document as it is now, attachments and all.
        const [newest] = await reader.advanced.revisions.getMetadataFor("users/ada", { pageSize: 1 });
        assert.equal(newest["@change-vector"], reader.advanced.getChangeVectorFor(ada));
        assert.deepEqual(newest["@flags"].split(",").map(f => f.trim()).sort(), ["HasAttachments", "HasRevisions", "Revision"]);
        assert.match(JSON.stringify(newest["@attachments"]), /sheet\.pdf/);
        assert.match(JSON.stringify(newest["@attachments"]), new RegExp(attachment.hash.replace(/[+/]/g, "\\$&")));
    } finally {
        store.dispose();
    }
});
