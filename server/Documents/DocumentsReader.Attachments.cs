using System.Buffers.Binary;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>Counts of the attachment trees: entries, distinct contents, chunks, and streams staged or waiting to be deleted.</summary>
public readonly record struct AttachmentStorageStats(long Attachments, long Contents, long Chunks, long StagedStreams);

/// <summary>A stored content: its stream, size and how many references it has (documents' attachment entries, and one per revision per attachment it lists).</summary>
public readonly record struct AttachmentContentInfo(long StreamId, long Size, long References);

/// <summary>Attachments as a snapshot sees them (layouts in <see cref="DocumentsStorage"/>).</summary>
public partial class DocumentsReader
{
    /// <summary>The attachments of a document (any casing of its id), in name order; empty when it has none or does not exist.</summary>
    public List<AttachmentInfo> GetAttachments(string documentId)
    {
        var result = new List<AttachmentInfo>();
        if (_transaction.OpenTree(DocumentsStorage.AttachmentsTree) is not { Count: > 0 } tree || DocumentKeyOf(documentId) is not { } documentKey)
        {
            return result;
        }
        var prefix = AttachmentEntry.Prefix(documentKey);
        using var iterator = tree.Iterate();
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

    /// <summary>One attachment of a document (name in any casing); null when there is none.</summary>
    public AttachmentInfo? GetAttachment(string documentId, string name)
    {
        if (_transaction.OpenTree(DocumentsStorage.AttachmentsTree) is not { Count: > 0 } tree || DocumentKeyOf(documentId) is not { } documentKey)
        {
            return null;
        }
        var key = AttachmentEntry.Key(documentKey, name);
        return key is not null && tree.TryGet(key, out var value) ? new AttachmentEntry(value).ToInfo() : null;
    }

    /// <summary>
    /// The content of attachment <paramref name="name"/> of a document as a read-only seekable
    /// stream over its chunks, valid while this reader lives; null when there is no such attachment.
    /// </summary>
    public AttachmentStream? OpenAttachment(string documentId, string name) =>
        GetAttachment(documentId, name) is { } info ? OpenAttachmentContent(info.Hash) : null;

    /// <summary>
    /// Attachment <paramref name="name"/> (any casing) as the revision of <paramref name="changeVector"/>
    /// (unquoted) of document <paramref name="documentId"/> lists it (RavenDB's attachment of type
    /// <c>Revision</c>), its <see cref="AttachmentInfo.Size"/> the stored content's; null when that is
    /// no revision of the document, the revision lists no such attachment, or its content is not
    /// stored (a revision that holds no references: see <see cref="RevisionRecord.HoldsAttachmentReferences"/>).
    /// Read its bytes with <see cref="OpenAttachmentContent"/>.
    /// </summary>
    public AttachmentInfo? GetRevisionAttachment(string documentId, string name, string changeVector)
    {
        if (GetRevisionKey(changeVector) is not { } key || !TryRange(documentId, out var range) || !key.AsSpan().StartsWith(range)
            || !TryGetRevisionByKey(key, out var revision))
        {
            return null;
        }
        var lowerName = name.ToLowerInvariant();
        foreach (var attachment in AttachmentsMetadata.Read(revision.Document))
        {
            if (attachment.Name.ToLowerInvariant() == lowerName)
            {
                return GetAttachmentContent(attachment.Hash) is { } content ? attachment with { Size = content.Size } : null;
            }
        }
        return null;
    }

    /// <summary>A stored content by the base64 of its SHA-256 (an <see cref="AttachmentInfo.Hash"/>); null when none is stored.</summary>
    public AttachmentStream? OpenAttachmentContent(string base64Hash) =>
        GetAttachmentContent(base64Hash) is { } content
            ? new AttachmentStream(_transaction.OpenTree(DocumentsStorage.AttachmentChunksTree), content.StreamId, content.Size)
            : null;

    /// <summary>A stored content by the base64 of its SHA-256; null when none is stored.</summary>
    public AttachmentContentInfo? GetAttachmentContent(string base64Hash)
    {
        Span<byte> hash = stackalloc byte[AttachmentEntry.HashSize];
        if (!Convert.TryFromBase64String(base64Hash, hash, out var written) || written != AttachmentEntry.HashSize)
        {
            return null;
        }
        if (_transaction.OpenTree(DocumentsStorage.AttachmentContentsTree) is not { } contents || !contents.TryGet(hash, out var value))
        {
            return null;
        }
        return new AttachmentContentInfo(BinaryPrimitives.ReadInt64LittleEndian(value), BinaryPrimitives.ReadInt64LittleEndian(value[8..]), BinaryPrimitives.ReadInt64LittleEndian(value[16..]));
    }

    /// <summary>How many entries the attachment trees hold.</summary>
    public AttachmentStorageStats GetAttachmentStorageStats() => new(
        TreeCount(DocumentsStorage.AttachmentsTree),
        TreeCount(DocumentsStorage.AttachmentContentsTree),
        TreeCount(DocumentsStorage.AttachmentChunksTree),
        TreeCount(DocumentsStorage.AttachmentStagingTree));

    private long TreeCount(string tree) => _transaction.OpenTree(tree)?.Count ?? 0;

    private static byte[]? DocumentKeyOf(string documentId)
    {
        var buffer = new byte[DocumentIds.MaxKeyBytes];
        var length = DocumentIds.GetKey(documentId, buffer);
        return length < 0 ? null : buffer[..length];
    }
}
