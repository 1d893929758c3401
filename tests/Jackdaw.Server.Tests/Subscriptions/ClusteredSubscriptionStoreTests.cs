using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Subscriptions;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Subscriptions;

/// <summary>
/// A clustered database's subscription store against a stand-in cluster (no Raft): only the mentor
/// serves, a new mentor resumes after its own copy's entry of the stored position, and an
/// acknowledgement stores this copy's etag with the other copies' feed positions.
/// </summary>
public sealed class ClusteredSubscriptionStoreTests
{
    private sealed class FakeCluster : ISubscriptionCluster
    {
        public string NodeTag { get; set; } = "A";

        public List<ClusteredSubscription> Subscriptions { get; } = [];

        public List<SubscriptionProposal> Proposals { get; } = [];

        public Dictionary<string, long> Feeds { get; } = new() { ["copy-of-B"] = 42 };

        /// <summary>False: the database is a lone server's (or, with <see cref="Loading"/>, not in the state this member loaded so far).</summary>
        public bool Clustered { get; set; } = true;

        public bool Loading { get; set; }

        public bool Keeps(string database) => Clustered;

        public bool IsLoading(string database) => Loading;

        public IReadOnlyList<ClusteredSubscription> Current(string database) => [.. Subscriptions];

        public Task ProposeAsync(SubscriptionProposal proposal, CancellationToken token)
        {
            Proposals.Add(proposal);
            var index = Subscriptions.FindIndex(s => s.Name == proposal.Name);
            if (proposal.Kind == SubscriptionProposalKind.Acknowledge && index >= 0)
            {
                Subscriptions[index] = Subscriptions[index] with { Position = proposal.Position! };
            }
            return Task.CompletedTask;
        }

        public IReadOnlyDictionary<string, long> FeedPositions(DatabaseReader reader) => Feeds;
    }

    [Fact]
    public async Task OnlyTheMentorServesAndANewMentorResumesAfterItsOwnEntryAndStoresTheFeedsItRead()
    {
        using var folder = new TempFolder();
        var cluster = new FakeCluster();
        await using var database = Open(folder.Path, NoTimer() with { Components = [SubscriptionStore.Component(NullLoggerFactory.Instance, cluster)] });
        for (var i = 1; i <= 10; i++)
        {
            await PutAsync(database, $"orders/{i}", "Orders", i);
        }
        var store = SubscriptionStore.Of(database);
        cluster.Subscriptions.Add(new ClusteredSubscription(7, "All", "from Orders", false, "B", "http://b:8080",
            new Dictionary<string, long> { [database.DatabaseId] = 4, ["copy-of-B"] = 99 }, DateTime.UtcNow, null));
        store.RefreshFromCluster();

        var elsewhere = await Assert.ThrowsAsync<SubscriptionDoesNotBelongToNodeException>(() => store.Get("All").ConnectAsync(SubscriptionStrategy.OpenIfFree, "test", CancellationToken.None));
        Assert.Equal("B", elsewhere.AppropriateNode);
        Assert.Equal("http://b:8080", elsewhere.AppropriateUrl);

        // The cluster gives it to this node: it starts after this copy's entry (etag 4).
        cluster.Subscriptions[0] = cluster.Subscriptions[0] with { Mentor = "A" };
        store.RefreshFromCluster();
        var subscription = store.Get("All");
        Assert.Equal(4, subscription.Record.AckedEtag);
        using var session = await subscription.ConnectAsync(SubscriptionStrategy.OpenIfFree, "test", CancellationToken.None);
        var batch = await session.NextBatchAsync(100, 1 << 20, TimeSpan.FromSeconds(5), new SubscriptionBatchWriter(subscription.Query), CancellationToken.None);
        Assert.NotNull(batch);
        Assert.Equal(4, batch.StartExclusive);
        Assert.Equal(6, batch.Count);
        session.MarkSent(batch);
        await session.AcknowledgeAsync(batch.LastEtag);

        var ack = Assert.Single(cluster.Proposals, p => p.Kind == SubscriptionProposalKind.Acknowledge);
        Assert.Equal(batch.LastEtag, ack.Position![database.DatabaseId]);
        // Read to the collection's end: the other copies' feed positions of that snapshot.
        Assert.Equal(42, ack.Position["copy-of-B"]);

        // Given to another node: this one closes its worker and refuses the next.
        cluster.Subscriptions[0] = cluster.Subscriptions[0] with { Mentor = "C", MentorUrl = "http://c:8080" };
        store.RefreshFromCluster();
        Assert.True(session.Closed.IsCancellationRequested);
        Assert.True(session.CanReconnect);
        var moved = await Assert.ThrowsAsync<SubscriptionDoesNotBelongToNodeException>(() => store.Get("All").ConnectAsync(SubscriptionStrategy.TakeOver, "test", CancellationToken.None));
        Assert.Equal("C", moved.AppropriateNode);
    }

    [Fact]
    public async Task ABatchThatStopsShortOfTheCollectionsEndKeepsTheFeedsOfTheLastOneThatReachedIt()
    {
        using var folder = new TempFolder();
        var cluster = new FakeCluster();
        await using var database = Open(folder.Path, NoTimer() with { Components = [SubscriptionStore.Component(NullLoggerFactory.Instance, cluster)] });
        for (var i = 1; i <= 10; i++)
        {
            await PutAsync(database, $"orders/{i}", "Orders", i);
        }
        var store = SubscriptionStore.Of(database);
        cluster.Subscriptions.Add(new ClusteredSubscription(7, "All", "from Orders", false, "A", null, new Dictionary<string, long>(), DateTime.UtcNow, null));
        store.RefreshFromCluster();
        var subscription = store.Get("All");
        using var session = await subscription.ConnectAsync(SubscriptionStrategy.OpenIfFree, "test", CancellationToken.None);
        var writer = new SubscriptionBatchWriter(subscription.Query);

        var first = (await session.NextBatchAsync(4, 1 << 20, TimeSpan.FromSeconds(5), writer, CancellationToken.None))!;
        session.MarkSent(first);
        await session.AcknowledgeAsync(first.LastEtag);
        // Short of the end: no other copy's entry can be vouched for yet.
        Assert.False(cluster.Proposals[^1].Position!.ContainsKey("copy-of-B"));

        var rest = (await session.NextBatchAsync(100, 1 << 20, TimeSpan.FromSeconds(5), writer, CancellationToken.None))!;
        session.MarkSent(rest);
        await session.AcknowledgeAsync(rest.LastEtag);
        Assert.Equal(42, cluster.Proposals[^1].Position!["copy-of-B"]);
        Assert.Equal(rest.LastEtag, cluster.Proposals[^1].Position![database.DatabaseId]);
    }

    [Fact]
    public async Task ALocalSubscriptionTheFounderRecordedGivesWayToTheClustersAndLeavesTheDatabase()
    {
        using var folder = new TempFolder();
        var cluster = new FakeCluster { Clustered = false };
        await using var database = Open(folder.Path, NoTimer() with { Components = [SubscriptionStore.Component(NullLoggerFactory.Instance, cluster)] });
        var store = SubscriptionStore.Of(database);
        var local = await store.CreateAsync("Orders", "from Orders", null);

        // Founding: the cluster gets it with its query and creation time.
        cluster.Clustered = true;
        cluster.Subscriptions.Add(new ClusteredSubscription(9, "Orders", local.Query, false, "A", null, new Dictionary<string, long>(), local.CreatedAt, null));
        store.RefreshFromCluster();

        Assert.NotNull(store.Get("Orders").Cluster);
        await Poll.UntilAsync(() => Task.FromResult(StoredNames(database).Count == 0), TimeSpan.FromSeconds(10), "the local copy to leave the database's tree");
    }

    [Fact]
    public async Task ALocalSubscriptionTheClusterDidNotRecordIsShadowedNotDeleted()
    {
        using var folder = new TempFolder();
        var cluster = new FakeCluster { Clustered = false };
        await using var database = Open(folder.Path, NoTimer() with { Components = [SubscriptionStore.Component(NullLoggerFactory.Instance, cluster)] });
        var store = SubscriptionStore.Of(database);
        var local = await store.CreateAsync("Orders", "from Orders where Total > 10", null);

        cluster.Clustered = true;
        cluster.Subscriptions.Add(new ClusteredSubscription(9, "Orders", "from Orders", false, "A", null, new Dictionary<string, long>(), local.CreatedAt.AddMinutes(-5), null));
        store.RefreshFromCluster();

        Assert.Equal("from Orders", store.Get("Orders").Record.Query);
        // The database's writes are in order: a forgetting would be in the tree by the next one.
        cluster.Clustered = false;
        await store.CreateAsync("Later", "from Orders", null);
        Assert.Equal(new[] { "Later", "Orders" }, StoredNames(database).Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task AMemberThatHasNotLoadedTheDatabasesRecordRefusesToCreateASubscriptionOfItsOwn()
    {
        using var folder = new TempFolder();
        var cluster = new FakeCluster { Clustered = false, Loading = true };
        await using var database = Open(folder.Path, NoTimer() with { Components = [SubscriptionStore.Component(NullLoggerFactory.Instance, cluster)] });

        await Assert.ThrowsAsync<DatabaseUnavailableException>(() => SubscriptionStore.Of(database).CreateAsync("Orders", "from Orders", null));
        Assert.Empty(StoredNames(database));
    }

    private static List<string> StoredNames(DocumentDatabase database)
    {
        var names = new List<string>();
        JsonRecords.ReadAll(database, SubscriptionStore.TreeName, json => names.Add(json.GetProperty("Name").GetString()!), e => throw e);
        return names;
    }
}
