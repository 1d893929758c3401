using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents.Commands;

/// <summary>One command of a batch: a PUT (with <see cref="Put"/>), a PATCH (with <see cref="Patch"/>), an attachment's (with <see cref="Attachment"/>), a ForceRevisionCreation or a DELETE.</summary>
public sealed record BatchOperation(string Id, DocumentToPut? Put, string? ExpectedChangeVector, IDocumentPatch? Patch = null, bool ReturnDocument = false, BatchAttachment? Attachment = null)
{
    /// <summary>RavenDB's <c>ForceRevisionCreation</c>: store the document's current version as a revision.</summary>
    public bool ForceRevision { get; init; }

    /// <summary>A PUT's <c>"ForceRevisionCreationStrategy":"Before"</c>: the stored version becomes a revision, then the PUT runs.</summary>
    public bool ForceRevisionBefore { get; init; }

    public bool IsDelete => Put is null && Patch is null && Attachment is null && !ForceRevision;
}

/// <summary>
/// What a PATCH did: RavenDB's <c>PatchStatus</c> (Patched, NotModified, DocumentDoesNotExist,
/// Created, Skipped), the stored version when it changed, the document when asked for, and for a
/// debug run the document before and the script's <c>Debug</c> object (<c>{"Info":[...],"Actions":{...}}</c>), as JSON.
/// </summary>
public readonly record struct PatchOutcome(string Status, PutResult? Put, string? ModifiedDocument, string? OriginalDocument = null, string? Debug = null);

/// <summary>
/// What one command of a batch did. For an attachment's command: what was stored (<see cref="Attachment"/>,
/// none for a delete), and the change vectors its documents have once the whole batch ran (RavenDB's
/// <c>DocumentChangeVector</c>, and a move's <c>DestinationDocumentChangeVector</c>). For a
/// ForceRevisionCreation: what it made (<see cref="ForcedRevision"/>).
/// </summary>
public readonly record struct BatchOperationResult(PutResult? Put, bool Deleted, PatchOutcome? Patch = null, AttachmentPutResult? Attachment = null, string? DocumentChangeVector = null, string? DestinationDocumentChangeVector = null, ForceRevisionResult? ForcedRevision = null);

/// <summary>
/// <c>POST /databases/*/bulk_docs</c> and each batch of <c>bulk_insert</c>: every operation in the
/// same transaction, all or none. One failing operation (a concurrency conflict, say) throws, which
/// fails this request only; the merger retries the other requests of the transaction without it.
/// </summary>
/// <param name="stream">
/// For the batches of one <c>bulk_insert</c> stream, several of which may be queued at once: once one
/// fails, the later ones fail too instead of committing after the gap.
/// </param>
public sealed class BatchCommand(IReadOnlyList<BatchOperation> operations, JsonOperationContext context, BatchStream? stream = null) : IMergedCommand<DocumentsTransaction>
{
    private readonly BatchOperationResult[] _results = new BatchOperationResult[operations.Count];

    public IReadOnlyList<BatchOperationResult> Results => _results;

    public long EstimatedBytes { get; } = operations.Sum(o => (long)(o.Put?.Document.Length ?? 0));

    /// <summary>When set before it runs, the command records <see cref="LastEtag"/> and <see cref="Collections"/> (for a wait for indexes after it).</summary>
    public bool RecordChanges { get; init; }

    /// <summary>
    /// RavenDB's bulk insert <c>skipOverwriteIfUnchanged</c>: a PUT whose document equals the stored
    /// one (its stamped <c>@id</c>, <c>@change-vector</c> and <c>@last-modified</c> aside) is not
    /// written, so the stored version keeps its change vector and etag and no index or subscription
    /// sees it again. <see cref="Skipped"/> counts them.
    /// </summary>
    public bool SkipUnchanged { get; init; }

    /// <summary>The PUTs <see cref="SkipUnchanged"/> left out.</summary>
    public int Skipped { get; private set; }

    /// <summary>The etag of this batch's last change (with <see cref="RecordChanges"/>).</summary>
    public long LastEtag { get; private set; }

    /// <summary>The collections this batch changed, lowercased, a document's old collection too when it moved (with <see cref="RecordChanges"/>).</summary>
    public HashSet<string> Collections { get; } = new(StringComparer.Ordinal);

    private static readonly string[] StampedMetadata = ["@id", "@change-vector", "@last-modified"];

    /// <summary>Whether the stored document equals <paramref name="put"/>'s, as JSON, the metadata the server stamps aside (a cold path: the option is asked for).</summary>
    private static bool Unchanged(DocumentsTransaction transaction, DocumentToPut put)
    {
        if (put.ExpectedChangeVector is not null || !transaction.TryGet(put.Id, out var record))
        {
            return false;
        }
        var stored = System.Text.Json.Nodes.JsonNode.Parse(Json(record.Document))!.AsObject();
        var incoming = System.Text.Json.Nodes.JsonNode.Parse(Json(put.Document.Span))!.AsObject();
        foreach (var document in new[] { stored, incoming })
        {
            if (document["@metadata"] is System.Text.Json.Nodes.JsonObject metadata)
            {
                foreach (var stamped in StampedMetadata)
                {
                    metadata.Remove(stamped);
                }
            }
        }
        // A put that names no collection keeps the stored one: the same as naming it.
        if (incoming["@metadata"] is not System.Text.Json.Nodes.JsonObject { } incomingMetadata || !incomingMetadata.ContainsKey("@collection"))
        {
            if (stored["@metadata"] is System.Text.Json.Nodes.JsonObject storedMetadata)
            {
                storedMetadata.Remove("@collection");
            }
        }
        if (incoming["@metadata"] is System.Text.Json.Nodes.JsonObject { Count: 0 } && stored["@metadata"] is System.Text.Json.Nodes.JsonObject { Count: 0 })
        {
            incoming.Remove("@metadata");
            stored.Remove("@metadata");
        }
        return System.Text.Json.Nodes.JsonNode.DeepEquals(stored, incoming);
    }

    private static string Json(ReadOnlySpan<byte> blittable)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>(blittable.Length * 2);
        BlittableJsonWriter.WriteTo(blittable, buffer);
        return System.Text.Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    private PutResult Put(DocumentsTransaction transaction, BatchOperation operation, DocumentToPut put)
    {
        if (operation.ForceRevisionBefore)
        {
            transaction.ForceRevisionBeforePut(put.Id);
        }
        return transaction.Put(put.Id, put.Document.Span, put.Collection, put.ExpectedChangeVector, context);
    }

    public void Execute(DocumentsTransaction transaction)
    {
        if (stream is { Failed: true })
        {
            throw new InvalidOperationException("An earlier batch of this stream failed; nothing after it is committed.");
        }
        var changesBefore = transaction.DocumentChanges.Count;
        Skipped = 0;
        try
        {
            for (var i = 0; i < operations.Count; i++)
            {
                var operation = operations[i];
                if (SkipUnchanged && operation.Put is { } candidate && Unchanged(transaction, candidate))
                {
                    Skipped++;
                    continue;
                }
                _results[i] = operation switch
                {
                    { Attachment: { } attachment } => attachment.Execute(transaction, operation.Id, operation.ExpectedChangeVector, context),
                    { Put: { } put } => new BatchOperationResult(Put(transaction, operation, put), false),
                    { Patch: { } patch } => new BatchOperationResult(null, false, patch.Apply(transaction, operation.Id, operation.ExpectedChangeVector, context, operation.ReturnDocument)),
                    { ForceRevision: true } => new BatchOperationResult(null, false, ForcedRevision: transaction.ForceRevisionCreation(operation.Id, operation.ExpectedChangeVector, context)),
                    _ => new BatchOperationResult(null, transaction.Delete(operation.Id, operation.ExpectedChangeVector)),
                };
            }
            BatchAttachment.StampDocumentChangeVectors(transaction, operations, _results);
            if (RecordChanges)
            {
                LastEtag = transaction.LastEtag;
                Collections.Clear();
                var changes = transaction.DocumentChanges;
                for (var i = changesBefore; i < changes.Count; i++)
                {
                    if (changes[i].Collection is { } collection)
                    {
                        Collections.Add(collection.ToLowerInvariant());
                    }
                }
            }
        }
        catch (DocumentDoesNotExistException missing) when (!missing.InBatch)
        {
            // Only an attachment's command or a forced revision throws it (a PATCH reports
            // DocumentDoesNotExist, a DELETE is a no-op): the batch is refused, not a lookup.
            if (stream is not null)
            {
                stream.Failed = true;
            }
            throw missing.ForBatch();
        }
        catch when (stream is not null)
        {
            stream.Failed = true;
            throw;
        }
    }
}

/// <summary>Shared by the batches of one stream; only the merger's thread writes it.</summary>
public sealed class BatchStream
{
    private volatile bool _failed;

    public bool Failed { get => _failed; set => _failed = value; }
}
