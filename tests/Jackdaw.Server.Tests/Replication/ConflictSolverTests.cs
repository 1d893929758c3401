using System.Buffers;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Tests.Databases;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Replication;

public class ConflictSolverTests
{
    private static readonly long Ticks = new DateTime(2026, 11, 30, 3, 0, 0, DateTimeKind.Utc).Ticks;

    public static TheoryData<int[]> EveryOrder => new()
    {
        new[] { 0, 1, 2 }, new[] { 0, 2, 1 }, new[] { 1, 0, 2 }, new[] { 1, 2, 0 }, new[] { 2, 0, 1 }, new[] { 2, 1, 0 },
    };

    [Theory]
    [MemberData(nameof(EveryOrder))]
    public async Task ThreeConcurrentVersionsWithOneTimeResolveToTheSameWinnerInAnyOrder(int[] order)
    {
        // Three nodes wrote users/1 at the same tick; whichever order a node receives them in, it
        // must keep the same version (the greatest body) under the same merged change vector.
        var versions = new[]
        {
            ("A", """{"Name":"from A","@metadata":{"@collection":"Users"}}"""),
            ("B", """{"Name":"from C","@metadata":{"@collection":"Users"}}"""),
            ("C", """{"Name":"from B","@metadata":{"@collection":"Users"}}"""),
        };
        using var folder = new TempFolder();
        await using var database = DatabaseTestKit.Open(folder.Path);
        database.RegisterTrees("Replication", ReplicationPositions.TreeName);
        using var context = new JsonOperationContext();
        foreach (var i in order)
        {
            var (tag, json) = versions[i];
            var document = context.Parse(Encoding.UTF8.GetBytes(json), BlittableMode.Disk).ToArray();
            var item = new ReplicationItem(1, false, "users/1", "Users", $"{tag}:1-Source{tag}", Ticks, document);
            await database.Merger.EnqueueAsync(new ApplyReplicationBatchCommand($"Source{tag}", new ReplicationBatch(1, [item]), ConflictPolicy.ResolveToLatest, context));
        }

        using var reader = database.BeginRead();
        Assert.True(reader.TryGet("users/1", out var record));
        var output = new ArrayBufferWriter<byte>();
        BlittableJsonWriter.WriteTo(record.Document, output);
        using var stored = JsonDocument.Parse(output.WrittenMemory);
        Assert.Equal("from C", stored.RootElement.GetProperty("Name").GetString());
        Assert.Equal("A:1-SourceA, B:1-SourceB, C:1-SourceC", record.ChangeVectorOr(reader.DatabaseId));
        Assert.Equal(Ticks, record.LastModifiedTicks);
    }

    [Fact]
    public void WithOneTimeADocumentWinsOverADeletion()
    {
        using var context = new JsonOperationContext();
        var document = context.Parse("""{"Name":"x"}"""u8.ToArray(), BlittableMode.Disk).ToArray();
        
        
        
    }
}
