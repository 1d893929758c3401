using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Replication;

/// <summary>
/// The receiver's durable position per source: registered tree <c>ReplicationPositions</c>, key
/// the source copy's database id (ASCII), value the last etag of the source's feed applied here
/// (int64 LE), written in the transaction that applies the batch, so a batch is never half
/// counted and never applied twice.
/// </summary>
public static class ReplicationPositions
{
    public const string TreeName = "ReplicationPositions";

    public static long Read(DatabaseReader reader, string sourceDatabaseId) =>
        reader.GetTree(TreeName) is { } tree && tree.TryGet(Encoding.ASCII.GetBytes(sourceDatabaseId), out var value)
            ? BinaryPrimitives.ReadInt64LittleEndian(value)
            : 0;

    /// <summary>Every source's position in <paramref name="reader"/>'s snapshot: source database id → last etag applied.</summary>
    public static Dictionary<string, long> ReadAll(DatabaseReader reader)
    {
        var positions = new Dictionary<string, long>(StringComparer.Ordinal);
        if (reader.GetTree(TreeName) is not { } tree)
        {
            return positions;
        }
        using var iterator = tree.Iterate();
        var more = iterator.SeekFirst();
        while (more)
        {
            positions[Encoding.ASCII.GetString(iterator.Key)] = BinaryPrimitives.ReadInt64LittleEndian(iterator.Value);
            more = iterator.MoveNext();
        }
        return positions;
    }

    public static long Read(DatabaseTransaction transaction, string sourceDatabaseId) =>
        transaction.GetTree(TreeName).TryGet(Encoding.ASCII.GetBytes(sourceDatabaseId), out var value)
            ? BinaryPrimitives.ReadInt64LittleEndian(value)
            : 0;

    /// <summary>The registered tree of the sources' positions in their revisions feeds (revision etags: their own counter), the same layout.</summary>
    public const string RevisionsTreeName = "ReplicationRevisionPositions";

    public static long ReadRevisions(DatabaseReader reader, string sourceDatabaseId) =>
        reader.GetTree(RevisionsTreeName) is { } tree && tree.TryGet(Encoding.ASCII.GetBytes(sourceDatabaseId), out var value)
            ? BinaryPrimitives.ReadInt64LittleEndian(value)
            : 0;

    public static long ReadRevisions(DatabaseTransaction transaction, string sourceDatabaseId) =>
        transaction.GetTree(RevisionsTreeName).TryGet(Encoding.ASCII.GetBytes(sourceDatabaseId), out var value)
            ? BinaryPrimitives.ReadInt64LittleEndian(value)
            : 0;

    public static void WriteRevisions(DatabaseTransaction transaction, string sourceDatabaseId, long etag)
    {
        Span<byte> value = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, etag);
        transaction.GetTree(RevisionsTreeName).Put(Encoding.ASCII.GetBytes(sourceDatabaseId), value);
    }

    public static void Write(DatabaseTransaction transaction, string sourceDatabaseId, long etag)
    {
        Span<byte> value = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, etag);
        transaction.GetTree(TreeName).Put(Encoding.ASCII.GetBytes(sourceDatabaseId), value);
    }
}
