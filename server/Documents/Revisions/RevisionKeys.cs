using System.Security.Cryptography;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Keys of the <c>Revisions</c> tree: <c>[id prefix][0x1E][revision etag: 8 BE]</c>, so one
/// document's revisions are one range, oldest first. The id prefix is the document's storage key
/// (its lowercased id, which never holds a control character such as 0x1E), or for a key longer
/// than <see cref="MaxIdPrefix"/> bytes its first bytes, <see cref="HashMarker"/>, then the SHA-256
/// of the whole: a key is at most <see cref="Tree.MaxKeySize"/> bytes. Two hashed ids share a range
/// only if their hashes collide.
/// </summary>
/// <remarks>
/// No range is a prefix of another's: two plain keys differ before the separator or are equal, and
/// a plain key and a hashed one differ where the marker is (or where the plain key's separator
/// is), as an id has no control character. Without the marker, a plain key equal to a hashed key's
/// first bytes had the range <c>[those bytes][0x1E]</c>, a prefix of the hashed one's keys whenever
/// the hash began with 0x1E: its listing, policy and purge would have touched the other's revisions.
/// </remarks>
internal static class RevisionKeys
{
    public const byte Separator = 0x1E;

    /// <summary>The longest id prefix: room for the separator and the etag.</summary>
    public const int MaxIdPrefix = Tree.MaxKeySize - 1 - StorageKeys.EtagSize;

    /// <summary>Between a long key's first bytes and its hash: a control character, so never in an id.</summary>
    public const byte HashMarker = 0x1F;

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
            documentKey[..(MaxIdPrefix - HashSize - 1)].CopyTo(destination);
            destination[MaxIdPrefix - HashSize - 1] = HashMarker;
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
