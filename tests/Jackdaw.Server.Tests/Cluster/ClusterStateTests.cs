using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateTests
{
    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command) => state.Apply(command, index).State;

    private static ClusterState ThreeMembers()
    {
        var state = ClusterState.Empty;
        state = Apply(state, 1, new ClusterCommand("m1", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" });
        state = Apply(state, 2, new ClusterCommand("m2", ClusterCommandKind.PutMember) { Tag = "B", Url = "http://127.0.0.1:2" });
        return Apply(state, 3, new ClusterCommand("m3", ClusterCommandKind.PutMember) { Tag = "C", Url = "http://127.0.0.1:3" });
    }

    [Fact]
    public void TheLogNamesACommandsKindAndStillReadsOneWrittenAsANumber()
    {
        var json = System.Text.Encoding.UTF8.GetString(ClusterStateMachine.Serialize(new ClusterCommand("c1", ClusterCommandKind.DeleteDatabase) { Database = "Orders" }));
        Assert.Contains("\"Kind\":\"DeleteDatabase\"", json, StringComparison.Ordinal);
        // How versions before names wrote it: DeleteDatabase was 4.
        var old = System.Text.Json.JsonSerializer.Deserialize<ClusterCommand>(json.Replace("\"DeleteDatabase\"", "4", StringComparison.Ordinal))!;
        Assert.Equal(ClusterCommandKind.DeleteDatabase, old.Kind);
    }

    [Fact]
    public void ACommandRetriedWithItsIdIsAppliedOnce()
    {
        var create = new ClusterCommand("db1", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B"] };
        var state = Apply(ThreeMembers(), 4, create);
        var (again, refused) = state.Apply(create, 5);
        Assert.Null(refused);
        Assert.Same(state, again);
        Assert.Equal(4, again.Databases["orders"].TopologyEtag);

        // The same change under another id is a second request: refused, as a duplicate database.
        var (_, second) = state.Apply(create with { Id = "db2" }, 6);
        Assert.Equal("Database 'Orders' already exists.", second);
    }

    [Fact]
    public void ARecordWithABadNameOrANodeThatIsNotAMemberIsRefusedOnEveryNode()
    {
        var state = ThreeMembers();
        var (same, refused) = state.Apply(new ClusterCommand("bad1", ClusterCommandKind.PutDatabase) { Database = "", Nodes = ["A"] }, 4);
        Assert.Equal("The database name is empty.", refused);
        Assert.Same(state.Databases, same.Databases);
        (_, refused) = state.Apply(new ClusterCommand("bad2", ClusterCommandKind.PutDatabase) { Database = "a/b", Nodes = ["A"] }, 5);
        Assert.Contains("has '/' at position 1", refused);
        (_, refused) = state.Apply(new ClusterCommand("bad3", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "D"] }, 6);
        Assert.Equal("Node 'D' is not a member of the cluster.", refused);
        (_, refused) = state.Apply(new ClusterCommand("bad4", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = [] }, 7);
        Assert.Equal("Database 'Orders' needs at least one node.", refused);
        var orders = Apply(state, 8, new ClusterCommand("ok", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A"] });
        (_, refused) = orders.Apply(new ClusterCommand("bad5", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "D" }, 9);
        Assert.Equal("Node 'D' is not a member of the cluster.", refused);
    }

    [Fact]
    public void ADatabaseCreatedAgainUnderItsNameIsAnotherRecordAndASnapshotKeepsWhichOne()
    {
        var state = Apply(ThreeMembers(), 4, new ClusterCommand("c1", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B"] });
        Assert.Equal(4, state.Databases["Orders"].CreatedIndex);
        state = Apply(state, 5, new ClusterCommand("d1", ClusterCommandKind.DeleteDatabase) { Database = "Orders" });
        state = Apply(state, 6, new ClusterCommand("c2", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B"] });
        // Same name, same nodes: a node that lagged over both changes still tells the two apart.
        Assert.Equal(6, state.Databases["Orders"].CreatedIndex);
        state = Apply(state, 7, new ClusterCommand("n1", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "C" });
        Assert.Equal(6, state.Databases["Orders"].CreatedIndex);
        Assert.Equal(6, ClusterState.FromJson(state.ToJson()).Databases["Orders"].CreatedIndex);
    }

    [Fact]
    public void ATagOrAUrlIsNeverGivenToTwoMembers()
    {
        var state = ThreeMembers();
        var (same, refused) = state.Apply(new ClusterCommand("x1", ClusterCommandKind.PutMember) { Tag = "B", Url = "http://127.0.0.1:9" }, 4);
        Assert.Equal("Tag B is already taken by the member at http://127.0.0.1:2.", refused);
        Assert.Equal("http://127.0.0.1:2", same.Members["B"]);
        (_, refused) = state.Apply(new ClusterCommand("x2", ClusterCommandKind.PutMember) { Tag = "D", Url = "http://127.0.0.1:2" }, 5);
        Assert.Equal("The node at http://127.0.0.1:2 is already a member, as B.", refused);
    }

    [Fact]
    public void RemovingAMemberTakesItOffEveryDatabaseAndChangesTheirTopologyEtag()
    {
        var state = Apply(ThreeMembers(), 4, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B", "C"] });
        state = Apply(state, 5, new ClusterCommand("rm", ClusterCommandKind.RemoveMember) { Tag = "B" });
        Assert.Equal(new[] { "A", "C" }, state.Members.Keys);
        Assert.Equal(new[] { "A", "C" }, state.Databases["Orders"].Nodes);
        Assert.Equal(5, state.Databases["Orders"].TopologyEtag);
    }

    [Fact]
    public void DeletingFromSomeNodesKeepsTheRecordOnTheOthers()
    {
        var state = Apply(ThreeMembers(), 4, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B", "C"] });
        state = Apply(state, 5, new ClusterCommand("d1", ClusterCommandKind.DeleteDatabase) { Database = "Orders", Nodes = ["C"] });
        Assert.Equal(new[] { "A", "B" }, state.Databases["Orders"].Nodes);
        state = Apply(state, 6, new ClusterCommand("d2", ClusterCommandKind.DeleteDatabase) { Database = "Orders" });
        Assert.Empty(state.Databases);
    }

    [Fact]
    public void ASnapshotHoldsMembersRecordsAndTheAppliedIds()
    {
        var state = Apply(ThreeMembers(), 4, new ClusterCommand("db", ClusterCommandKind.PutDatabase)
        {
            Database = "Orders",
            Nodes = ["B", "A"],
            Settings = new Dictionary<string, string> { ["Indexing.MapBatchSize"] = "128" },
        });
        var restored = ClusterState.FromJson(state.ToJson());
        Assert.Equal(state.Members, restored.Members);
        Assert.Equal(new[] { "B", "A" }, restored.Databases["ORDERS"].Nodes);
        Assert.Equal("128", restored.Databases["Orders"].Settings["Indexing.MapBatchSize"]);
        Assert.Equal(state.Etag, restored.Etag);
        Assert.True(restored.WasApplied("db"));
        Assert.Same(restored, restored.Apply(new ClusterCommand("m2", ClusterCommandKind.RemoveMember) { Tag = "B" }, 9).State);
    }

    [Fact]
    public void OnlyTheLastRememberedIdsAreKept()
    {
        var state = ClusterState.Empty;
        for (var i = 0; i <= ClusterState.RememberedIds; i++)
        {
            state = Apply(state, i + 1, new ClusterCommand($"id{i}", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" });
        }
        Assert.False(state.WasApplied("id0"));
        Assert.True(state.WasApplied("id1"));
        Assert.True(state.WasApplied($"id{ClusterState.RememberedIds}"));
    }

    [Theory]
    [InlineData("http://10.0.0.2:8080/", "http://10.0.0.2:8080")]
    [InlineData("HTTP://Node-B:8080", "http://node-b:8080")]
    [InlineData("https://db.example.com", "https://db.example.com")]
    [InlineData("http://10.0.0.2:8080/studio", null)]
    [InlineData("ftp://10.0.0.2", null)]
    [InlineData("10.0.0.2:8080", null)]
    [InlineData("http://127.0.0.1:0", null)]
    [InlineData("", null)]
    public void NodeUrlsAreNormalizedOrRefused(string url, string? expected) => Assert.Equal(expected, ClusterUrls.Normalize(url));
}
