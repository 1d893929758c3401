using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// The housekeeping of a clustered database's auto-indexes against a stand-in sink: one the
/// cluster's record has is deleted only through the record (idle on this node is not idle on the
/// others), so the nodes never disagree on which auto-indexes exist.
/// </summary>
public sealed class ClusteredAutoIndexHousekeepingTests
{
    private sealed class RecordingSink : IAutoIndexSink
    {
        public HashSet<string> Recorded { get; } = new(StringComparer.OrdinalIgnoreCase);

        public List<string> Retracted { get; } = [];

        public void Created(string database, IndexDefinition definition)
        {
        }

        public void Deleted(string database, string name)
        {
            lock (Retracted)
            {
                Retracted.Add(name);
            }
        }

        public bool IsRecorded(string database, string name) => Recorded.Contains(name);

        public List<IReadOnlyList<AutoIndexUsage>> Reports { get; } = [];

        public void Used(string database, IReadOnlyList<AutoIndexUsage> recorded) => Reports.Add(recorded);
    }

    private static readonly IndexingOptions Quick = new()
    {
        IdleCheckInterval = TimeSpan.FromHours(1),
        AutoIndexIdleAfter = TimeSpan.FromMilliseconds(1),
        AutoIndexDeleteAfter = TimeSpan.FromMilliseconds(50),
    };

    [Fact]
    public async Task ARecordedAutoIndexIdleTooLongOnThisNodeGoesIdleButIsNotDeletedHere()
    {
        using var folder = new TempFolder();
        var sink = new RecordingSink();
        await using var database = Open(folder.Path, NoTimer() with { Components = [IndexStore.Component(Quick, NullLoggerFactory.Instance, sink)] });
        await PutAsync(database, "users/1", "Users", 1);
        var store = IndexStore.Of(database);
        var index = await store.GetOrCreateAutoIndexAsync("Users", [new AutoIndexField("Name", FieldIndexing.Default)]);
        sink.Recorded.Add(index.Name);
        await Poll.UntilAsync(() => Task.FromResult(DateTime.UtcNow - index.Definition.CreatedAt > Quick.AutoIndexDeleteAfter * 2), TimeSpan.FromSeconds(10), "the delay to run out");

        await store.RunHousekeepingAsync();

        Assert.Same(index, store.TryGet(index.Name));
        Assert.Equal(IndexState.Idle, index.State);
        Assert.Null(store.AutoDeleteAt(index));
        Assert.Empty(sink.Retracted);

        // Not recorded (a lone server's, or not in the record yet): deleted here as before.
        sink.Recorded.Clear();
        await store.RunHousekeepingAsync();
        Assert.Null(store.TryGet(index.Name));
        Assert.Equal(new[] { index.Name }, sink.Retracted);
    }

    [Fact]
    public async Task HousekeepingReportsTheUseOfTheRecordedAutoIndexesOnly()
    {
        using var folder = new TempFolder();
        var sink = new RecordingSink();
        var options = new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1), AutoIndexDeleteAfter = TimeSpan.FromSeconds(3) };
        await using var database = Open(folder.Path, NoTimer() with { Components = [IndexStore.Component(options, NullLoggerFactory.Instance, sink)] });
        await PutAsync(database, "users/1", "Users", 1);
        var store = IndexStore.Of(database);
        await store.GetOrCreateAutoIndexAsync("Orders", [new AutoIndexField("Company", FieldIndexing.Default)]);
        var recorded = await store.GetOrCreateAutoIndexAsync("Users", [new AutoIndexField("Name", FieldIndexing.Default)]);
        sink.Recorded.Add(recorded.Name);

        // Not yet idle past AutoIndexDeleteAfter (it was just made): reported in use.
        await store.RunHousekeepingAsync();
        var first = Assert.Single(Assert.Single(sink.Reports));
        Assert.Equal((recorded.Name, recorded.Definition.CreatedAt, false), (first.Name, first.CreatedAt, first.Expired));

        await Poll.UntilAsync(() => Task.FromResult(DateTime.UtcNow - first.LastUsed > options.AutoIndexDeleteAfter), TimeSpan.FromSeconds(10), "the delay to run out");
        await store.RunHousekeepingAsync();
        var second = Assert.Single(sink.Reports[1]);
        Assert.True(second.Expired);
        // Reported, not deleted: the leader decides, from every node's reports.
        Assert.Same(recorded, store.TryGet(recorded.Name));
    }

    [Fact]
    public async Task ARecordedAutoIndexCoveredByAWiderOneIsTakenOutOfTheRecordBeforeItIsDeletedHere()
    {
        using var folder = new TempFolder();
        var sink = new RecordingSink();
        await using var database = Open(folder.Path, NoTimer() with { Components = [IndexStore.Component(new IndexingOptions { IdleCheckInterval = TimeSpan.FromHours(1) }, NullLoggerFactory.Instance, sink)] });
        await PutAsync(database, "users/1", "Users", 1);
        var store = IndexStore.Of(database);
        var narrow = await store.GetOrCreateAutoIndexAsync("Users", [new AutoIndexField("Name", FieldIndexing.Default)]);
        sink.Recorded.Add(narrow.Name);
        var wider = await store.GetOrCreateAutoIndexAsync("Users", [new AutoIndexField("Age", FieldIndexing.Default)]);
        Assert.NotEqual(narrow.Name, wider.Name);

        await Poll.UntilAsync(async () =>
        {
            await store.RemoveCoveredAutoIndexesAsync();
            lock (sink.Retracted)
            {
                return sink.Retracted.Contains(narrow.Name);
            }
        }, TimeSpan.FromSeconds(30), "the wider one to catch up");

        // The record's change deletes it on every node; this one waits for it like the others.
        Assert.Same(narrow, store.TryGet(narrow.Name));
    }
}
