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

    [Fact]
    public async Task ReplicatedRevisionsHoldTheirAttachmentsContentsAsOnTheNodeThatMadeThem()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B");
        for (var node = 0; node < nodes.Count; node++)
        {
            using var configured = await nodes.Client(node).PostAsync($"/databases/{ReplicationNodes.Database}/admin/revisions/config",
                new StringContent("""{"Default":{"Disabled":false}}""", Encoding.UTF8, "application/json"));
            configured.EnsureSuccessStatusCode();
        }
        await nodes.PutAsync(0, "users/1", new { Name = "Ann" });
        var bytes = Encoding.UTF8.GetBytes("a photo");
        using (var put = await nodes.Client(0).PutAsync($"/databases/{ReplicationNodes.Database}/attachments?id=users/1&name=photo.png", new ByteArrayContent(bytes)))
        {
            put.EnsureSuccessStatusCode();
        }
        // The attachment is deleted again: only the revision that lists it keeps its content.
        using (var deleted = await nodes.Client(0).DeleteAsync($"/databases/{ReplicationNodes.Database}/attachments?id=users/1&name=photo.png"))
        {
            deleted.EnsureSuccessStatusCode();
        }
        await WaitSameRevisionsAsync(nodes);

        var hash = Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(bytes));
        long References(int node)
        {
            using var reader = nodes.DatabaseOf(node).BeginRead();
            return reader.GetAttachmentContent(hash)?.References ?? 0;
        }
        await Poll.UntilAsync(() => Task.FromResult(References(1) == References(0)), Converge, "B's references to match A's");
        Assert.Equal(1, References(0));
        var revisions = Revisions(nodes, 1).Where(r => r.StartsWith("users/1|", StringComparison.Ordinal)).Select(r => r.Split('|')[1]).ToList();
        var withPhoto = revisions.Single(cv =>
        {
            using var reader = nodes.DatabaseOf(1).BeginRead();
            return reader.GetRevisionAttachment("users/1", "photo.png", cv) is not null;
        });
        using var got = await nodes.Client(1).GetAsync($"/databases/{ReplicationNodes.Database}/attachments?id=users/1&name=photo.png&type=Revision&changeVector={Uri.EscapeDataString(withPhoto)}");
        got.EnsureSuccessStatusCode();
        Assert.Equal(bytes, await got.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task ARevisionLimitLeavesTheSameRevisionsOnEveryNodeAndAPurgeLeavesNone()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B", "C");
        for (var node = 0; node < nodes.Count; node++)
        {
            using var configured = await nodes.Client(node).PostAsync($"/databases/{ReplicationNodes.Database}/admin/revisions/config",
                new StringContent("""{"Default":{"Disabled":false,"MinimumRevisionsToKeep":2,"PurgeOnDelete":true}}""", Encoding.UTF8, "application/json"));
            configured.EnsureSuccessStatusCode();
        }

        // Each version reaches the others before the next: they receive every revision, then the removals.
        for (var v = 1; v <= 5; v++)
        {
            await nodes.PutAsync(0, "users/1", new { Name = "Ann", V = v });
            await nodes.WaitConvergedAsync(Converge);
        }
        await WaitSameRevisionsAsync(nodes);
        var kept = Revisions(nodes, 0);
        Assert.Equal(2, kept.Count);
        var newest = nodes.Documents(0)["users/1"].ChangeVector;
        Assert.Contains(kept, r => r.Split('|')[1] == newest);

        await nodes.DeleteAsync(0, "users/1");
        await WaitSameRevisionsAsync(nodes);
        for (var node = 0; node < nodes.Count; node++)
        {
            Assert.Empty(Revisions(nodes, node));
        }
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
