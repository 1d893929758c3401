namespace Jackdaw.Server.Documents;

/// <summary>
/// The content an attachment put links: either bytes held in memory (a small upload, written by the
/// linking transaction itself) or a stream staged beforehand in <c>AttachmentChunks</c> by earlier
/// transactions (a large upload, see <c>AttachmentUpload</c>). The hash and size were computed while
/// the body was read.
/// </summary>
public sealed class AttachmentSource
{
    private AttachmentSource(byte[] hash, long size, ReadOnlyMemory<byte> bytes, long stagedStreamId, bool isStored = false)
    {
        if (hash.Length != AttachmentEntry.HashSize)
        {
            throw new ArgumentException($"An attachment's hash is a SHA-256 of {AttachmentEntry.HashSize} bytes, not {hash.Length}.", nameof(hash));
        }
        Hash = hash;
        Size = size;
        Bytes = bytes;
        StagedStreamId = stagedStreamId;
        IsStored = isStored;
    }

    /// <summary>The SHA-256 of the content.</summary>
    public byte[] Hash { get; }

    public long Size { get; }

    /// <summary>The content, when it is held in memory.</summary>
    public ReadOnlyMemory<byte> Bytes { get; }

    /// <summary>The staged stream holding the content; 0 when it is held in memory.</summary>
    public long StagedStreamId { get; }

    public bool IsStaged => StagedStreamId != 0;

    /// <summary>A content the database already holds (an import or a restore linking it again): the link only adds a reference.</summary>
    public bool IsStored { get; }

    /// <summary>Content held in memory; its hash is computed here.</summary>
    public static AttachmentSource FromBytes(ReadOnlyMemory<byte> bytes) =>
        new(System.Security.Cryptography.SHA256.HashData(bytes.Span), bytes.Length, bytes, 0);

    /// <summary>Content held in memory whose hash the caller computed while reading it.</summary>
    public static AttachmentSource FromBytes(ReadOnlyMemory<byte> bytes, byte[] hash) => new(hash, bytes.Length, bytes, 0);

    /// <summary>A content already stored (by its hash); linking it fails when it no longer is.</summary>
    public static AttachmentSource FromStored(byte[] hash, long size) => new(hash, size, default, 0, isStored: true);

    /// <summary>Content staged in stream <paramref name="streamId"/> (its staging entry still in state 0).</summary>
    public static AttachmentSource FromStaged(long streamId, byte[] hash, long size)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(streamId);
        return new(hash, size, default, streamId);
    }
}
