using System.Text;
using System.Text.Json;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateIndexTests
{
    private const string Totals = """{"Name":"Orders/Totals","Type":"JavaScriptMap","Maps":["map('Orders', o => ({ Company: o.Company }))"]}""";
    private const string TotalsChanged = """{"Name":"Orders/Totals","Type":"JavaScriptMap","Maps":["map('Orders', o => ({ Employee: o.Employee }))"]}""";

    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return after;
    }

    private static ClusterState WithDatabase()
    {
        var state = Apply(ClusterState.Empty, 1, new ClusterCommand("m1", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" });
        return Apply(state, 2, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A"] });
    }

    private static ClusterCommand Put(string id, string definition, IndexLockMode? lockMode = null, IndexPriority? priority = null) =>
        new(id, ClusterCommandKind.PutIndexes)
        {
            Database = "orders",
            Indexes = [new ClusterIndexChange("Orders/Totals") { Definition = definition, LockMode = lockMode, Priority = priority }],
        };

    private static ClusterCommand Named(string id, ClusterCommandKind kind, IndexLockMode? lockMode = null, IndexPriority? priority = null) =>
        new(id, kind) { Database = "Orders", Indexes = [new ClusterIndexChange("orders/totals") { LockMode = lockMode, Priority = priority }] };

    [Fact]
    public void IndexCommandsPutLockPrioritizeAndDeleteADefinitionInTheRecord()
    {
        var state = Apply(WithDatabase(), 3, Put("p1", Totals, priority: IndexPriority.High));
        var index = state.Databases["Orders"].Indexes["ORDERS/TOTALS"];
        Assert.Equal(new ClusterIndex("Orders/Totals", Totals) { LockMode = IndexLockMode.Unlock, Priority = IndexPriority.High }, index);
        Assert.Equal(3, state.Etag);

        state = Apply(state, 4, Named("l1", ClusterCommandKind.SetIndexLock, lockMode: IndexLockMode.LockedIgnore));
        state = Apply(state, 5, Named("r1", ClusterCommandKind.SetIndexPriority, priority: IndexPriority.Low));
        index = state.Databases["Orders"].Indexes["Orders/Totals"];
        Assert.Equal((IndexLockMode.LockedIgnore, IndexPriority.Low, Totals), (index.LockMode, index.Priority, index.Definition));

        state = Apply(state, 6, Named("l2", ClusterCommandKind.SetIndexLock, lockMode: IndexLockMode.Unlock));
        state = Apply(state, 7, Named("d1", ClusterCommandKind.DeleteIndexes));
        Assert.Empty(state.Databases["Orders"].Indexes);
        Assert.Equal(7, state.Etag);
    }

    [Fact]
    public void AnIndexCommandRetriedWithItsIdIsAppliedOnce()
    {
        var put = Put("p1", Totals);
        var state = Apply(WithDatabase(), 3, put);
        state = Apply(state, 4, Named("d1", ClusterCommandKind.DeleteIndexes));
        // The put again (a retry after a lost answer) does not bring the deleted index back.
        var (again, refused) = state.Apply(put, 5);
        Assert.Null(refused);
        Assert.Same(state, again);
        Assert.Empty(again.Databases["Orders"].Indexes);
    }

    [Fact]
    public void ALockedIndexKeepsItsDefinitionOrRefusesTheChange()
    {
        var state = Apply(WithDatabase(), 3, Put("p1", Totals, lockMode: IndexLockMode.LockedIgnore));

        // LockedIgnore: a changed definition and a delete are taken, and change nothing (the lock mode given still applies).
        state = Apply(state, 4, Put("p2", TotalsChanged, priority: IndexPriority.High));
        Assert.Equal(Totals, state.Databases["Orders"].Indexes["Orders/Totals"].Definition);
        Assert.Equal(IndexPriority.High, state.Databases["Orders"].Indexes["Orders/Totals"].Priority);
        state = Apply(state, 5, Named("d1", ClusterCommandKind.DeleteIndexes));
        Assert.Single(state.Databases["Orders"].Indexes);

        // LockedError: both are refused, and the refused command changes nothing.
        state = Apply(state, 6, Named("l1", ClusterCommandKind.SetIndexLock, lockMode: IndexLockMode.LockedError));
        var (same, refused) = state.Apply(Put("p3", TotalsChanged), 7);
        Assert.Equal("Index 'Orders/Totals' is locked (LockedError): its definition cannot change. Unlock it first.", refused);
        Assert.Equal(Totals, same.Databases["Orders"].Indexes["Orders/Totals"].Definition);
        Assert.Equal(6, same.Etag);
        (_, refused) = state.Apply(Named("d2", ClusterCommandKind.DeleteIndexes), 8);
        Assert.Equal("Index 'Orders/Totals' is locked (LockedError): it cannot be deleted. Unlock it first.", refused);

        // The same definition again is no change, locked or not.
        Assert.Equal(Totals, Apply(state, 9, Put("p4", Totals)).Databases["Orders"].Indexes["Orders/Totals"].Definition);
    }

    [Fact]
    public void IndexCommandsOnAMissingDatabaseOrIndexAreRefused()
    {
        var state = WithDatabase();
        Assert.Equal("Database 'Shop' does not exist.", state.Apply(Put("p1", Totals) with { Database = "Shop" }, 3).Refused);
        Assert.Equal("Index 'orders/totals' does not exist.", state.Apply(Named("d1", ClusterCommandKind.DeleteIndexes), 3).Refused);
        Assert.Equal("Index 'orders/totals' does not exist.", state.Apply(Named("l1", ClusterCommandKind.SetIndexLock, lockMode: IndexLockMode.LockedError), 3).Refused);
        Assert.Equal("The put of index 'Orders/Totals' carries no definition.", state.Apply(Put("p2", ""), 3).Refused);
        Assert.Equal("The command PutIndexes lacks a field it needs.", state.Apply(new ClusterCommand("p3", ClusterCommandKind.PutIndexes) { Database = "Orders" }, 3).Refused);
    }

    [Fact]
    public void AnIndexCommandSurvivesTheLogsJson()
    {
        var command = Put("p1", Totals, IndexLockMode.LockedError, IndexPriority.Low);
        var json = ClusterStateMachine.Serialize(command);
        Assert.Contains("\"LockMode\":\"LockedError\"", Encoding.UTF8.GetString(json), StringComparison.Ordinal);
        var read = JsonSerializer.Deserialize<ClusterCommand>(json)!;
        Assert.Equal(command.Indexes, read.Indexes);
    }

    [Fact]
    public void ASnapshotHoldsTheIndexDefinitionsLocksAndPriorities()
    {
        var state = Apply(WithDatabase(), 3, Put("p1", Totals, IndexLockMode.LockedIgnore, IndexPriority.High));
        var restored = ClusterState.FromJson(state.ToJson());
        Assert.Equal(state.Databases["Orders"].Indexes["Orders/Totals"], restored.Databases["Orders"].Indexes["orders/totals"]);
        Assert.True(restored.WasApplied("p1"));
        // Names are still compared ignoring case once restored.
        restored = Apply(restored, 4, Named("l1", ClusterCommandKind.SetIndexLock, lockMode: IndexLockMode.Unlock));
        Assert.Single(restored.Databases["Orders"].Indexes);
    }

    [Fact]
    public void ASnapshotWrittenBeforeIndexesWereInTheStateLoadsWithNone()
    {
        var old = """
            {"Members":{"A":"http://127.0.0.1:1"},
             "Databases":[{"Name":"Orders","Nodes":["A"],"TopologyEtag":2,"Settings":{}}],
             "AppliedIds":["m1","db"],"Etag":2}
            """;
        var state = ClusterState.FromJson(Encoding.UTF8.GetBytes(old));
        Assert.Empty(state.Databases["Orders"].Indexes);
        state = Apply(state, 3, Put("p1", Totals));
        Assert.Equal(Totals, state.Databases["Orders"].Indexes["Orders/Totals"].Definition);
    }
}
