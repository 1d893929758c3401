using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>One revision of a dump: the document as RavenDB shows a revision, and what its <c>@metadata</c> says of it.</summary>
internal sealed record ImportedRevision(string Id, string? Collection, string ChangeVector, DateTime LastModified, DocumentFlags Flags, byte[] Document);

/// <summary>
/// A batch of a dump's revisions in one transaction (<see cref="DocumentsTransaction.PutRevision"/>):
/// each is stored as it was (change vector, time, flags); one whose change vector is stored already
/// is left alone, so importing a dump twice stores each revision once. A dump's documents come
/// before its revisions, so a document stored without revisions is stored again once it has some,
/// for its <c>@flags</c> to say <c>HasRevisions</c> (one more etag, as any change of the flags).
/// </summary>
internal sealed class ImportRevisionsCommand(IReadOnlyList<ImportedRevision> revisions, Jackdaw.Storage.Blittable.JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    /// <summary>How many were stored (the others were there already).</summary>
    public int Stored { get; private set; }

    public long EstimatedBytes { get; } = revisions.Sum(r => (long)r.Document.Length);

    public void Execute(DocumentsTransaction transaction)
    {
        Stored = 0;
        var touched = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var revision in revisions)
        {
            if (transaction.PutRevision(revision.Id, revision.Collection, revision.ChangeVector, revision.LastModified, revision.Flags, revision.Document))
            {
                Stored++;
                touched.Add(revision.Id);
            }
        }
        foreach (var id in touched)
        {
            if (!transaction.TryGet(id, out var record) || SaysHasRevisions(record.Document))
            {
                continue;
            }
            var body = record.Document.ToArray();
            var collection = record.CollectionUtf8.IsEmpty ? null : System.Text.Encoding.UTF8.GetString(record.CollectionUtf8);
            transaction.Put(record.Id, body, collection, expectedChangeVector: null, context);
        }
    }

    private static bool SaysHasRevisions(ReadOnlySpan<byte> document)
    {
        var root = Jackdaw.Storage.Blittable.BlittableReader.Open(document);
        return root.TryGet("@metadata"u8, out var metadata) && metadata.Type == Jackdaw.Storage.Blittable.BlittableToken.Object
               && metadata.GetObject().TryGet("@flags"u8, out var flags) && flags.Type == Jackdaw.Storage.Blittable.BlittableToken.String
               && flags.GetString()!.Contains(nameof(DocumentFlags.HasRevisions), StringComparison.Ordinal);
    }
}
