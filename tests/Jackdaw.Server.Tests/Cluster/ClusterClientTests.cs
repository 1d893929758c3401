using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net.Http.Json;
using System.Text.Json;
using Jackdaw.Client;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// Three server processes and the .NET client, as an application uses them: a store given the
/// three URLs learns the database's topology, writes with write assurance and fails over when the
/// node it writes to dies or stops; at the end every node holds the same documents, compared whole
/// (bodies, metadata, change vectors).
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterClientTests(ITestOutputHelper output)
{
    private const string Database = "Orders";

    /// <summary>The issue's figure: a node stopped for half a minute, long past every heartbeat and election timeout.</summary>
    private static readonly TimeSpan PauseLength = TimeSpan.FromSeconds(30);

    public sealed class Order
    {
        public int Writer { get; set; }

        public int Sequence { get; set; }

        public string Side { get; set; } = "";
    }

    [Fact]
    public async Task SixteenClientWritersWaitingForAReplicaLoseNoAcknowledgedWriteWhenTheirNodeIsKilledAgainAndAgain()
    {
        var clock = Stopwatch.StartNew();
        await using var cluster = await TestCluster.StartAsync(3);
        await ClusterDocuments.CreateDatabaseAsync(cluster, Database);
        using var store = Store(cluster);

        var acknowledged = new ConcurrentDictionary<string, int>();
        var failures = new ConcurrentDictionary<string, int>();
        using var stop = new CancellationTokenSource();
        var writers = Enumerable.Range(0, 16).Select(w => Task.Run(async () =>
        {
            var sequence = 0;
            while (!stop.IsCancellationRequested)
            {
                var id = $"orders/{w}-{sequence}";
                if (await SaveAsync(store, id, new Order { Writer = w, Sequence = sequence, Side = "client" }, failures))
                {
                    acknowledged[id] = sequence;
                    sequence++;
                }
            }
        })).ToList();

        var kills = new List<string>();
        for (var round = 0; round < 3; round++)
        {
            // The node the writers write to: the store's preferred node.
            var tag = (await store.GetPreferredNodeAsync()).ClusterTag;
            var victim = cluster.NodeByTag(tag);
            await MoreAcknowledgedAsync(acknowledged, 50, $"writes acknowledged by {tag} before round {round}'s kill");
            victim.Kill();
            kills.Add(tag);
            await MoreAcknowledgedAsync(acknowledged, 50, $"writes acknowledged by another node after {tag} was killed");
            await victim.RestartAsync();
            // The store goes back to its preferred node once that answers its health check.
            await Poll.UntilAsync(async () => (await store.GetPreferredNodeAsync()).ClusterTag == tag, ClusterDocuments.Converge, $"the store to write to {tag} again");
            await MoreAcknowledgedAsync(acknowledged, 20, $"writes acknowledged by {tag} after its restart");
        }
        await stop.CancelAsync();
        await Task.WhenAll(writers);

        var documents = await ClusterDocuments.ConvergedAsync(cluster, Database);
        foreach (var (id, sequence) in acknowledged)
        {
            Assert.True(documents.TryGetValue(id, out var json), $"acknowledged {id} is missing");
            Assert.Equal(sequence, JsonDocument.Parse(json).RootElement.GetProperty(nameof(Order.Sequence)).GetInt32());
        }
        output.WriteLine($"{acknowledged.Count} writes acknowledged, {documents.Count} documents on each node; killed {string.Join(", ", kills)}; "
            + $"failed saves: {string.Join(", ", failures.Select(f => $"{f.Key} × {f.Value}"))}; {clock.Elapsed.TotalSeconds:0} s");
    }

    /// <summary>
    /// Two pauses of node C on one cluster. The first: writes go on to A and B, and C catches up
    /// after it resumes. The second: clients that write to C alone have their requests queued on
    /// its stopped sockets, while clients of A and B write the same ids; after C resumes the queued
    /// requests complete, and each conflict resolves to the same winner on every node: the latest
    /// write, C's.
    /// </summary>
    [Fact]
    public async Task ANodePausedForThirtySecondsCatchesUpAndConflictingWritesResolveToOneWinnerEverywhere()
    {
        var clock = Stopwatch.StartNew();
        await using var cluster = await TestCluster.StartAsync(3);
        await ClusterDocuments.CreateDatabaseAsync(cluster, Database);
        using var store = Store(cluster);
        var c = cluster.NodeByTag("C");
        Assert.NotEqual("C", (await store.GetPreferredNodeAsync()).ClusterTag);
        var failures = new ConcurrentDictionary<string, int>();

        // First run: C stopped, the others take writes for 30 s.
        var first = await WhilePausedAsync(c, store, "first", failures, duringPause: () => Task.CompletedTask);
        var resumed = Stopwatch.StartNew();
        var documents = await ClusterDocuments.ConvergedAsync(cluster, Database);
        var firstCatchUp = resumed.Elapsed;
        Assert.All(first, id => Assert.Contains(id, documents.Keys));

        // Second run: C's own clients (a store that knows C alone) queue writes on it while it is stopped.
        using var cStore = new DocumentStore { Urls = [c.Url], Database = Database };
        cStore.Conventions.DisableTopologyUpdates = true;
        cStore.Conventions.RequestTimeout = TimeSpan.FromSeconds(90);
        cStore.Initialize();
        var conflicting = Enumerable.Range(0, 8).Select(i => $"conflicts/{i}").ToList();
        var queued = new List<Task>();
        var second = await WhilePausedAsync(c, store, "second", failures, duringPause: async () =>
        {
            foreach (var id in conflicting)
            {
                queued.Add(PlainSaveAsync(cStore, id, new Order { Side = "paused" }));
                queued.Add(PlainSaveAsync(cStore, id + "-queued", new Order { Side = "paused" }));
            }
            foreach (var id in conflicting)
            {
                Assert.True(await SaveAsync(store, id, new Order { Side = "others" }, failures), $"{id} written on the running side");
            }
            Assert.All(queued, q => Assert.False(q.IsCompleted, "a write to the stopped node completed"));
        });
        // Stopped, not dead: the queued requests are answered once it runs again.
        resumed.Restart();
        await Task.WhenAll(queued).WaitAsync(ClusterDocuments.Converge);
        documents = await ClusterDocuments.ConvergedAsync(cluster, Database);
        var secondCatchUp = resumed.Elapsed;
        Assert.All(second, id => Assert.Contains(id, documents.Keys));
        foreach (var id in conflicting)
        {
            Assert.Equal("paused", JsonDocument.Parse(documents[id]).RootElement.GetProperty(nameof(Order.Side)).GetString());
            Assert.Contains(id + "-queued", documents.Keys);
        }
        // The two sides' versions met as concurrent on some node and were resolved, leaving none
        // for the user. (Not one conflict per id: C may have applied a batch from A, sitting in
        // its socket's buffer, before it took the queued write of the same id, which is then a
        // plain update of A's version, with the same winner.)
        var met = 0L;
        var received = new List<string>();
        foreach (var node in cluster.Nodes)
        {
            var conflicts = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/replication/conflicts");
            Assert.Equal(0, conflicts.GetProperty("Results").GetArrayLength());
            var incoming = (await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/replication/debug")).GetProperty("Incoming");
            met += incoming.GetProperty("Conflicts").GetInt64();
            received.Add(incoming.GetRawText());
        }
        Assert.True(met > 0, $"no conflict met for {conflicting.Count} ids written on both sides: {string.Join(", ", received)}");
        output.WriteLine($"{first.Count} + {second.Count} writes while C was paused, caught up {firstCatchUp.TotalSeconds:0.0} s and {secondCatchUp.TotalSeconds:0.0} s after it resumed; {documents.Count} documents on each node; "
            + $"{met} conflicts met; received by A, B, C: {string.Join(" ", received)}; "
            + $"failed saves: {string.Join(", ", failures.Select(f => $"{f.Key} × {f.Value}"))}; {clock.Elapsed.TotalSeconds:0} s");
    }

    /// <summary>Pauses <paramref name="paused"/> for <see cref="PauseLength"/> while 4 writers write through <paramref name="store"/>; answers the ids acknowledged.</summary>
    private static async Task<List<string>> WhilePausedAsync(ClusterNodeProcess paused, DocumentStore store, string run, ConcurrentDictionary<string, int> failures, Func<Task> duringPause)
    {
        var acknowledged = new ConcurrentBag<string>();
        paused.Pause();
        var pausedFor = Stopwatch.StartNew();
        try
        {
            var writers = Enumerable.Range(0, 4).Select(w => Task.Run(async () =>
            {
                var sequence = 0;
                while (pausedFor.Elapsed < PauseLength)
                {
                    var id = $"{run}/{w}-{sequence}";
                    if (await SaveAsync(store, id, new Order { Writer = w, Sequence = sequence, Side = "others" }, failures))
                    {
                        acknowledged.Add(id);
                        sequence++;
                    }
                    // Paced, not flat out: thousands of writes to catch up on, not tens of thousands to page through.
                    await Task.Delay(10);
                }
            })).ToList();
            await duringPause();
            await Task.WhenAll(writers);
        }
        finally
        {
            paused.Resume();
        }
        Assert.NotEmpty(acknowledged);
        return [.. acknowledged];
    }

    private static DocumentStore Store(TestCluster cluster) =>
        new DocumentStore { Urls = [.. cluster.Nodes.Select(n => n.Url)], Database = Database }.Initialize();

    /// <summary>A save waiting for one replica; false (counted by failure) when the client gave up on it.</summary>
    private static async Task<bool> SaveAsync(DocumentStore store, string id, Order order, ConcurrentDictionary<string, int> failures)
    {
        try
        {
            using var session = store.OpenAsyncSession();
            session.Advanced.WaitForReplicationAfterSaveChanges(TimeSpan.FromSeconds(30), throwOnTimeout: true, replicas: 1);
            await session.StoreAsync(order, id);
            await session.SaveChangesAsync();
            return true;
        }
        catch (Exception e) when (e is JackdawException or TimeoutException or OperationCanceledException)
        {
            // Not acknowledged: the writer writes the same id again.
            failures.AddOrUpdate(e.GetType().Name, 1, (_, n) => n + 1);
            return false;
        }
    }

    private static async Task PlainSaveAsync(DocumentStore store, string id, Order order)
    {
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(order, id);
        await session.SaveChangesAsync();
    }

    private static async Task MoreAcknowledgedAsync(ConcurrentDictionary<string, int> acknowledged, int more, string what)
    {
        var before = acknowledged.Count;
        await Poll.UntilAsync(() => Task.FromResult(acknowledged.Count >= before + more), ClusterDocuments.Converge, what);
    }
}
