using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>
/// Documents a map may <c>load(id)</c>, and the attachments of documents (<c>attachmentsFor</c>,
/// <c>loadAttachment</c>): the same snapshot the batch reads.
/// </summary>
public interface IMapDocumentLoader
{
    /// <summary>The document with <paramref name="id"/>, or null when it does not exist.</summary>
    MapInput? Load(string id);

    /// <summary>The attachments of a document, in name order; empty when it has none (or does not exist).</summary>
    IReadOnlyList<AttachmentInfo> GetAttachments(string documentId) => [];

    /// <summary>
    /// The content of attachment <paramref name="name"/> (any casing) of a document, readable until
    /// the batch's snapshot ends; null when there is no such attachment.
    /// </summary>
    Stream? OpenAttachment(string documentId, string name) => null;
}
