using System.Security.Cryptography;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Keys of the <c>Revisions</c> tree: <c>[id prefix][0x1E][revision etag: 8 BE]</c>, so one
/// document's revisions are one range, oldest first. The id prefix is the document's storage key
/// (its lowercased id, which never holds a control character such as 0x1E), or for a key longer
/// than <see cref="MaxIdPrefix"/> bytes its first bytes then the SHA-256 of the whole: a key is at
/// most <see cref="Tree.MaxKeySize"/> bytes. Two such ids share a range only if their hashes collide.
/// </summary>
internal static class RevisionKeys
{
    public const byte Separator = 0x1E;

    /// <summary>The longest id prefix: room for the separator and the etag.</summary>
    public const int MaxIdPrefix = Tree.MaxKeySize - 1 - StorageKeys.EtagSize;

    private const int HashSize = 32;

    /// <summary>The longest key: an id prefix, the separator, an etag.</summary>
    public const int MaxKeySize = Tree.MaxKeySize;

    /// <summary>Writes <c>[id prefix][0x1E]</c> of a document's storage key; returns its length.</summary>
    public static int WriteRange(Span<byte> destination, ReadOnlySpan<byte> documentKey)
    {
        int length;
        if (documentKey.Length <= MaxIdPrefix)
        {
            documentKey.CopyTo(destination);
            length = documentKey.Length;
        }
        else
        {
            documentKey[..(MaxIdPrefix - HashSize)].CopyTo(destination);
            SHA256.HashData(documentKey, destination[(MaxIdPrefix - HashSize)..]);
            length = MaxIdPrefix;
        }
        destination[length] = Separator;
        return length + 1;
    }

    /// <summary>Writes the key of revision <paramref name="etag"/> of a document; returns its length.</summary>
    public static int Write(Span<byte> destination, ReadOnlySpan<byte> documentKey, long etag)
    {
        var length = WriteRange(destination, documentKey);
        StorageKeys.WriteEtag(destination[length..], etag);
        return length + StorageKeys.EtagSize;
    }

    /// <summary>The revision etag at the end of a <c>Revisions</c> key.</summary>
    public static long EtagOf(ReadOnlySpan<byte> key) => StorageKeys.ReadEtag(key[^StorageKeys.EtagSize..]);
}
