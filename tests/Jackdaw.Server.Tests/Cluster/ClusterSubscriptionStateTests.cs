using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterSubscriptionStateTests
{
    private static (ClusterState State, string? Refused) Try(ClusterState state, long index, ClusterCommand command) => state.Apply(command, index);

    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (next, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return next;
    }

    private static ClusterState OrdersOnThreeNodes()
    {
        var state = ClusterState.Empty;
        state = Apply(state, 1, new ClusterCommand("m1", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" });
        state = Apply(state, 2, new ClusterCommand("m2", ClusterCommandKind.PutMember) { Tag = "B", Url = "http://127.0.0.1:2" });
        state = Apply(state, 3, new ClusterCommand("m3", ClusterCommandKind.PutMember) { Tag = "C", Url = "http://127.0.0.1:3" });
        return Apply(state, 4, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B", "C"] });
    }

    private static ClusterCommand Create(string id, string name, string mentor) => new(id, ClusterCommandKind.PutSubscription)
    {
        Database = "orders",
        Subscription = new ClusterSubscriptionChange(name)
        {
            Query = "from Orders",
            Mentor = mentor,
            Position = new Dictionary<string, long> { ["dbA"] = 7 },
            Time = new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc),
        },
    };

    private static ClusterCommand Ack(string id, string name, string by, long etag) => new(id, ClusterCommandKind.AcknowledgeSubscription)
    {
        Database = "Orders",
        Subscription = new ClusterSubscriptionChange(name) { Mentor = by, Position = new Dictionary<string, long> { ["dbB"] = etag, ["dbA"] = etag * 2 } },
    };

    [Fact]
    public void ASubscriptionIsCreatedWithItsMentorAndStartPositionAndItsIdIsTheLogIndex()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        var subscription = state.Subscriptions.Of("ORDERS")["paid"];
        Assert.Equal(5, subscription.Id);
        Assert.Equal("B", subscription.Mentor);
        Assert.Equal(7, subscription.Position["dbA"]);
        Assert.Equal("from Orders", subscription.Query);
        Assert.Equal(5, state.Etag);
    }

    [Fact]
    public void ACreateOfATakenNameOrOnAnUnknownDatabaseOrWithAMentorOutsideTheDatabaseChangesNothing()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        var (same, refused) = Try(state, 6, Create("s2", "PAID", "A"));
        Assert.NotNull(refused);
        Assert.Equal("B", same.Subscriptions.Of("Orders")["Paid"].Mentor);
        Assert.Equal(5, same.Etag);
        Assert.NotNull(Try(state, 7, Create("s3", "Other", "D")).Refused);
        Assert.NotNull(Try(state, 8, Create("s4", "Other", "A") with { Database = "Nope" }).Refused);
    }

    [Fact]
    public void OnlyTheMentorMovesThePosition()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        state = Apply(state, 6, Ack("a1", "Paid", "B", 40));
        Assert.Equal(40, state.Subscriptions.Of("Orders")["Paid"].Position["dbB"]);
        Assert.Equal("B", state.Subscriptions.Of("Orders")["Paid"].PositionBy);
        var (after, refused) = Try(state, 7, Ack("a2", "Paid", "C", 99));
        Assert.NotNull(refused);
        Assert.Equal(40, after.Subscriptions.Of("Orders")["Paid"].Position["dbB"]);
    }

    [Fact]
    public void ANewMentorIsCommittedAndTheOldOneCanNoLongerAcknowledge()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        state = Apply(state, 6, new ClusterCommand("mentor1", ClusterCommandKind.SetSubscriptionMentor) { Database = "Orders", Subscription = new("Paid") { Mentor = "C" } });
        Assert.Equal("C", state.Subscriptions.Of("Orders")["Paid"].Mentor);
        Assert.NotNull(Try(state, 7, Ack("a1", "Paid", "B", 50)).Refused);
        Assert.Null(Try(state, 8, Ack("a2", "Paid", "C", 50)).Refused);
        Assert.NotNull(Try(state, 9, new ClusterCommand("mentor2", ClusterCommandKind.SetSubscriptionMentor) { Database = "Orders", Subscription = new("Paid") { Mentor = "D" } }).Refused);
    }

    [Fact]
    public void DisableEnableAndDeleteChangeTheSubscription()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        state = Apply(state, 6, new ClusterCommand("d", ClusterCommandKind.SetSubscriptionDisabled) { Database = "Orders", Subscription = new("Paid") { Disabled = true } });
        Assert.True(state.Subscriptions.Of("Orders")["Paid"].Disabled);
        state = Apply(state, 7, new ClusterCommand("e", ClusterCommandKind.SetSubscriptionDisabled) { Database = "Orders", Subscription = new("Paid") { Disabled = false } });
        Assert.False(state.Subscriptions.Of("Orders")["Paid"].Disabled);
        state = Apply(state, 8, new ClusterCommand("x", ClusterCommandKind.DeleteSubscription) { Database = "Orders", Subscription = new("paid") });
        Assert.Empty(state.Subscriptions.Of("Orders"));
        Assert.NotNull(Try(state, 9, new ClusterCommand("x2", ClusterCommandKind.DeleteSubscription) { Database = "Orders", Subscription = new("Paid") }).Refused);
    }

    [Fact]
    public void AMentorTakenOffTheDatabaseIsReplacedAndADeletedDatabaseTakesItsSubscriptions()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        state = Apply(state, 6, new ClusterCommand("r", ClusterCommandKind.RemoveMember) { Tag = "B" });
        var mentor = state.Subscriptions.Of("Orders")["Paid"].Mentor;
        Assert.Contains(mentor, new[] { "A", "C" });
        Assert.Equal(ClusterSubscriptions.ChooseMentor("Paid", ["A", "C"], _ => true), mentor);
        state = Apply(state, 7, new ClusterCommand("d", ClusterCommandKind.DeleteDatabase) { Database = "Orders" });
        Assert.Empty(state.Subscriptions.ByDatabase);
    }

    [Fact]
    public void TheMentorIsSpreadByNameAndSkipsNodesThatAreDown()
    {
        var nodes = new[] { "A", "B", "C" };
        var mentors = Enumerable.Range(0, 30).Select(i => ClusterSubscriptions.ChooseMentor($"s{i}", nodes, _ => true)).ToHashSet();
        Assert.Equal(3, mentors.Count);
        var first = ClusterSubscriptions.ChooseMentor("Paid", nodes, _ => true);
        Assert.Equal(first, ClusterSubscriptions.ChooseMentor("PAID", ["C", "B", "A"], _ => true));
        Assert.NotEqual(first, ClusterSubscriptions.ChooseMentor("Paid", nodes, t => t != first));
    }

    [Fact]
    public void ASnapshotHoldsTheSubscriptionsAndASnapshotWithoutThemStillReads()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        state = Apply(state, 6, Ack("a1", "Paid", "B", 40));
        var restored = ClusterState.FromJson(state.ToJson());
        var subscription = restored.Subscriptions.Of("orders")["PAID"];
        Assert.Equal("B", subscription.Mentor);
        Assert.Equal(80, subscription.Position["dbA"]);
        Assert.Equal(new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc), subscription.CreatedAt);
        Assert.True(restored.WasApplied("s1"));

        var old = """{"Members":{"A":"http://127.0.0.1:1"},"Databases":[{"Name":"Orders","Nodes":["A"],"TopologyEtag":2,"Settings":{}}],"AppliedIds":["x"],"Etag":2}"""u8;
        var before = ClusterState.FromJson(old);
        Assert.Empty(before.Subscriptions.ByDatabase);
        Assert.Equal(new[] { "A" }, before.Databases["Orders"].Nodes);
    }

    [Fact]
    public void ASubscriptionCommandRetriedWithItsIdIsAppliedOnce()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        state = Apply(state, 6, new ClusterCommand("x", ClusterCommandKind.DeleteSubscription) { Database = "Orders", Subscription = new("Paid") });
        var (again, refused) = Try(state, 7, Create("s1", "Paid", "B"));
        Assert.Null(refused);
        Assert.Empty(again.Subscriptions.Of("Orders"));
    }

    [Fact]
    public void AcknowledgementsAreNotRememberedSoTheyDoNotCrowdOutOtherCommandIds()
    {
        var state = Apply(OrdersOnThreeNodes(), 5, Create("s1", "Paid", "B"));
        for (var i = 0; i < 3; i++)
        {
            state = Apply(state, 6 + i, Ack($"a{i}", "Paid", "B", 10 + i));
        }
        Assert.False(state.WasApplied("a0"));
        Assert.True(state.WasApplied("s1"));
        Assert.Equal(12, state.Subscriptions.Of("Orders")["Paid"].Position["dbB"]);
    }
}
