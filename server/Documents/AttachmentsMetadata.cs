using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Reads <c>@metadata.@attachments</c> of a stored body: the list a put writes from the
/// <c>Attachments</c> tree (<c>[{"Name","Hash","ContentType","Size"}]</c>). A revision keeps that
/// list as its version had it, and it is all a revision knows of its attachments: the contents it
/// holds references on, what a revert restores, what a revision's attachment is read by.
/// </summary>
internal static class AttachmentsMetadata
{
    /// <summary>
    /// The attachments a body lists, in its order; empty when it lists none. An entry without a
    /// valid name or a 32-byte base64 hash is left out (an imported body may hold anything), and so
    /// is a second entry of the same name (any casing, compared as the keys are): a document has one attachment per name.
    /// </summary>
    public static List<AttachmentInfo> Read(ReadOnlySpan<byte> document)
    {
        var result = new List<AttachmentInfo>();
        if (document.IsEmpty)
        {
            return result;
        }
        var root = BlittableReader.Open(document);
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object
            || !metadata.GetObject().TryGet("@attachments"u8, out var list) || list.Type != BlittableToken.Array)
        {
            return result;
        }
        Span<byte> hash = stackalloc byte[AttachmentEntry.HashSize];
        foreach (var item in list.GetArray())
        {
            if (item.Type != BlittableToken.Object)
            {
                continue;
            }
            var entry = item.GetObject();
            if (!entry.TryGet("Name"u8, out var nameValue) || nameValue.Type != BlittableToken.String
                || !entry.TryGet("Hash"u8, out var hashValue) || hashValue.Type != BlittableToken.String)
            {
                continue;
            }
            var name = nameValue.GetString();
            var base64 = hashValue.GetString();
            if (AttachmentNames.Validate(name) is not null || base64 is null
                || !Convert.TryFromBase64String(base64, hash, out var written) || written != AttachmentEntry.HashSize
                || result.Exists(a => string.Equals(a.Name.ToLowerInvariant(), name!.ToLowerInvariant(), StringComparison.Ordinal)))
            {
                continue;
            }
            var contentType = entry.TryGet("ContentType"u8, out var contentTypeValue) && contentTypeValue.Type == BlittableToken.String ? contentTypeValue.GetString() ?? "" : "";
            var size = entry.TryGet("Size"u8, out var sizeValue) && sizeValue.TryGetInt64(out var bytes) ? bytes : 0;
            result.Add(new AttachmentInfo(name!, base64, contentType, size));
        }
        return result;
    }
}
