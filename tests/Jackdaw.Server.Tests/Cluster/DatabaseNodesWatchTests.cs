using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>The leader's plan for database nodes that stop answering (<see cref="DatabaseNodesWatch"/>).</summary>
public sealed class DatabaseNodesWatchTests
{
    private static readonly TimeSpan MentorDownAfter = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan RehabAfter = TimeSpan.FromSeconds(60);

    /// <summary>Members A, B, C; Orders on A and B (members) with C a promotable of A.</summary>
    private static ClusterState State()
    {
        var state = ClusterState.Empty;
        foreach (var (tag, i) in new[] { ("A", 1), ("B", 2), ("C", 3) })
        {
            state = state.Apply(new ClusterCommand($"m{tag}", ClusterCommandKind.PutMember) { Tag = tag, Url = $"http://127.0.0.1:{i}" }, i).State;
        }
        state = state.Apply(new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A", "B"] }, 4).State;
        return state.Apply(new ClusterCommand("add", ClusterCommandKind.AddDatabaseNode) { Database = "Orders", Tag = "C", Mentor = "A" }, 5).State;
    }

    private static Func<string, TimeSpan?> Down(params (string Tag, int Seconds)[] down) =>
        tag => down.Where(d => d.Tag == tag).Select(d => (TimeSpan?)TimeSpan.FromSeconds(d.Seconds)).FirstOrDefault();

    private static IEnumerable<string> Planned(Func<string, TimeSpan?> downFor) =>
        DatabaseNodesWatch.Plan(State(), downFor, MentorDownAfter, RehabAfter).Select(c => $"{c.Kind} {c.Database} {c.Tag} {c.Mentor}");

    [Fact]
    public void NothingChangesWhileEveryNodeAnswersOrWasDownOnlyBriefly()
    {
        Assert.Empty(Planned(Down()));
        Assert.Empty(Planned(Down(("A", 2), ("B", 59))));
    }

    [Fact]
    public void APromotableWhoseMentorIsDownGetsTheFirstMemberThatAnswers()
    {
        Assert.Equal(["SetDatabaseNodeMentor Orders C B"], Planned(Down(("A", 3))));
    }

    [Fact]
    public void AMemberDownForLongIsDemotedToARehabButNotWhenNoMemberAnswers()
    {
        Assert.Equal(["DemoteDatabaseNode Orders B A"], Planned(Down(("B", 60))));
        Assert.Equal(["SetDatabaseNodeMentor Orders C B", "DemoteDatabaseNode Orders A B"], Planned(Down(("A", 61))));
        Assert.Empty(Planned(Down(("A", 61), ("B", 61))));
    }

    [Fact]
    public void WhenNoMemberHasAnsweredForLongTheFirstRehabThatAnswersIsMadeAMemberAndThenTheDownOnesAreDemoted()
    {
        // B demoted (down), then back while A, the last member, goes down: B is a rehab that answers.
        var state = State().Apply(new ClusterCommand("d", ClusterCommandKind.DemoteDatabaseNode) { Database = "Orders", Tag = "B", Mentor = "A" }, 6).State;
        Assert.Equal(["A"], state.Databases["Orders"].Members);
        IEnumerable<string> Plan(ClusterState s, Func<string, TimeSpan?> downFor) =>
            DatabaseNodesWatch.Plan(s, downFor, MentorDownAfter, RehabAfter).Select(c => $"{c.Kind} {c.Database} {c.Tag} {c.Mentor}");

        // A down briefly: its rehabs wait (and their mentor is replaced by no one: none answers).
        Assert.Empty(Plan(state, Down(("A", 59))));
        // Down for long, with B down as well: nothing to do.
        Assert.Empty(Plan(state, Down(("A", 61), ("B", 5))));
        // Never the promotable C, whose copy was never whole.
        Assert.Empty(Plan(state, Down(("A", 61), ("B", 61))));
        Assert.Equal(["PromoteAnsweringRehab Orders B "], Plan(state, Down(("A", 61))));

        var rescued = state.Apply(new ClusterCommand("r", ClusterCommandKind.PromoteAnsweringRehab) { Database = "Orders", Tag = "B" }, 7).State;
        var record = rescued.Databases["Orders"];
        Assert.Equal(["A", "B"], record.Members);
        Assert.Equal(7, record.TopologyEtag);
        // The next round: B answers, so C's mentor is B and A is demoted, mentored by B.
        Assert.Equal(["SetDatabaseNodeMentor Orders C B", "DemoteDatabaseNode Orders A B"], Plan(rescued, Down(("A", 62))));

        // Only a rehab may be rescued.
        Assert.Equal("Node 'C' is not a rehab of database 'Orders'.", state.Apply(new ClusterCommand("x", ClusterCommandKind.PromoteAnsweringRehab) { Database = "Orders", Tag = "C" }, 8).Refused);
        Assert.Equal("Node 'A' is not a rehab of database 'Orders'.", state.Apply(new ClusterCommand("y", ClusterCommandKind.PromoteAnsweringRehab) { Database = "Orders", Tag = "A" }, 8).Refused);
    }
}
