using System.Buffers.Binary;
using System.Text;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A kept version of a conflicted document, in the <c>Conflicts</c> tree under
/// <c>[lowercased id][0x1E][change vector, ASCII]</c>:
/// <code>
/// offset  size  field
///  0      8     last modified, UTC ticks (int64 LE)
///  8      1     1 = a deletion (no document), 0 = a document
///  9      2     id length in UTF-8 bytes (uint16), the casing first written
/// 11      2     collection length in UTF-8 bytes (uint16), 0 = none
/// 13      ...   id, collection, then the Disk-mode blittable (to the end)
/// </code>
/// </summary>
internal static class ConflictRecord
{
    private const int HeaderSize = 13;
    private const byte Separator = 0x1E;

    public static byte[] Key(ReadOnlySpan<byte> idKey, string changeVector)
    {
        var key = new byte[idKey.Length + 1 + changeVector.Length];
        idKey.CopyTo(key);
        key[idKey.Length] = Separator;
        Encoding.ASCII.GetBytes(changeVector, key.AsSpan(idKey.Length + 1));
        return key;
    }

    public static byte[] Prefix(ReadOnlySpan<byte> idKey)
    {
        var prefix = new byte[idKey.Length + 1];
        idKey.CopyTo(prefix);
        prefix[idKey.Length] = Separator;
        return prefix;
    }

    public static byte[] Write(ConflictVersion version)
    {
        var id = Encoding.UTF8.GetBytes(version.Id);
        var collection = version.Collection is null ? [] : Encoding.UTF8.GetBytes(version.Collection);
        var document = version.Document ?? [];
        var value = new byte[HeaderSize + id.Length + collection.Length + document.Length];
        BinaryPrimitives.WriteInt64LittleEndian(value, version.LastModifiedTicks);
        value[8] = version.Document is null ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(9), checked((ushort)id.Length));
        BinaryPrimitives.WriteUInt16LittleEndian(value.AsSpan(11), checked((ushort)collection.Length));
        id.CopyTo(value, HeaderSize);
        collection.CopyTo(value, HeaderSize + id.Length);
        document.CopyTo(value, HeaderSize + id.Length + collection.Length);
        return value;
    }

    public static ConflictVersion Read(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        if (value.Length < HeaderSize)
            throw new InvalidDataException($"A stored conflict of {value.Length} bytes is corrupt.");
        var idLength = BinaryPrimitives.ReadUInt16LittleEndian(value[9..]);
        var collectionLength = BinaryPrimitives.ReadUInt16LittleEndian(value[11..]);
        if (HeaderSize + idLength + collectionLength > value.Length)
            throw new InvalidDataException($"A stored conflict of {value.Length} bytes is corrupt: its header does not match its length.");
        var separator = key.LastIndexOf(Separator);
        var changeVector = Encoding.ASCII.GetString(key[(separator + 1)..]);
        var id = Encoding.UTF8.GetString(value.Slice(HeaderSize, idLength));
        var collection = collectionLength == 0 ? null : Encoding.UTF8.GetString(value.Slice(HeaderSize + idLength, collectionLength));
        var document = value[8] == 1 ? null : value[(HeaderSize + idLength + collectionLength)..].ToArray();
        return new ConflictVersion(id, changeVector, BinaryPrimitives.ReadInt64LittleEndian(value), collection, document);
    }
}
