using System.Buffers.Binary;
using System.Text;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A kept version of a conflicted document, in the <c>Conflicts</c> tree under
/// <c>[id prefix][0x1E][first 8 bytes of the SHA-256 of the change vector]</c> (the id prefix as
/// <see cref="RevisionKeys"/> writes it: the storage key, or for a long one its first
/// bytes, 0x1F and its hash; so every key fits <see cref="Jackdaw.Storage.Engine.Tree.MaxKeySize"/>
/// however long the id and its change vector):
/// <code>
/// offset  size  field
///  0      8     last modified, UTC ticks (int64 LE)
///  8      1     1 = a deletion (no document), 0 = a document
///  9      2     id length in UTF-8 bytes (uint16), the casing first written
/// 11      2     collection length in UTF-8 bytes (uint16), 0 = none
/// 13      2     change vector length in ASCII bytes (uint16)
/// 15      ...   id, collection, change vector, then the Disk-mode blittable (to the end)
/// </code>
/// </summary>
internal static class ConflictRecord
{
    private const int HeaderSize = 15;
    private const int HashSize = 8;

    public static byte[] Key(ReadOnlySpan<byte> idKey, string changeVector)
    {
        Span<byte> key = stackalloc byte[RevisionKeys.MaxKeySize];
        var length = RevisionKeys.WriteRange(key, idKey);
        Span<byte> hash = stackalloc byte[32];
        System.Security.Cryptography.SHA256.HashData(Encoding.ASCII.GetBytes(changeVector), hash);
        hash[..HashSize].CopyTo(key[length..]);
        return key[..(length + HashSize)].ToArray();
    }

    public static byte[] Prefix(ReadOnlySpan<byte> idKey)
    {
        Span<byte> prefix = stackalloc byte[RevisionKeys.MaxKeySize];
        return prefix[..RevisionKeys.WriteRange(prefix, idKey)].ToArray();
    }

    public static byte[] Write(ConflictVersion version)
    {
        var id = Encoding.UTF8.GetBytes(version.Id);
        var collection = version.Collection is null ? [] : Encoding.UTF8.GetBytes(version.Collection);
        var changeVector = Encoding.ASCII.GetBytes(version.ChangeVector);
        var document = version.Document ?? [];
        var value = new byte[HeaderSize + id.Length + collection.Length + changeVector.Length + document.Length];
        BinaryPrimitives.WriteInt64LittleEndian(value, version.LastModifiedTicks);
        value[8] = version.Document is null ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(9), checked((ushort)id.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(11), checked((ushort)collection.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(13), checked((ushort)changeVector.Length));
        id.CopyTo(value, HeaderSize);
        collection.CopyTo(value, HeaderSize + id.Length);
        changeVector.CopyTo(value, HeaderSize + id.Length + collection.Length);
        document.CopyTo(value, HeaderSize + id.Length + collection.Length + changeVector.Length);
        return value;
    }

    public static ConflictVersion Read(ReadOnlySpan<byte> value)
    {
        if (value.Length < HeaderSize)
        {
            throw new InvalidDataException($"A stored conflict of {value.Length} bytes is corrupt.");
        }
        var idLength = BinaryPrimitives.ReadUInt16LittleEndian(value[9..]);
        var collectionLength = BinaryPrimitives.ReadUInt16LittleEndian(value[11..]);
        var changeVectorLength = BinaryPrimitives.ReadUInt16LittleEndian(value[13..]);
        var bodyStart = HeaderSize + idLength + collectionLength + changeVectorLength;
        if (bodyStart > value.Length)
        {
            throw new InvalidDataException($"A stored conflict of {value.Length} bytes is corrupt: its header does not match its length.");
        }
        var id = Encoding.UTF8.GetString(value.Slice(HeaderSize, idLength));
        var collection = collectionLength == 0 ? null : Encoding.UTF8.GetString(value.Slice(HeaderSize + idLength, collectionLength));
        var changeVector = Encoding.ASCII.GetString(value.Slice(HeaderSize + idLength + collectionLength, changeVectorLength));
        var document = value[8] == 1 ? null : value[bodyStart..].ToArray();
        return new ConflictVersion(id, changeVector, BinaryPrimitives.ReadInt64LittleEndian(value), collection, document);
    }
}
