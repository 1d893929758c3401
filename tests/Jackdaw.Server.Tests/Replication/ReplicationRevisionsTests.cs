using System.Text;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Replication;

public class ReplicationRevisionsTests
{
    private static readonly TimeSpan Converge = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task WithRevisionsConfiguredWritesOnDifferentNodesLeaveIdenticalRevisionsOnEveryNode()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B", "C");
        for (var node = 0; node < nodes.Count; node++)
        {
            using var configured = await nodes.Client(node).PostAsync($"/databases/{ReplicationNodes.Database}/admin/revisions/config",
                new StringContent("""{"Default":{"Disabled":false}}""", Encoding.UTF8, "application/json"));
            configured.EnsureSuccessStatusCode();
        }

        await nodes.PutAsync(0, "users/1", new { Name = "Ann" });
        await nodes.WaitConvergedAsync(Converge);
        await nodes.PutAsync(1, "users/1", new { Name = "Ann B" });
        await nodes.PutAsync(2, "users/2", new { Name = "Bob" });
        await nodes.WaitConvergedAsync(Converge);
        await nodes.PutAsync(2, "users/1", new { Name = "Ann C" });
        await nodes.PutAsync(0, "users/3", new { Name = "Cid" });
        await nodes.WaitConvergedAsync(Converge);
        await nodes.DeleteAsync(1, "users/3");

        await WaitSameRevisionsAsync(nodes);
        var revisions = Revisions(nodes, 0);
        // users/1: three versions, one per node; users/2: one; users/3: its put and its delete. No duplicates.
        Assert.Equal(3, revisions.Count(r => r.StartsWith("users/1|", StringComparison.Ordinal)));
        Assert.Single(revisions, r => r.StartsWith("users/2|", StringComparison.Ordinal));
        Assert.Equal(2, revisions.Count(r => r.StartsWith("users/3|", StringComparison.Ordinal)));
        Assert.Equal(revisions.Count, revisions.Distinct().Count());
        for (var node = 0; node < nodes.Count; node++)
        {
            Assert.Equal(["users/3"], Bin(nodes, node));
        }
    }

    [Fact]
    public async Task ConcurrentWritesWithRevisionsConfiguredEndWithTheSameRevisionsEverywhere()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        for (var node = 0; node < nodes.Count; node++)
        {
            using var configured = await nodes.Client(node).PostAsync($"/databases/{ReplicationNodes.Database}/admin/revisions/config",
                new StringContent("""{"Default":{"Disabled":false}}""", Encoding.UTF8, "application/json"));
            configured.EnsureSuccessStatusCode();
        }
        await nodes.PutAsync(0, "users/1", new { Name = "A's" });
        await nodes.PutAsync(1, "users/1", new { Name = "B's" });
        nodes.Wire();
        await WaitSameRevisionsAsync(nodes);
        // Both versions and the resolution (made on each node with the same change vector), once each.
        var revisions = Revisions(nodes, 0);
        Assert.Equal(3, revisions.Count);
        Assert.Equal(revisions.Count, revisions.Distinct().Count());
    }

    /// <summary>A node's revisions as "id|change vector|delete", sorted.</summary>
    private static List<string> Revisions(ReplicationNodes nodes, int node)
    {
        using var reader = nodes.DatabaseOf(node).BeginRead();
        var result = new List<string>();
        foreach (var key in reader.GetRevisionKeysAfter(0, int.MaxValue))
        {
            if (reader.TryGetRevisionByKey(key, out var revision))
            {
                result.Add($"{revision.Id.ToLowerInvariant()}|{revision.ChangeVector}|{revision.IsDeleteRevision}");
            }
        }
        result.Sort(StringComparer.Ordinal);
        return result;
    }

    private static List<string> Bin(ReplicationNodes nodes, int node)
    {
        using var reader = nodes.DatabaseOf(node).BeginRead();
        var ids = new List<string>();
        foreach (var key in reader.GetRevisionsBinKeys(0, int.MaxValue))
        {
            if (reader.TryGetRevisionByKey(key, out var revision))
            {
                ids.Add(revision.Id.ToLowerInvariant());
            }
        }
        ids.Sort(StringComparer.Ordinal);
        return ids;
    }

    private static async Task WaitSameRevisionsAsync(ReplicationNodes nodes)
    {
        await nodes.WaitConvergedAsync(Converge);
        string Describe(int node) => string.Join("; ", Revisions(nodes, node)) + " bin " + string.Join(",", Bin(nodes, node));
        try
        {
            await Poll.UntilAsync(() => Task.FromResult(Enumerable.Range(1, nodes.Count - 1).All(n => Describe(n) == Describe(0))), Converge, "the same revisions on every node");
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} {string.Join(" / ", Enumerable.Range(0, nodes.Count).Select(Describe))}", e);
        }
        await nodes.WaitConvergedAsync(Converge);
    }
}
