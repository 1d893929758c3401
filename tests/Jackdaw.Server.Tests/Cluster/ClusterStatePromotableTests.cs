using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>Promotables in the cluster's state (<see cref="ClusterState.Apply"/>) and the criterion that promotes them (<see cref="PromotionCriterion"/>).</summary>
public sealed class ClusterStatePromotableTests
{
    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (next, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return next;
    }

    private static readonly PromotableProgress CaughtUp = new(Connected: true, Acknowledged: 120, MentorEtag: 130, EarlierMentorEtag: 120);

    /// <summary>Members A, B, C; Orders created on A (index 4), then C added to it with mentor A (index 5).</summary>
    private static ClusterState OrdersOnAWithCPromotable()
    {
        var state = ClusterState.Empty;
        state = Apply(state, 1, new ClusterCommand("m1", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" });
        state = Apply(state, 2, new ClusterCommand("m2", ClusterCommandKind.PutMember) { Tag = "B", Url = "http://127.0.0.1:2" });
        state = Apply(state, 3, new ClusterCommand("m3", ClusterCommandKind.PutMember) { Tag = "C", Url = "http://127.0.0.1:3" });
        state = Apply(state, 4, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A"] });
        return Apply(state, 5, new ClusterCommand("add", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "C", Mentor = "A" });
    }

    private static ClusterCommand Promote(string id, string tag, string mentor, PromotableProgress progress) =>
        new(id, ClusterCommandKind.PromoteDatabaseNode) { Database = "Orders", Tag = tag, Mentor = mentor, Progress = progress };

    [Fact]
    public void ABackupTaskOrSubscriptionWhoseNodeLeavesGoesToAMemberNeverToAPromotable()
    {
        // Orders on A and B, C added as A's promotable, then B leaves the database: whatever B ran
        // goes to A, never to C, whose copy is still incomplete (a backup of it would be recorded
        // as a success; a subscription served from it would skip documents it lacks).
        var state = ClusterState.Empty;
        var index = 1L;
        foreach (var tag in (string[])["A", "B", "C"])
        {
            state = Apply(state, index++, new ClusterCommand("m" + tag, ClusterCommandKind.PutMember) { Tag = tag, Url = $"http://127.0.0.1:{index}" });
        }
        state = Apply(state, index++, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B"] });
        state = Apply(state, index++, new ClusterCommand("add", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "C", Mentor = "A" });
        for (var i = 0; i < 12; i++)
        {
            state = Apply(state, index++, new ClusterCommand($"b{i}", ClusterCommandKind.PutBackupTask)
            {
                Database = "Orders",
                Backup = new ClusterBackupChange(0) { Name = $"nightly{i}", Configuration = """{"BackupType":"Backup","FullBackupFrequency":"0 2 * * *","LocalSettings":{"FolderPath":"/backups"}}""", ResponsibleNode = "B" },
            });
            state = Apply(state, index++, new ClusterCommand($"s{i}", ClusterCommandKind.PutSubscription)
            {
                Database = "Orders",
                Subscription = new ClusterSubscriptionChange($"sub{i}") { Query = "from Orders", Mentor = "B", Position = new Dictionary<string, long>(), Time = new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc) },
            });
        }
        Assert.All(state.Databases["Orders"].Backups.Values, t => Assert.Equal("B", t.ResponsibleNode));

        state = Apply(state, index, new ClusterCommand("x", ClusterCommandKind.DeleteDatabase) { Database = "Orders", Nodes = ["B"] });

        Assert.Equal(["A", "C"], state.Databases["Orders"].Nodes);
        Assert.All(state.Databases["Orders"].Backups.Values, t => Assert.Equal("A", t.ResponsibleNode));
        Assert.All(state.Subscriptions.Of("Orders").Values, s => Assert.Equal("A", s.Mentor));
    }

    [Fact]
    public void ADatabaseCreatedWithSeveralNodesHasThemAllAsMembersAtOnce()
    {
        var state = Apply(ClusterState.Empty, 1, new ClusterCommand("m1", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" });
        state = Apply(state, 2, new ClusterCommand("m2", ClusterCommandKind.PutMember) { Tag = "B", Url = "http://127.0.0.1:2" });
        state = Apply(state, 3, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B"] });
        Assert.Empty(state.Databases["Orders"].Promotables);
        Assert.Equal(["A", "B"], state.Databases["Orders"].Members);
    }

    [Fact]
    public void ANodeAddedToADatabaseIsAPromotableOfItsMentorAndHoldsACopyButIsNoMember()
    {
        var record = OrdersOnAWithCPromotable().Databases["Orders"];
        Assert.Equal(["A", "C"], record.Nodes);
        Assert.Equal(["A"], record.Members);
        Assert.Equal("A", record.Promotables["C"]);
        Assert.Equal(5, record.TopologyEtag);
        // Kept by a snapshot.
        Assert.Equal("A", ClusterState.FromJson(OrdersOnAWithCPromotable().ToJson()).Databases["Orders"].Promotables["C"]);
    }

    [Fact]
    public void AMentorThatIsNoMemberOfTheDatabaseIsReplacedByItsFirstMember()
    {
        var state = OrdersOnAWithCPromotable();
        state = Apply(state, 6, new ClusterCommand("add2", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "B", Mentor = "C" });
        Assert.Equal("A", state.Databases["Orders"].Promotables["B"]);
        // An entry written before promotables (no mentor) is mentored alike.
        var older = OrdersOnAWithCPromotable().Apply(new ClusterCommand("add3", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "B" }, 6).State;
        Assert.Equal("A", older.Databases["Orders"].Promotables["B"]);
    }

    [Fact]
    public void APromotionFromItsMentorWithCaughtUpProgressMakesItAMemberAndChangesTheTopologyEtag()
    {
        var state = Apply(OrdersOnAWithCPromotable(), 9, Promote("p1", "C", "A", CaughtUp));
        var record = state.Databases["Orders"];
        Assert.Empty(record.Promotables);
        Assert.Equal(["A", "C"], record.Members);
        Assert.Equal(9, record.TopologyEtag);
    }

    [Fact]
    public void APromotionIsRefusedFromAnotherNodeThanTheMentorOrForANodeThatIsNoPromotable()
    {
        var state = OrdersOnAWithCPromotable();
        var (same, refused) = state.Apply(Promote("p1", "C", "B", CaughtUp), 9);
        Assert.Equal("Node 'B' is not the mentor of promotable 'C' of database 'Orders' (node 'A' is).", refused);
        Assert.Same(state.Databases, same.Databases);
        (_, refused) = state.Apply(Promote("p2", "A", "A", CaughtUp), 9);
        Assert.Equal("Node 'A' is not a promotable of database 'Orders'.", refused);
        var promoted = Apply(state, 9, Promote("p3", "C", "A", CaughtUp));
        (_, refused) = promoted.Apply(Promote("p4", "C", "A", CaughtUp), 10);
        Assert.Equal("Node 'C' is not a promotable of database 'Orders'.", refused);
    }

    [Fact]
    public void APromotionWhoseProgressDoesNotShowTheNodeCaughtUpIsRefused()
    {
        var state = OrdersOnAWithCPromotable();
        var (same, refused) = state.Apply(Promote("p1", "C", "A", CaughtUp with { Acknowledged = 119 }), 9);
        Assert.Equal("Promotable 'C' of database 'Orders' has not caught up (ChangeVectorNotMerged): It holds its mentor's feed up to etag 119 of 120.", refused);
        Assert.Equal("A", same.Databases["Orders"].Promotables["C"]);
    }

    [Fact]
    public void APromotionIsRefusedWhileAnIndexOfTheRecordHasNotCaughtUpOnThePromotable()
    {
        var state = Apply(OrdersOnAWithCPromotable(), 6, new ClusterCommand("i1", ClusterCommandKind.PutIndexes)
        {
            Database = "Orders",
            Indexes = [new ClusterIndexChange("Orders/Totals") { Definition = """{"Name":"Orders/Totals","Maps":["map('Orders', o => ({ Total: o.Total }))"]}""" }],
        });
        var (same, refused) = state.Apply(Promote("p1", "C", "A", CaughtUp with { IndexesCaughtUp = [] }), 9);
        Assert.Equal("Promotable 'C' of database 'Orders' has not caught up (IndexNotUpToDate): Its index 'Orders/Totals' has not processed every change of its copy up to its etag of the observation before.", refused);
        Assert.Equal("A", same.Databases["Orders"].Promotables["C"]);
        // Names compare ignoring case, as index names do.
        var promoted = Apply(state, 9, Promote("p2", "C", "A", CaughtUp with { IndexesCaughtUp = ["orders/totals"] }));
        Assert.Contains("C", promoted.Databases["Orders"].Members);
        // A promotion committed before indexes were judged (no list) is applied as it was then.
        Assert.Contains("C", Apply(state, 9, Promote("p3", "C", "A", CaughtUp)).Databases["Orders"].Members);
    }

    [Fact]
    public void TheRevisionsFeedMustHaveReachedWhatTheMentorHadAnObservationBefore()
    {
        var progress = CaughtUp with { AcknowledgedRevision = 40, EarlierMentorRevisionEtag = 40 };
        Assert.Null(PromotionCriterion.NotReady(progress));
        Assert.Equal(("ChangeVectorNotMerged", "It holds its mentor's revisions up to revision etag 39 of 40."), PromotionCriterion.NotReady(progress with { AcknowledgedRevision = 39 }));
        // A first observation of the revisions, or a promotion logged before they were judged, asks nothing of them.
        Assert.Null(PromotionCriterion.NotReady(progress with { AcknowledgedRevision = -1, EarlierMentorRevisionEtag = null }));
        Assert.Null(PromotionCriterion.NotReady(CaughtUp));
        var state = OrdersOnAWithCPromotable();
        Assert.Contains("revision etag 39 of 40", state.Apply(Promote("p1", "C", "A", progress with { AcknowledgedRevision = 39 }), 9).Refused, StringComparison.Ordinal);
    }

    [Fact]
    public void AnIndexThatCannotCatchUpByItselfDoesNotHoldAPromotionBackButAStoppedOneDoes()
    {
        Assert.False(PromotionCriterion.HoldsBack(caughtUp: true, "Normal"));
        Assert.True(PromotionCriterion.HoldsBack(caughtUp: false, "Normal"));
        // An auto-index idle on a node nobody queries yet, one in error, one disabled: they would block for ever.
        Assert.False(PromotionCriterion.HoldsBack(caughtUp: false, "Idle"));
        Assert.False(PromotionCriterion.HoldsBack(caughtUp: false, "Error"));
        Assert.False(PromotionCriterion.HoldsBack(caughtUp: false, "Disabled"));
        Assert.True(PromotionCriterion.HoldsBack(caughtUp: false, null));
    }

    [Fact]
    public void TheIndexCriterionWantsEveryIndexOfTheRecordAndIgnoresOthers()
    {
        var progress = CaughtUp with { IndexesCaughtUp = ["Orders/Totals", "Local/Only"] };
        Assert.Null(PromotionCriterion.NotReady(progress, ["Orders/Totals"]));
        Assert.Null(PromotionCriterion.NotReady(progress, []));
        Assert.Equal("IndexNotUpToDate", PromotionCriterion.NotReady(progress, ["Orders/Totals", "Orders/ByCompany"])?.Status);
        // Documents first: a node behind on both is reported behind on its documents.
        Assert.Equal("ChangeVectorNotMerged", PromotionCriterion.NotReady(progress with { Acknowledged = 1, IndexesCaughtUp = [] }, ["Orders/Totals"])?.Status);
        // The one-argument form judges the documents alone.
        Assert.Null(PromotionCriterion.NotReady(progress with { IndexesCaughtUp = [] }));
    }

    [Fact]
    public void ThePromotionCriterionWantsAConnectedNodeThatAcknowledgedWhatItsMentorHadAnObservationBefore()
    {
        Assert.Null(PromotionCriterion.NotReady(CaughtUp));
        // Writes go on at the mentor (130 now): what it had before (120) is enough.
        Assert.Null(PromotionCriterion.NotReady(CaughtUp with { Acknowledged = 125 }));
        Assert.Equal("ChangeVectorNotMerged", PromotionCriterion.NotReady(CaughtUp with { Acknowledged = 119 })?.Status);
        Assert.Equal("NotResponding", PromotionCriterion.NotReady(CaughtUp with { Connected = false })?.Status);
        Assert.Equal("WaitingForResponse", PromotionCriterion.NotReady(CaughtUp with { Acknowledged = -1, EarlierMentorEtag = -5 })?.Status);
        // A first observation never promotes, even of a node that holds everything (an empty database).
        Assert.Equal("WaitingForResponse", PromotionCriterion.NotReady(new PromotableProgress(true, 0, 0, null))?.Status);
        Assert.Null(PromotionCriterion.NotReady(new PromotableProgress(true, 0, 0, 0)));
    }

    [Fact]
    public void AMentorThatLeavesTheDatabaseIsReplacedAndAPromotableLeftWithoutMembersBecomesOne()
    {
        var state = OrdersOnAWithCPromotable();
        state = Apply(state, 6, new ClusterCommand("addB", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "B", Mentor = "A" });
        state = Apply(state, 7, Promote("p1", "B", "A", CaughtUp));
        // A leaves Orders: C's mentor is now B.
        var left = Apply(state, 8, new ClusterCommand("off", ClusterCommandKind.DeleteDatabase) { Database = "Orders", Nodes = ["A"] });
        Assert.Equal("B", left.Databases["Orders"].Promotables["C"]);
        // Member B removed from the cluster too: C holds the only copy left, a member.
        var alone = Apply(left, 9, new ClusterCommand("rm", ClusterCommandKind.RemoveMember) { Tag = "B" });
        Assert.Empty(alone.Databases["Orders"].Promotables);
        Assert.Equal(["C"], alone.Databases["Orders"].Members);
        Assert.Equal(9, alone.Databases["Orders"].TopologyEtag);
        // A promotable taken off the database is no promotable any more.
        var gone = Apply(state, 8, new ClusterCommand("offC", ClusterCommandKind.DeleteDatabase) { Database = "Orders", Nodes = ["C"] });
        Assert.Empty(gone.Databases["Orders"].Promotables);
    }

    [Fact]
    public void AMemberDemotedIsARehabThatClientsLeaveUntilItsMentorPromotesItBack()
    {
        var state = Apply(OrdersOnAWithCPromotable(), 6, new ClusterCommand("addB", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "B", Mentor = "A" });
        state = Apply(state, 7, Promote("p1", "B", "A", CaughtUp));
        state = Apply(state, 8, new ClusterCommand("down", ClusterCommandKind.DemoteDatabaseNode) { Database = "Orders", Tag = "A", Mentor = "B" });
        var record = state.Databases["Orders"];
        Assert.Equal("B", record.Rehabs["A"]);
        Assert.Equal(["B"], record.Members);
        Assert.Equal(["A", "C", "B"], record.Nodes);
        Assert.Equal(8, record.TopologyEtag);
        Assert.Equal("B", ClusterState.FromJson(state.ToJson()).Databases["Orders"].Rehabs["A"]);
        // C's mentor A is no member now: the first member left mentors it; only a member may.
        Assert.Equal("B", record.Promotables["C"]);
        var (_, refused) = state.Apply(new ClusterCommand("mentorA", ClusterCommandKind.SetDatabaseNodeMentor) { Database = "Orders", Tag = "A", Mentor = "A" }, 9);
        Assert.Equal("The mentor of a node of database 'Orders' must be one of its members (B).", refused);
        (_, refused) = state.Apply(new ClusterCommand("mentorB", ClusterCommandKind.SetDatabaseNodeMentor) { Database = "Orders", Tag = "B", Mentor = "B" }, 9);
        Assert.Equal("Node 'B' is not a promotable of database 'Orders'.", refused);

        state = Apply(state, 10, Promote("p2", "A", "B", CaughtUp));
        Assert.Empty(state.Databases["Orders"].Rehabs);
        Assert.Equal(["A", "B"], state.Databases["Orders"].Members);
        Assert.Equal(10, state.Databases["Orders"].TopologyEtag);
    }

    [Fact]
    public void TheLastMemberOfADatabaseIsNeverDemoted()
    {
        var state = OrdersOnAWithCPromotable();
        var (same, refused) = state.Apply(new ClusterCommand("down", ClusterCommandKind.DemoteDatabaseNode) { Database = "Orders", Tag = "A" }, 6);
        Assert.Equal("Node 'A' is the last member of database 'Orders': it stays one.", refused);
        Assert.Same(state.Databases, same.Databases);
        (_, refused) = state.Apply(new ClusterCommand("down2", ClusterCommandKind.DemoteDatabaseNode) { Database = "Orders", Tag = "C" }, 6);
        Assert.Equal("Node 'C' is not a member of database 'Orders'.", refused);
    }

    [Fact]
    public void APromotableWhoseMentorStoppedAnsweringIsGivenAnotherMemberAsMentor()
    {
        var state = Apply(OrdersOnAWithCPromotable(), 6, new ClusterCommand("addB", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "B", Mentor = "A" });
        state = Apply(state, 7, Promote("p1", "B", "A", CaughtUp));
        state = Apply(state, 8, new ClusterCommand("mentorB", ClusterCommandKind.SetDatabaseNodeMentor) { Database = "Orders", Tag = "C", Mentor = "B" });
        Assert.Equal("B", state.Databases["Orders"].Promotables["C"]);
        // The former mentor's promotion is refused now, the new one's goes through.
        Assert.Equal("Node 'A' is not the mentor of promotable 'C' of database 'Orders' (node 'B' is).", state.Apply(Promote("p2", "C", "A", CaughtUp), 9).Refused);
        Assert.Empty(Apply(state, 9, Promote("p3", "C", "B", CaughtUp)).Databases["Orders"].Promotables);
    }
}
