using System.Buffers.Binary;
using System.Text;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The value stored for one attachment of a document in the <c>Attachments</c> tree, keyed
/// <c>[lowercased document id][0x1E][lowercased name]</c> (UTF-8; ids and names have no control
/// characters, so the separator is unambiguous and a document's attachments are one key range,
/// in name order).
/// <code>
/// offset  size  field
///  0      32    SHA-256 of the content (the AttachmentContents key)
/// 32      8     size in bytes (int64, little endian)
/// 40      8     etag of the attachment's last put (int64, little endian): its change vector
/// 48      2     name length in UTF-8 bytes (uint16), the casing written
/// 50      2     content type length in UTF-8 bytes (uint16)
/// 52      ...   name, content type
/// </code>
/// The etag is the one the document's re-store took in the same transaction, so right after a put
/// the attachment's change vector and the document's are the same.
/// </summary>
internal readonly ref struct AttachmentEntry
{
    public const int HeaderSize = 52;
    public const int HashSize = 32;
    public const byte Separator = 0x1E;

    public AttachmentEntry(ReadOnlySpan<byte> value)
    {
        if (value.Length < HeaderSize)
        {
            ThrowCorrupt(value.Length);
        }
        Hash = value[..HashSize];
        Size = BinaryPrimitives.ReadInt64LittleEndian(value[32..]);
        Etag = BinaryPrimitives.ReadInt64LittleEndian(value[40..]);
        var nameLength = BinaryPrimitives.ReadUInt16LittleEndian(value[48..]);
        var contentTypeLength = BinaryPrimitives.ReadUInt16LittleEndian(value[50..]);
        if (HeaderSize + nameLength + contentTypeLength != value.Length)
        {
            ThrowCorrupt(value.Length);
        }
        NameUtf8 = value.Slice(HeaderSize, nameLength);
        ContentTypeUtf8 = value.Slice(HeaderSize + nameLength, contentTypeLength);
    }

    public ReadOnlySpan<byte> Hash { get; }

    public long Size { get; }

    public long Etag { get; }

    public ReadOnlySpan<byte> NameUtf8 { get; }

    public ReadOnlySpan<byte> ContentTypeUtf8 { get; }

    public AttachmentInfo ToInfo() =>
        new(Encoding.UTF8.GetString(NameUtf8), Convert.ToBase64String(Hash), Encoding.UTF8.GetString(ContentTypeUtf8), Size) { Etag = Etag };

    public static byte[] Create(ReadOnlySpan<byte> hash, long size, long etag, string name, string contentType)
    {
        var nameBytes = Encoding.UTF8.GetBytes(name);
        var contentTypeBytes = Encoding.UTF8.GetBytes(contentType);
        var value = new byte[HeaderSize + nameBytes.Length + contentTypeBytes.Length];
        hash.CopyTo(value);
        BinaryPrimitives.WriteInt64LittleEndian(value.AsSpan(32), size);
        BinaryPrimitives.WriteInt64LittleEndian(value.AsSpan(40), etag);
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(48), checked((ushort)nameBytes.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(50), checked((ushort)contentTypeBytes.Length));
        nameBytes.CopyTo(value, HeaderSize);
        contentTypeBytes.CopyTo(value, HeaderSize + nameBytes.Length);
        return value;
    }

    /// <summary>The key prefix of every attachment of the document with storage key <paramref name="documentKey"/>.</summary>
    public static byte[] Prefix(ReadOnlySpan<byte> documentKey)
    {
        var prefix = new byte[documentKey.Length + 1];
        documentKey.CopyTo(prefix);
        prefix[^1] = Separator;
        return prefix;
    }

    /// <summary>The key of attachment <paramref name="name"/> (any casing) of a document; null when longer than a key may be.</summary>
    public static byte[]? Key(ReadOnlySpan<byte> documentKey, string name)
    {
        var lowerName = Encoding.UTF8.GetBytes(name.ToLowerInvariant());
        if (documentKey.Length + 1 + lowerName.Length > Jackdaw.Storage.Engine.Tree.MaxKeySize)
        {
            return null;
        }
        var key = new byte[documentKey.Length + 1 + lowerName.Length];
        documentKey.CopyTo(key);
        key[documentKey.Length] = Separator;
        lowerName.CopyTo(key, documentKey.Length + 1);
        return key;
    }

    private static void ThrowCorrupt(int length) =>
        throw new InvalidDataException($"A stored attachment entry of {length} bytes is corrupt: its header does not match its length.");
}
