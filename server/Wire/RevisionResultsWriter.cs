using System.Buffers;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Writes stored revisions as RavenDB shows them: the version's document with its
/// <c>@metadata</c> set to the revision's <c>@id</c>, <c>@collection</c>, <c>@change-vector</c>,
/// <c>@last-modified</c> and <c>@flags</c> (<c>"HasRevisions, Revision"</c>, or
/// <c>"HasRevisions, DeleteRevision"</c> for a delete, whose body is only its metadata).
/// One writer per request: it reuses its patch and context.
/// </summary>
public sealed class RevisionResultsWriter(JsonOperationContext context)
{
    private readonly BlittablePatch _patch = new();
    private BlittableDocument? _empty;

    /// <summary>Writes one revision; <paramref name="metadataOnly"/> writes <c>{"@metadata":{...}}</c> alone.</summary>
    public void Write(RevisionRecord revision, IBufferWriter<byte> output, bool metadataOnly)
    {
        _patch.Clear();
        var metadata = _patch.Object("@metadata");
        metadata.SetUtf8("@id", revision.IdUtf8);
        if (!revision.CollectionUtf8.IsEmpty)
        {
            metadata.SetUtf8("@collection", revision.CollectionUtf8);
        }
        metadata.SetUtf8("@change-vector", revision.ChangeVectorUtf8);
        Span<byte> lastModified = stackalloc byte[Timestamps.Length + 8];
        metadata.SetUtf8("@last-modified", lastModified[..Timestamps.Format(revision.LastModified, lastModified)]);
        metadata.Set("@flags", RevisionFlagsText.ForRevision(RevisionFlagsText.Read(revision.Document), revision.IsDeleteRevision));
        var document = revision.Document.IsEmpty ? (_empty ??= context.Parse("{}"u8, BlittableMode.Disk)).Span : revision.Document;
        var shown = context.Modify(document, _patch, BlittableMode.Disk);
        DocumentResultsWriter.WriteDocument(shown.Span, output, metadataOnly);
    }
}
