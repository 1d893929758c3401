using System.Buffers;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Storage.Blittable;
using Jint.Native;
using Jint.Native.Object;

namespace Jackdaw.Server.Patching;

/// <summary>
/// One document's patch as RavenDB's <c>PatchDocumentCommand</c> runs it: <see cref="Patch"/> on
/// the stored document; on a missing one, <see cref="Patch"/> on <see cref="CreateIfMissing"/>
/// when given, else <see cref="PatchIfMissing"/> on a new empty document, else nothing
/// (<c>DocumentDoesNotExist</c>). A document the script left equal to the stored one is not
/// written (<c>NotModified</c>).
/// </summary>
public sealed class DocumentPatch(PatchScript patch, PatchScript? patchIfMissing = null, string? createIfMissing = null) : IDocumentPatch
{
    public PatchScript Patch => patch;

    public PatchScript? PatchIfMissing => patchIfMissing;

    /// <summary>RavenDB's <c>CreateIfMissing</c>: the JSON object a missing document starts as.</summary>
    public string? CreateIfMissing => createIfMissing;

    /// <summary>RavenDB's <c>skipPatchIfChangeVectorMismatch</c>: a document at another version is <c>Skipped</c>, not a conflict.</summary>
    public bool SkipIfChangeVectorMismatch { get; init; }

    /// <summary>Whether the outcome carries the document before the patch and the script's <c>Debug</c> object.</summary>
    public bool Debug { get; init; }

    public PatchOutcome Apply(DocumentsTransaction transaction, string id, string? expectedChangeVector, JsonOperationContext context, bool returnDocument)
    {
        var engine = PatchEngine.Rent();
        try
        {
            return Apply(engine, transaction, id, expectedChangeVector, context, returnDocument);
        }
        finally
        {
            PatchEngine.Return(engine);
        }
    }

    /// <summary>The same with an engine the caller holds (a by-query batch runs every document of the batch in one).</summary>
    internal PatchOutcome Apply(PatchEngine engine, DocumentsTransaction transaction, string id, string? expectedChangeVector, JsonOperationContext context, bool returnDocument)
    {
        var debug = Debug ? new PatchDebug() : null;
        engine.Begin(transaction, context, debug);
        try
        {
            return Run(engine, transaction, id, expectedChangeVector, context, returnDocument, debug);
        }
        finally
        {
            engine.End();
        }
    }

    private PatchOutcome Run(PatchEngine engine, DocumentsTransaction transaction, string id, string? expectedChangeVector, JsonOperationContext context, bool returnDocument, PatchDebug? debug)
    {
        ObjectInstance document;
        PatchScript script;
        byte[]? original = null;
        string? storedCollection = null;
        if (transaction.TryGet(id, out var record))
        {
            var current = record.ChangeVectorOr(transaction.DatabaseId);
            if (expectedChangeVector is { Length: > 0 } expected && !ChangeVectors.Matches(expected, current))
            {
                if (SkipIfChangeVectorMismatch)
                {
                    return new PatchOutcome("Skipped", null, null);
                }
                throw new Errors.ConcurrencyException(id, $"Optimistic concurrency violation on document '{id}': expected change vector {expected}, but it is {current}.");
            }
            // Copied out: spans into the tree die with the script's first put or del.
            id = record.Id;
            original = record.Document.ToArray();
            storedCollection = record.CollectionUtf8.IsEmpty ? null : System.Text.Encoding.UTF8.GetString(record.CollectionUtf8);
            document = engine.FromDocument(original);
            script = patch;
        }
        else
        {
            if (expectedChangeVector is { Length: > 0 } missing && !SkipIfChangeVectorMismatch)
            {
                throw new Errors.ConcurrencyException(id, $"Optimistic concurrency violation on document '{id}': expected change vector {missing}, but the document does not exist.");
            }
            if (createIfMissing is not null)
            {
                document = engine.FromJson(createIfMissing);
                script = patch;
            }
            else if (patchIfMissing is not null)
            {
                document = new JsObject(engine.Engine);
                script = patchIfMissing;
            }
            else
            {
                return new PatchOutcome("DocumentDoesNotExist", null, null);
            }
            // id(this) of a new document is its id, as the client named it.
            if (document.Get("@metadata") is not ObjectInstance metadata)
            {
                metadata = new JsObject(engine.Engine);
                document.FastSetDataProperty("@metadata", metadata);
            }
            metadata.Set("@id", new JsString(id));
        }

        engine.Run(script, id, document);
        var patched = engine.ToBlittable(document, id);
        var originalJson = Debug && original is not null ? Json(original) : null;
        if (original is not null && BlittableComparer.Equals(original, patched.Span))
        {
            return new PatchOutcome("NotModified", null, returnDocument ? originalJson ?? Json(original) : null, originalJson, debug?.ToJson());
        }

        var put = transaction.Put(id, patched.Span, PatchJson.CollectionOf(document) ?? storedCollection, null, context);
        string? modified = null;
        if (returnDocument && transaction.TryGet(put.Id, out var stored))
        {
            modified = Json(stored.Document);
        }
        return new PatchOutcome(original is null ? "Created" : "Patched", put, modified, originalJson, debug?.ToJson());
    }

    internal static string Json(ReadOnlySpan<byte> blittable)
    {
        var buffer = new ArrayBufferWriter<byte>(blittable.Length * 2);
        BlittableJsonWriter.WriteTo(blittable, buffer);
        return System.Text.Encoding.UTF8.GetString(buffer.WrittenSpan);
    }
}
