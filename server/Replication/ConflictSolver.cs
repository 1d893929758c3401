using System.Buffers;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Replication;

/// <summary>
/// The default policy for concurrent versions: the latest write wins. Versions are ordered by what
/// they carry themselves, never by their change vectors: last-modified time, then a document over
/// a deletion, then the document's JSON without <c>@metadata</c> (ordinal). A resolved version is
/// stored with the merge of both change vectors, so comparing change-vector text would depend on
/// the order in which three or more concurrent versions reached a node (two nodes could end with
/// different winners under one merged vector, and never converge); time and body survive a
/// resolution unchanged, so every node keeps the greatest version of the set, whichever order it
/// saw them in. Two versions equal on all three keys have the same data, and the local one stays.
/// </summary>
public static class ConflictSolver
{
    /// <summary>Whether the incoming version wins over the local one (a null document is a deletion).</summary>
    public static bool IncomingWins(long incomingTicks, ReadOnlySpan<byte> incomingDocument, bool incomingIsTombstone,
        long localTicks, ReadOnlySpan<byte> localDocument, bool localIsTombstone)
    {
        if (incomingTicks != localTicks)
        {
            return incomingTicks > localTicks;
        }
        if (incomingIsTombstone != localIsTombstone)
        {
            return localIsTombstone;
        }
        if (incomingIsTombstone)
        {
            return false;
        }
        return DataJson(incomingDocument).AsSpan().SequenceCompareTo(DataJson(localDocument)) > 0;
    }

    /// <summary>The document's top-level properties but <c>@metadata</c>, as JSON.</summary>
    private static byte[] DataJson(ReadOnlySpan<byte> document)
    {
        var output = new ArrayBufferWriter<byte>(document.Length + 16);
        foreach (var (name, value) in BlittableReader.Open(document))
        {
            if (name.SequenceEqual("@metadata"u8))
            {
                continue;
            }
            output.Write(name);
            output.Write(":"u8);
            BlittableJsonWriter.WriteValue(value, output);
            output.Write(","u8);
        }
        return output.WrittenSpan.ToArray();
    }
}
