using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>Loads other documents for a map's <c>load(id)</c>, and attachments, from the batch's snapshot.</summary>
internal sealed class SnapshotLoader(DocumentsReader reader) : IMapDocumentLoader
{
    public MapInput? Load(string id)
    {
        if (!reader.TryGet(id, out var record))
        {
            return null;
        }
        return new MapInput(record.Id, System.Text.Encoding.UTF8.GetString(record.CollectionUtf8), record.Document.ToArray());
    }

    public IReadOnlyList<AttachmentInfo> GetAttachments(string documentId) => reader.GetAttachments(documentId);

    public Stream? OpenAttachment(string documentId, string name) => reader.OpenAttachment(documentId, name);
}
