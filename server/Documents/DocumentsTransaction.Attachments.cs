using System.Buffers;
using System.Buffers.Binary;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Attachments: entries per document (<c>Attachments</c>), contents by SHA-256 with a reference
/// count (<c>AttachmentContents</c>), each content a stream of chunks (<c>AttachmentChunks</c>),
/// and streams written before the transaction that links them or waiting to be deleted
/// (<c>AttachmentStaging</c>). See <see cref="DocumentsStorage"/> for the layouts.
/// </summary>
/// <remarks>
/// Every change of a document's attachments stores the document again in the same transaction
/// (new etag and change vector), its <c>@metadata.@attachments</c> rewritten from the tree; any put
/// of a document rewrites that list and <c>@flags</c>, so a client's body never decides them.
/// A content is referenced by each attachment entry and by each revision that lists it (one per
/// revision per attachment: <see cref="HoldRevisionAttachments"/>), so a revert can bring back the
/// attachments of a deleted document. A content whose count falls to 0 loses its
/// <c>AttachmentContents</c> entry and its stream becomes an orphan in the same transaction; the database's clean-up deletes orphans' chunks later, a few
/// thousand per transaction.
/// </remarks>
public partial class DocumentsTransaction
{
    private Tree? _attachments;
    private Tree? _attachmentContents;
    private Tree? _attachmentChunks;
    private Tree? _attachmentStaging;

    private Tree AttachmentsTree => _attachments ??= _transaction.CreateTree(DocumentsStorage.AttachmentsTree);

    private Tree AttachmentContents => _attachmentContents ??= _transaction.CreateTree(DocumentsStorage.AttachmentContentsTree);

    private Tree AttachmentChunks => _attachmentChunks ??= _transaction.CreateTree(DocumentsStorage.AttachmentChunksTree);

    private Tree AttachmentStaging => _attachmentStaging ??= _transaction.CreateTree(DocumentsStorage.AttachmentStagingTree);

    /// <summary>
    /// Whether this transaction made attachment streams orphans (a content no longer referenced, a
    /// staged upload abandoned or linked to a content already stored): once it is durable, the
    /// database's clean-up deletes their chunks.
    /// </summary>
    public bool OrphanedAttachmentStreams { get; private set; }

    /// <summary>The most bytes of chunks one <see cref="WriteAttachmentChunks"/> call should write (a staging step).</summary>
    public const int StagingStepBytes = 16 * AttachmentStreams.ChunkSize;

    /// <summary>Starts a staged stream: a new stream id with a staging entry in state "being written".</summary>
    public long BeginAttachmentStream()
    {
        var id = NextStreamId();
        Span<byte> key = stackalloc byte[AttachmentStreams.StreamKeySize];
        AttachmentStreams.WriteStreamKey(key, id);
        AttachmentStaging.Put(key, [AttachmentStreams.Writing]);
        MarkWritten();
        return id;
    }

    /// <summary>
    /// Writes <paramref name="data"/> as the chunks of stream <paramref name="streamId"/> from chunk
    /// <paramref name="firstChunk"/> on; every chunk but the stream's last is exactly
    /// <c>ChunkSize</c> bytes, so only the last call of a stream may end with a shorter one.
    /// </summary>
    public void WriteAttachmentChunks(long streamId, int firstChunk, ReadOnlySpan<byte> data)
    {
        Span<byte> key = stackalloc byte[AttachmentStreams.ChunkKeySize];
        var chunk = firstChunk;
        while (!data.IsEmpty)
        {
            var length = Math.Min(data.Length, AttachmentStreams.ChunkSize);
            AttachmentStreams.WriteChunkKey(key, streamId, chunk++);
            AttachmentChunks.Put(key, data[..length]);
            data = data[length..];
        }
        MarkWritten();
    }

    /// <summary>
    /// Gives up a staged stream (an upload that failed or was cut off): it becomes an orphan, deleted
    /// by the clean-up. Nothing happens when it was linked or given up already.
    /// </summary>
    public void AbandonAttachmentStream(long streamId)
    {
        Span<byte> key = stackalloc byte[AttachmentStreams.StreamKeySize];
        AttachmentStreams.WriteStreamKey(key, streamId);
        if (AttachmentStaging.TryGet(key, out var state) && state[0] == AttachmentStreams.Writing)
        {
            OrphanStream(streamId);
        }
    }

    /// <summary>
    /// Deletes the chunks of orphan streams, at most <paramref name="maxChunks"/> of them, and the
    /// staging entry of each stream whose chunks are all gone. Returns whether orphans remain.
    /// </summary>
    public bool RemoveAttachmentOrphans(int maxChunks, out int removedChunks)
    {
        removedChunks = 0;
        var orphans = new List<long>();
        using (var iterator = AttachmentStaging.Iterate())
        {
            if (iterator.SeekFirst())
            {
                do
                {
                    if (iterator.Value[0] == AttachmentStreams.Orphan)
                    {
                        orphans.Add(BinaryPrimitives.ReadInt64BigEndian(iterator.Key));
                    }
                }
                while (iterator.MoveNext());
            }
        }

        Span<byte> streamKey = stackalloc byte[AttachmentStreams.StreamKeySize];
        var chunkKeys = new List<byte[]>();
        var remaining = false;
        foreach (var streamId in orphans)
        {
            chunkKeys.Clear();
            AttachmentStreams.WriteStreamKey(streamKey, streamId);
            var more = false;
            using (var iterator = AttachmentChunks.Iterate())
            {
                if (iterator.SeekPrefix(streamKey))
                {
                    do
                    {
                        if (removedChunks + chunkKeys.Count >= maxChunks)
                        {
                            more = true;
                            break;
                        }
                        chunkKeys.Add(iterator.Key.ToArray());
                    }
                    while (iterator.MoveNext() && iterator.KeyStartsWith(streamKey));
                }
            }
            foreach (var key in chunkKeys)
            {
                AttachmentChunks.Delete(key);
            }
            removedChunks += chunkKeys.Count;
            if (more)
            {
                remaining = true;
                break;
            }
            AttachmentStaging.Delete(streamKey);
            MarkWritten();
        }
        if (removedChunks > 0)
        {
            MarkWritten();
        }
        return remaining;
    }

    /// <summary>
    /// Stores attachment <paramref name="name"/> of document <paramref name="documentId"/> (replacing
    /// one of the same name, any casing), linking <paramref name="source"/>'s content: a content
    /// already stored (same SHA-256) gets one more reference and a staged duplicate becomes an orphan.
    /// The document is stored again with its list of attachments.
    /// </summary>
    /// <param name="contentType">The content type; null is stored as "".</param>
    /// <param name="expectedChangeVector">When not null, the attachment's change vector (RavenDB's rule); <c>""</c>: it must not exist.</param>
    /// <exception cref="DocumentDoesNotExistException">There is no such document.</exception>
    /// <exception cref="BadRequestException">The name is empty, has a control character or is too long.</exception>
    /// <exception cref="ConcurrencyException">The expected change vector does not match.</exception>
    public AttachmentPutResult PutAttachment(string documentId, string name, string? contentType, AttachmentSource source, string? expectedChangeVector, JsonOperationContext context)
    {
        ArgumentNullException.ThrowIfNull(source);
        AttachmentNames.ThrowIfInvalid(name);
        contentType ??= string.Empty;
        var document = LoadForAttachments(documentId, $"Cannot put attachment '{name}' on document '{documentId}': the document does not exist.");
        var key = EntryKey(document.Key, name);
        var existing = ReadEntry(key);
        CheckAttachmentChangeVector(document.Id, name, expectedChangeVector, existing?.Etag);

        AcquireContent(source);
        if (existing is { } old)
        {
            ReleaseContent(old.Hash);
        }
        var etag = LastEtag + 1;
        AttachmentsTree.Put(key, AttachmentEntry.Create(source.Hash, source.Size, etag, name, contentType));
        var stored = StoreAgain(document, context, name, DocumentChangeKind.Put);
        return new AttachmentPutResult(stored.Id, name, contentType, Convert.ToBase64String(source.Hash), source.Size, ChangeVectors.Format(_nodeTag, etag, _databaseId), stored.ChangeVector);
    }

    /// <summary>
    /// Deletes attachment <paramref name="name"/> of a document; false when there was none (or no
    /// such document). The document is stored again without it; its content loses a reference.
    /// </summary>
    /// <param name="expectedChangeVector">When not null, the attachment's change vector.</param>
    public bool DeleteAttachment(string documentId, string name, string? expectedChangeVector, JsonOperationContext context)
    {
        AttachmentNames.ThrowIfInvalid(name);
        if (!TryLoadForAttachments(documentId, out var document))
        {
            CheckAttachmentChangeVector(documentId, name, expectedChangeVector, actualEtag: null);
            return false;
        }
        var key = EntryKey(document.Key, name);
        var existing = ReadEntry(key);
        CheckAttachmentChangeVector(document.Id, name, expectedChangeVector, existing?.Etag);
        if (existing is not { } old)
        {
            return false;
        }
        AttachmentsTree.Delete(key);
        ReleaseContent(old.Hash);
        StoreAgain(document, context, old.Name, DocumentChangeKind.Delete);
        return true;
    }

    /// <summary>
    /// Moves attachment <paramref name="name"/> of <paramref name="sourceId"/> to
    /// <paramref name="destinationName"/> of <paramref name="destinationId"/> (replacing one there);
    /// both documents are stored again. The content keeps its references.
    /// </summary>
    /// <exception cref="AttachmentDoesNotExistException">The source document has no such attachment.</exception>
    public AttachmentPutResult MoveAttachment(string sourceId, string name, string destinationId, string destinationName, string? expectedChangeVector, JsonOperationContext context) =>
        Relink(sourceId, name, destinationId, destinationName, expectedChangeVector, context, move: true);

    /// <summary>Copies attachment <paramref name="name"/> of <paramref name="sourceId"/> to <paramref name="destinationName"/> of <paramref name="destinationId"/>: one more reference to the same content.</summary>
    /// <exception cref="AttachmentDoesNotExistException">The source document has no such attachment.</exception>
    public AttachmentPutResult CopyAttachment(string sourceId, string name, string destinationId, string destinationName, string? expectedChangeVector, JsonOperationContext context) =>
        Relink(sourceId, name, destinationId, destinationName, expectedChangeVector, context, move: false);

    /// <summary>The attachments of a document as this transaction sees them, in name order.</summary>
    public List<AttachmentInfo> GetAttachments(string documentId)
    {
        var result = new List<AttachmentInfo>();
        var documentKey = DocumentIds.GetKey(documentId);
        var prefix = AttachmentEntry.Prefix(documentKey);
        using var iterator = AttachmentsTree.Iterate();
        if (!iterator.SeekPrefix(prefix))
        {
            return result;
        }
        do
        {
            result.Add(new AttachmentEntry(iterator.Value).ToInfo());
        }
        while (iterator.MoveNext() && iterator.KeyStartsWith(prefix));
        return result;
    }

    private AttachmentPutResult Relink(string sourceId, string name, string destinationId, string destinationName, string? expectedChangeVector, JsonOperationContext context, bool move)
    {
        AttachmentNames.ThrowIfInvalid(name);
        AttachmentNames.ThrowIfInvalid(destinationName);
        var verb = move ? "move" : "copy";
        var source = LoadForAttachments(sourceId, $"Cannot {verb} attachment '{name}' of document '{sourceId}': the document does not exist.");
        var sourceKey = EntryKey(source.Key, name);
        var entry = ReadEntry(sourceKey) ?? throw new AttachmentDoesNotExistException(source.Id, name);
        CheckAttachmentChangeVector(source.Id, name, expectedChangeVector, entry.Etag);
        var sameDocument = source.Key.AsSpan().SequenceEqual(DocumentIds.GetKey(destinationId));
        var destination = sameDocument ? source : LoadForAttachments(destinationId, $"Cannot {verb} attachment '{name}' to document '{destinationId}': the document does not exist.");
        var destinationKey = EntryKey(destination.Key, destinationName);
        var sameKey = sourceKey.AsSpan().SequenceEqual(destinationKey);
        if (sameKey && !move)
        {
            return new AttachmentPutResult(destination.Id, entry.Name, entry.ContentType, Convert.ToBase64String(entry.Hash), entry.Size, ChangeVectors.Format(_nodeTag, entry.Etag, _databaseId), CurrentChangeVectorOf(destination.Key));
        }

        // One more reference first, then release what the destination held: a copy over an
        // attachment of the same content never drops the count to 0 on the way.
        IncrementContent(entry.Hash);
        if (!sameKey && ReadEntry(destinationKey) is { } replaced)
        {
            ReleaseContent(replaced.Hash);
        }
        if (move)
        {
            AttachmentsTree.Delete(sourceKey);
            ReleaseContent(entry.Hash);
            if (!sameDocument)
            {
                StoreAgain(source, context, entry.Name, DocumentChangeKind.Delete);
            }
        }
        var etag = LastEtag + 1;
        AttachmentsTree.Put(destinationKey, AttachmentEntry.Create(entry.Hash, entry.Size, etag, destinationName, entry.ContentType));
        var stored = StoreAgain(destination, context, destinationName, DocumentChangeKind.Put);
        return new AttachmentPutResult(stored.Id, destinationName, entry.ContentType, Convert.ToBase64String(entry.Hash), entry.Size, ChangeVectors.Format(_nodeTag, etag, _databaseId), stored.ChangeVector);
    }

    /// <summary>
    /// Called by <see cref="Put"/>: writes <c>@metadata.@attachments</c> from the tree when the
    /// document has attachments, removes one a body sent otherwise, and returns the flag to stamp.
    /// </summary>
    private DocumentFlags StampAttachments(ReadOnlySpan<byte> documentKey, bool existed, ReadOnlySpan<byte> document, BlittablePatch metadata)
    {
        // A new document has no attachments: a delete removed them with its previous version (a
        // revert of a deleted document restores its revision's first: RestoreAttachmentsOf).
        if ((existed || _restoringRevision || _replicatedPut) && AttachmentsTree.Count > 0 && AttachmentsJson(documentKey) is { } json)
        {
            metadata.SetRawJson("@attachments", json);
            return DocumentFlags.HasAttachments;
        }
        if (DocumentFlagsMetadata.BodyHasMetadataProperty(document, "@attachments"u8))
        {
            metadata.Remove("@attachments");
        }
        return DocumentFlags.None;
    }

    /// <summary>Called by <see cref="Delete"/>: removes a deleted document's attachments and releases their contents.</summary>
    private void RemoveAttachmentsOf(ReadOnlySpan<byte> documentKey)
    {
        if (AttachmentsTree.Count == 0)
        {
            return;
        }
        var prefix = AttachmentEntry.Prefix(documentKey);
        var entries = new List<(byte[] Key, byte[] Hash)>();
        using (var iterator = AttachmentsTree.Iterate())
        {
            if (iterator.SeekPrefix(prefix))
            {
                do
                {
                    entries.Add((iterator.Key.ToArray(), new AttachmentEntry(iterator.Value).Hash.ToArray()));
                }
                while (iterator.MoveNext() && iterator.KeyStartsWith(prefix));
            }
        }
        foreach (var (key, hash) in entries)
        {
            AttachmentsTree.Delete(key);
            ReleaseContent(hash);
        }
    }

    /// <summary>
    /// Called when a revision is stored: one more reference on the content of each attachment its
    /// document lists, so the contents outlive the document's own entries (replaced, deleted with
    /// the document) for as long as the revision exists; one per revision per attachment, as a
    /// document's entries count. All or nothing: when a listed content is not stored (an imported
    /// revision whose attachments were not imported) the revision holds none. Returns whether it holds them.
    /// </summary>
    private bool HoldRevisionAttachments(ReadOnlySpan<byte> document)
    {
        var listed = AttachmentsMetadata.Read(document);
        if (listed.Count == 0)
        {
            return false;
        }
        var hashes = new List<byte[]>(listed.Count);
        foreach (var attachment in listed)
        {
            var hash = Convert.FromBase64String(attachment.Hash);
            if (!AttachmentContents.TryGet(hash, out _))
            {
                return false;
            }
            hashes.Add(hash);
        }
        foreach (var hash in hashes)
        {
            IncrementContent(hash);
        }
        return true;
    }

    /// <summary>The contents a removed revision held (<see cref="HoldRevisionAttachments"/>), each listed once per reference, added to <paramref name="hashes"/>.</summary>
    private static void AddRevisionAttachmentHashes(ReadOnlySpan<byte> document, List<byte[]> hashes)
    {
        foreach (var attachment in AttachmentsMetadata.Read(document))
        {
            hashes.Add(Convert.FromBase64String(attachment.Hash));
        }
    }

    /// <summary>Releases one reference per hash (a content at 0 becomes an orphan).</summary>
    private void ReleaseContents(List<byte[]> hashes)
    {
        foreach (var hash in hashes)
        {
            ReleaseContent(hash);
        }
    }

    /// <summary>
    /// Called by a revert before it puts a revision's version back: the document's attachments
    /// become the ones the revision lists (RavenDB's revert). Each listed content that is stored
    /// gets a reference for its new entry before the document's current entries release theirs, so a
    /// content both hold never drops to 0 on the way; a listed content that is not stored (a
    /// revision that holds no references) is left out. The entries take the etag the put takes next.
    /// </summary>
    private void RestoreAttachmentsOf(byte[] documentKey, ReadOnlySpan<byte> document)
    {
        var restored = new List<(byte[] Key, byte[] Hash, long Size, AttachmentInfo Listed)>();
        foreach (var attachment in AttachmentsMetadata.Read(document))
        {
            var hash = Convert.FromBase64String(attachment.Hash);
            if (AttachmentEntry.Key(documentKey, attachment.Name) is not { } key || !AttachmentContents.TryGet(hash, out var content))
            {
                continue;
            }
            var size = BinaryPrimitives.ReadInt64LittleEndian(content[8..]);
            IncrementContent(hash);
            restored.Add((key, hash, size, attachment));
        }
        RemoveAttachmentsOf(documentKey);
        var etag = LastEtag + 1;
        foreach (var (key, hash, size, listed) in restored)
        {
            AttachmentsTree.Put(key, AttachmentEntry.Create(hash, size, etag, listed.Name, listed.ContentType));
        }
    }

    /// <summary><c>[{"Name":…,"Hash":…,"ContentType":…,"Size":…},…]</c> in name order; null when the document has none.</summary>
    private byte[]? AttachmentsJson(ReadOnlySpan<byte> documentKey)
    {
        var prefix = AttachmentEntry.Prefix(documentKey);
        using var iterator = AttachmentsTree.Iterate();
        if (!iterator.SeekPrefix(prefix))
        {
            return null;
        }
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartArray();
            do
            {
                var entry = new AttachmentEntry(iterator.Value);
                writer.WriteStartObject();
                writer.WriteString("Name"u8, entry.NameUtf8);
                writer.WriteBase64String("Hash"u8, entry.Hash);
                writer.WriteString("ContentType"u8, entry.ContentTypeUtf8);
                writer.WriteNumber("Size"u8, entry.Size);
                writer.WriteEndObject();
            }
            while (iterator.MoveNext() && iterator.KeyStartsWith(prefix));
            writer.WriteEndArray();
        }
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>A document an attachment change stores again: copied out of the tree, since spans die with the next write.</summary>
    private sealed record LoadedDocument(byte[] Key, string Id, string? Collection, byte[] Body);

    private LoadedDocument LoadForAttachments(string documentId, string missing) =>
        TryLoadForAttachments(documentId, out var document) ? document : throw new DocumentDoesNotExistException(documentId, missing);

    private bool TryLoadForAttachments(string documentId, out LoadedDocument document)
    {
        var key = DocumentIds.GetKey(documentId);
        if (!_docs.TryGet(key, out var value))
        {
            document = null!;
            return false;
        }
        var record = new DocumentRecord(value);
        document = new LoadedDocument(key, record.Id, record.CollectionUtf8.IsEmpty ? null : Encoding.UTF8.GetString(record.CollectionUtf8), record.Document.ToArray());
        return true;
    }

    private string CurrentChangeVectorOf(byte[] documentKey) => _docs.TryGet(documentKey, out var value) ? new DocumentRecord(value).ChangeVectorOr(_databaseId) : "";

    /// <summary>
    /// Stores the document again (its attachments list rewritten by <see cref="Put"/>), and marks the
    /// change as the attachment's, for the changes feed.
    /// </summary>
    private PutResult StoreAgain(LoadedDocument document, JsonOperationContext context, string attachmentName, DocumentChangeKind attachmentKind)
    {
        var result = Put(document.Id, document.Body, document.Collection, expectedChangeVector: null, context);
        _changes[^1] = _changes[^1] with { AttachmentName = attachmentName, AttachmentKind = attachmentKind };
        return result;
    }

    private static byte[] EntryKey(byte[] documentKey, string name) =>
        AttachmentEntry.Key(documentKey, name)
        ?? throw new BadRequestException($"The attachment name '{name}' is too long: with the document id it must fit {Tree.MaxKeySize} bytes of UTF-8.");

    /// <summary>An attachment entry copied out of the tree.</summary>
    private readonly record struct StoredEntry(byte[] Hash, long Size, long Etag, string Name, string ContentType);

    private StoredEntry? ReadEntry(byte[] key)
    {
        if (!AttachmentsTree.TryGet(key, out var value))
        {
            return null;
        }
        var entry = new AttachmentEntry(value);
        return new StoredEntry(entry.Hash.ToArray(), entry.Size, entry.Etag, Encoding.UTF8.GetString(entry.NameUtf8), Encoding.UTF8.GetString(entry.ContentTypeUtf8));
    }

    private void CheckAttachmentChangeVector(string documentId, string name, string? expected, long? actualEtag)
    {
        if (expected is null)
        {
            return;
        }
        if (MustNotExist(expected))
        {
            if (actualEtag is { } etag)
            {
                throw new ConcurrencyException(documentId, $"Optimistic concurrency violation on attachment '{name}' of document '{documentId}': it was expected not to exist, but its change vector is {ChangeVectors.Format(_nodeTag, etag, _databaseId)}.");
            }
            return;
        }
        if (actualEtag is not { } actual)
        {
            throw new ConcurrencyException(documentId, $"Optimistic concurrency violation on attachment '{name}' of document '{documentId}': expected change vector {expected}, but the attachment does not exist.");
        }
        var current = ChangeVectors.Format(_nodeTag, actual, _databaseId);
        if (!ChangeVectors.Matches(expected, current))
        {
            throw new ConcurrencyException(documentId, $"Optimistic concurrency violation on attachment '{name}' of document '{documentId}': expected change vector {expected}, but it is {current}.");
        }
    }
}
