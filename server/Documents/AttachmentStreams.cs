using System.Buffers.Binary;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The layout of attachment contents: each content is a stream of chunks in <c>AttachmentChunks</c>,
/// keyed <c>[stream id: 8 BE][chunk number: 4 BE]</c> so that a stream's chunks are adjacent and in
/// order. Every chunk but the last is exactly <see cref="ChunkSize"/> bytes.
/// </summary>
/// <remarks>
/// Why chunks rather than one overflow value per content: a write transaction keeps every page it
/// writes in memory until it commits, and an overflow value is one contiguous array; a 1 GB
/// attachment as one value would be 1 GB of memory. <see cref="ChunkSize"/> is the largest value that
/// fills exactly 8 overflow pages (8 × 8,192 bytes minus the 32-byte page header): each chunk's page
/// run is a 64 KiB array, below the large-object heap's 85,000 bytes.
/// </remarks>
internal static class AttachmentStreams
{
    /// <summary>Bytes per chunk: 8 pages of 8,192 bytes, less the overflow run's 32-byte page header.</summary>
    public const int ChunkSize = 8 * 8192 - 32;

    public const int ChunkKeySize = sizeof(long) + sizeof(int);

    public const int StreamKeySize = sizeof(long);

    /// <summary>A staging entry's state: an upload still being written.</summary>
    public const byte Writing = 0;

    /// <summary>A staging entry's state: a stream nothing references, to delete.</summary>
    public const byte Orphan = 1;

    public static void WriteStreamKey(Span<byte> destination, long streamId) => BinaryPrimitives.WriteInt64BigEndian(destination, streamId);

    public static void WriteChunkKey(Span<byte> destination, long streamId, int chunk)
    {
        BinaryPrimitives.WriteInt64BigEndian(destination, streamId);
        BinaryPrimitives.WriteInt32BigEndian(destination[sizeof(long)..], chunk);
    }

    /// <summary>How many chunks a content of <paramref name="size"/> bytes has (0 for an empty one).</summary>
    public static long ChunkCount(long size) => (size + ChunkSize - 1) / ChunkSize;

    /// <summary>
    /// Marks every staging entry still being written as an orphan; returns how many orphans there are
    /// now. Called when the database opens, when no upload can be running: a state-0 entry is then
    /// what a crash or a cut-off upload left, and nothing references its chunks.
    /// </summary>
    public static int OrphanUnfinishedUploads(Tree staging)
    {
        var unfinished = new List<byte[]>();
        using (var iterator = staging.Iterate())
        {
            if (iterator.SeekFirst())
            {
                do
                {
                    if (iterator.Value[0] == Writing)
                    {
                        unfinished.Add(iterator.Key.ToArray());
                    }
                }
                while (iterator.MoveNext());
            }
        }
        foreach (var key in unfinished)
        {
            staging.Put(key, [Orphan]);
        }
        return (int)staging.Count;
    }
}
