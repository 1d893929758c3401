using Jackdaw.Server.Cluster;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// The leader's choice of the recorded auto-indexes to delete for idleness (<see cref="AutoIndexRetirement.Plan"/>):
/// only one every node of its database reports expired, for the definition the record holds.
/// </summary>
public sealed class AutoIndexRetirementTests
{
    private static readonly DateTime Now = new(2026, 11, 30, 12, 0, 0, DateTimeKind.Utc);
    private static readonly TimeSpan FreshFor = TimeSpan.FromMinutes(10);
    private static readonly IndexDefinition Auto = IndexDefinition.CreateAuto("Users", [new AutoIndexField("Name", FieldIndexing.Default)]);

    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return after;
    }

    /// <summary>Members A, B, C; database Shop on all three, with <see cref="Auto"/> in its record.</summary>
    private static ClusterState WithAutoIndex(IndexLockMode? lockMode = null)
    {
        var state = ClusterState.Empty;
        var log = 0L;
        foreach (var tag in new[] { "A", "B", "C" })
        {
            state = Apply(state, ++log, new ClusterCommand("m" + tag, ClusterCommandKind.PutMember) { Tag = tag, Url = $"http://127.0.0.1:{log}" });
        }
        state = Apply(state, ++log, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Shop", Nodes = ["A", "B", "C"] });
        return Apply(state, ++log, new ClusterCommand("auto", ClusterCommandKind.PutIndexes)
        {
            Database = "Shop",
            Indexes = [new ClusterIndexChange(Auto.Name) { Definition = Auto.ToJson().ToJsonString(), LockMode = lockMode }],
        });
    }

    private static AutoIndexUsageReport Report(string node, bool expired, DateTime? createdAt = null, TimeSpan? age = null) =>
        new(node, "shop", [new AutoIndexUsage(Auto.Name, createdAt ?? Auto.CreatedAt, Now - TimeSpan.FromDays(expired ? 8 : 1), expired)])
        {
            ReceivedAt = Now - (age ?? TimeSpan.FromSeconds(30)),
        };

    [Fact]
    public void AnAutoIndexEveryNodeReportsExpiredIsDeleted()
    {
        var plan = AutoIndexRetirement.Plan(WithAutoIndex(), [Report("A", true), Report("B", true), Report("C", true)], Now, FreshFor);

        Assert.Equal([("Shop", Auto.Name)], plan);
    }

    [Fact]
    public void AnAutoIndexOneNodeQueriedLatelyIsKept()
    {
        var plan = AutoIndexRetirement.Plan(WithAutoIndex(), [Report("A", true), Report("B", false), Report("C", true)], Now, FreshFor);

        Assert.Empty(plan);
    }

    [Fact]
    public void ANodeThatHasNotReportedOrWhoseReportIsOldCountsAsUsingIt()
    {
        var state = WithAutoIndex();

        Assert.Empty(AutoIndexRetirement.Plan(state, [Report("A", true), Report("B", true)], Now, FreshFor));
        Assert.Empty(AutoIndexRetirement.Plan(state, [Report("A", true), Report("B", true), Report("C", true, age: TimeSpan.FromMinutes(11))], Now, FreshFor));
        // A report that does not name the index (the node has not built it yet) keeps it too.
        var without = new AutoIndexUsageReport("C", "Shop", []) { ReceivedAt = Now };
        Assert.Empty(AutoIndexRetirement.Plan(state, [Report("A", true), Report("B", true), without], Now, FreshFor));
    }

    [Fact]
    public void AReportOfADefinitionReplacedSinceKeepsTheIndex()
    {
        // Node C's report was made when the record held an earlier definition under the name (deleted and made again since).
        var plan = AutoIndexRetirement.Plan(
            WithAutoIndex(), [Report("A", true), Report("B", true), Report("C", true, createdAt: Auto.CreatedAt - TimeSpan.FromDays(30))], Now, FreshFor);

        Assert.Empty(plan);
    }

    [Fact]
    public void ALockedAutoIndexOrOneOfADatabaseTheClusterDropsIsLeftAlone()
    {
        var reports = new[] { Report("A", true), Report("B", true), Report("C", true) };

        Assert.Empty(AutoIndexRetirement.Plan(WithAutoIndex(IndexLockMode.LockedIgnore), reports, Now, FreshFor));
        var dropped = Apply(WithAutoIndex(), 10, new ClusterCommand("drop", ClusterCommandKind.DeleteDatabase) { Database = "Shop" });
        Assert.Empty(AutoIndexRetirement.Plan(dropped, reports, Now, FreshFor));
    }
}
