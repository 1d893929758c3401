using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateConflictSolverTests
{
    [Fact]
    public void ASolverGoesIntoItsDatabasesRecordAndItsSnapshot()
    {
        var state = ClusterState.Empty
            .Apply(new ClusterCommand("m", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" }, 1).State
            .Apply(new ClusterCommand("d", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A"] }, 2).State;
        Assert.Null(state.Databases["Orders"].ConflictSolver);

        var (solved, refused) = state.Apply(new ClusterCommand("s", ClusterCommandKind.SetConflictSolver) { Database = "orders", ConflictSolver = """{"ResolveToLatest":false}""" }, 3);
        Assert.Null(refused);
        Assert.Equal("""{"ResolveToLatest":false}""", solved.Databases["Orders"].ConflictSolver);
        Assert.Equal(3, solved.Etag);
        Assert.Equal("""{"ResolveToLatest":false}""", ClusterState.FromJson(solved.ToJson()).Databases["Orders"].ConflictSolver);

        (_, refused) = state.Apply(new ClusterCommand("s2", ClusterCommandKind.SetConflictSolver) { Database = "Nope", ConflictSolver = "{}" }, 4);
        Assert.Equal("Database 'Nope' does not exist.", refused);
        (_, refused) = state.Apply(new ClusterCommand("s3", ClusterCommandKind.SetConflictSolver) { Database = "Orders", ConflictSolver = "[1]" }, 5);
        Assert.Contains("JSON object", refused);
    }
}
