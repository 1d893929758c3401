using Jackdaw.Server.Replication;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Replication;

/// <summary>A sender leaves out what the destination holds for certain (its own writes), and nothing else.</summary>
public class ReplicationLeaveOutTests
{
    private static readonly TimeSpan Converge = TimeSpan.FromSeconds(60);

    [Fact]
    public void OnlyVersionsWhollyMadeByTheDestinationOrVouchedForAreCovered()
    {
        var known = DestinationKnowledge.Of("dbA", "B:7-dbB");
        Assert.True(known.Covers("A:5-dbA"));
        Assert.True(known.Covers("A:900000-dbA"));
        Assert.True(known.Covers("A:5-dbA, B:7-dbB"));
        Assert.False(known.Covers("A:5-dbA, B:8-dbB"));
        Assert.False(known.Covers("A:5-dbA, C:1-dbC"));
        Assert.False(known.Covers("C:1-dbC"));
        Assert.False(known.Covers(""));
        Assert.False(known.Covers("not a vector"));
        Assert.False(DestinationKnowledge.Of(null, null).Covers("A:1-dbA"));
        Assert.True(DestinationKnowledge.Of(null, null).IsEmpty);
    }

    [Fact]
    public async Task ANodesOwnWritesAreNotSentBackToItButOthersChangesOfThemAre()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B", "C");
        const int count = 120;
        for (var i = 0; i < count; i++)
        {
            await nodes.PutAsync(0, $"items/{i}", new { Number = i });
        }
        await nodes.DeleteAsync(0, "items/0");
        await nodes.WaitConvergedAsync(Converge);

        // B and C each hold A's 119 documents and 1 deletion; their senders to A pass them all (items/0
        // perhaps twice: as a document, then as its deletion).
        var toA = Enumerable.Range(1, 2).Select(node => nodes.Server(node).Host.Server.Replication.Outgoing(ReplicationNodes.Database).Single(s => s.Destination.Tag == "A")).ToList();
        await Poll.UntilAsync(() => Task.FromResult(toA.All(s => s.ItemsLeftOut >= count)), Converge, "B's and C's senders to pass A's writes");
        var a = nodes.StatsOf(0);
        Assert.True(a.Applied == 0 && a.AlreadyMerged == 0 && a.Repeated == 0, a.ToString());

        // A version B made from one of A's travels to A (and C) like any other.
        await nodes.PutAsync(1, "items/1", new { Number = -1 });
        await Poll.UntilAsync(() => Task.FromResult(nodes.Documents(0)["items/1"].Json.Contains("-1")), Converge, "B's change to reach A");
        await nodes.WaitConvergedAsync(Converge);
        // The statistics are counted after the batch's transaction is visible: wait for them too.
        await Poll.UntilAsync(() => Task.FromResult(a.Applied >= 1), Converge, "A to count B's change");
        Assert.Equal(1, a.Applied);
    }

    [Fact]
    public async Task WritesOfANodeThatStopsBeforeReachingTheThirdArriveThroughTheSecond()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B", "C");
        var replication = Enumerable.Range(0, 3).Select(i => nodes.Server(i).Host.Server.Replication).ToList();
        ReplicationNode Node(int i) => new(nodes.Tag(i), nodes.Client(i).BaseAddress!.ToString().TrimEnd('/'));
        // A reaches only B; B and C replicate to everyone.
        replication[0].SetTopology(ReplicationNodes.Database, "A", [Node(1)]);
        replication[1].SetTopology(ReplicationNodes.Database, "B", [Node(0), Node(2)]);
        replication[2].SetTopology(ReplicationNodes.Database, "C", [Node(0), Node(1)]);

        await nodes.PutAsync(2, "fromC/1", new { Name = "C's" });
        for (var i = 0; i < 50; i++)
        {
            await nodes.PutAsync(0, $"items/{i}", new { Number = i });
        }
        for (var i = 0; i < 5; i++)
        {
            await nodes.DeleteAsync(0, $"items/{i}");
        }
        var aEtag = nodes.DatabaseOf(0).LastEtag;
        var toB = replication[0].Outgoing(ReplicationNodes.Database).Single();
        await Poll.UntilAsync(() => Task.FromResult(toB.AcknowledgedEtag >= aEtag), Converge, "B to hold all of A's writes");
        await nodes.StopAsync(0);

        // C never heard from A: B relays A's 45 documents and 5 deletions (nothing of them is C's own).
        await Poll.UntilAsync(() => Task.FromResult(nodes.Documents(2).Count == 46), Converge, "C to hold A's documents through B");
        Assert.All(Enumerable.Range(0, 5), i => Assert.False(nodes.Documents(2).ContainsKey($"items/{i}")));
        Assert.Equal(5, TombstonesOf(nodes, 2));
        var b = nodes.Documents(1);
        var c = nodes.Documents(2);
        Assert.Equal(b.OrderBy(d => d.Key), c.OrderBy(d => d.Key));
        var bToC = replication[1].Outgoing(ReplicationNodes.Database).Single(s => s.Destination.Tag == "C");
        Assert.Equal(0, nodes.StatsOf(2).AlreadyMerged);
        // B's sender to C passed C's own document, which came to B from C.
        await Poll.UntilAsync(() => Task.FromResult(bToC.ItemsLeftOut == 1), Converge, "B's sender to pass C's document");
    }

    private static int TombstonesOf(ReplicationNodes nodes, int node)
    {
        var count = 0;
        using var reader = nodes.DatabaseOf(node).BeginRead();
        foreach (var tombstone in reader.GetTombstonesFrom(null, 0))
        {
            if (tombstone.Id.StartsWith("items/", StringComparison.Ordinal))
            {
                count++;
            }
        }
        return count;
    }
}
