using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// The two membership lists (the state's members and reservations, Raft's voters) and what the
/// leader does when a change of members stopped between its steps.
/// </summary>
public sealed class MembershipReconcilerTests
{
    private const string A = "http://127.0.0.1:1";
    private const string B = "http://127.0.0.1:2";
    private const string C = "http://127.0.0.1:3";

    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return after;
    }

    private static ClusterState TwoMembers()
    {
        var state = Apply(ClusterState.Empty, 1, new ClusterCommand("m1", ClusterCommandKind.PutMember) { Tag = "A", Url = A });
        return Apply(state, 2, new ClusterCommand("m2", ClusterCommandKind.PutMember) { Tag = "B", Url = B });
    }

    [Fact]
    public void AReservedTagIsNeitherAMemberNorFreeUntilTheMemberEntryCommitsIt()
    {
        var state = Apply(TwoMembers(), 3, new ClusterCommand("r", ClusterCommandKind.ReserveMember) { Tag = "C", Url = C });
        Assert.Equal(C, state.Joining["C"]);
        Assert.False(state.Members.ContainsKey("C"));
        Assert.Equal("C", state.JoiningTagOf(C + "/"));

        // Another node cannot take the tag, nor the node another tag, while the add is under way.
        var (_, refused) = state.Apply(new ClusterCommand("x1", ClusterCommandKind.PutMember) { Tag = "C", Url = "http://127.0.0.1:4" }, 4);
        Assert.Equal("Tag C is reserved for the node being added at http://127.0.0.1:3.", refused);
        (_, refused) = state.Apply(new ClusterCommand("x2", ClusterCommandKind.ReserveMember) { Tag = "D", Url = C }, 4);
        Assert.Equal("The node at http://127.0.0.1:3 is being added as C.", refused);
        (_, refused) = state.Apply(new ClusterCommand("x3", ClusterCommandKind.ReserveMember) { Tag = "B", Url = "http://127.0.0.1:4" }, 4);
        Assert.Equal("Tag B is already taken by the member at http://127.0.0.1:2.", refused);

        var added = Apply(state, 5, new ClusterCommand("p", ClusterCommandKind.PutMember) { Tag = "C", Url = C });
        Assert.Equal(C, added.Members["C"]);
        Assert.Empty(added.Joining);

        // A snapshot keeps a reservation.
        var restored = ClusterState.FromJson(state.ToJson());
        Assert.Equal(C, restored.Joining["C"]);
        Assert.Empty(ClusterState.FromJson(added.ToJson()).Joining);
    }

    [Fact]
    public void RemovingANodeBeingAddedDropsItsReservation()
    {
        var state = Apply(TwoMembers(), 3, new ClusterCommand("r", ClusterCommandKind.ReserveMember) { Tag = "C", Url = C });
        var dropped = Apply(state, 4, new ClusterCommand("d", ClusterCommandKind.RemoveMember) { Tag = "C" });
        Assert.Empty(dropped.Joining);
        Assert.Equal(["A", "B"], dropped.Members.Keys);
    }

    [Fact]
    public void ANodesCertificateIsRecordedWhenItIsReservedAndForgottenWhenItIsRemoved()
    {
        var state = Apply(TwoMembers(), 3, new ClusterCommand("r", ClusterCommandKind.ReserveMember) { Tag = "C", Url = C, Thumbprint = "ABC123" });
        Assert.True(state.IsNodeCertificate("abc123"));
        // Completed without a thumbprint (by the leader's repair): the recorded one stays.
        state = Apply(state, 4, new ClusterCommand("p", ClusterCommandKind.PutMember) { Tag = "C", Url = C });
        Assert.Equal("ABC123", state.NodeCertificates["C"]);
        Assert.Equal("ABC123", ClusterState.FromJson(state.ToJson()).NodeCertificates["C"]);
        Assert.Equal("ABC123", state.WithoutAppliedIds().NodeCertificates["C"]);
        state = Apply(state, 5, new ClusterCommand("d", ClusterCommandKind.RemoveMember) { Tag = "C" });
        Assert.False(state.IsNodeCertificate("ABC123"));
    }

    [Fact]
    public void ListsThatAgreeNeedNoRepair()
    {
        Assert.Empty(MembershipReconciler.Plan(TwoMembers(), [A, B + "/"], A));
    }

    [Fact]
    public void AReservedNodeAlreadyAVoterIsCompletedAndOneThatIsNotIsResumed()
    {
        var state = Apply(TwoMembers(), 3, new ClusterCommand("r", ClusterCommandKind.ReserveMember) { Tag = "C", Url = C });
        Assert.Equal([new MembershipRepair(MembershipRepairKind.CompleteAdd, "C", C)], MembershipReconciler.Plan(state, [A, B, C], A));
        Assert.Equal([new MembershipRepair(MembershipRepairKind.ResumeAdd, "C", C)], MembershipReconciler.Plan(state, [A, B], A));
        // The reserved node itself, elected before its member entry committed, completes its own add.
        Assert.Equal([new MembershipRepair(MembershipRepairKind.CompleteAdd, "C", C)], MembershipReconciler.Plan(state, [A, B, C], C));
    }

    [Fact]
    public void AVoterWithoutATagIsRemovedAndAMemberRaftLacksIsAddedAgain()
    {
        // A remove stopped after the state dropped C: C is still a voter.
        Assert.Equal([new MembershipRepair(MembershipRepairKind.RemoveVoter, null, C)], MembershipReconciler.Plan(TwoMembers(), [A, B, C], A));
        // B in the state but not in Raft's configuration.
        Assert.Equal([new MembershipRepair(MembershipRepairKind.RestoreVoter, "B", B)], MembershipReconciler.Plan(TwoMembers(), [A], A));
    }

    [Fact]
    public void ALeaderTheStateNoLongerNamesStepsDownAndAFounderDoesNot()
    {
        // C was removed from the state, then elected before Raft removed it: a member must lead.
        Assert.Equal([new MembershipRepair(MembershipRepairKind.StepDown, null, C)], MembershipReconciler.Plan(TwoMembers(), [A, B, C], C));
        // A founder whose own member entry is not committed yet.
        Assert.Empty(MembershipReconciler.Plan(ClusterState.Empty, [A], A));
    }
}
