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
}
