using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateRevisionsTests
{
    private static ClusterState WithOrders() => ClusterState.Empty
        .Apply(new ClusterCommand("m", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" }, 1).State
        .Apply(new ClusterCommand("d", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A"] }, 2).State;

    [Fact]
    public void ARevisionsConfigurationGoesIntoItsDatabasesRecordNormalizedAndIntoItsSnapshot()
    {
        var state = WithOrders();
        Assert.Null(state.Databases["Orders"].RevisionsConfiguration);

        var (configured, refused) = state.Apply(new ClusterCommand("r", ClusterCommandKind.SetRevisionsConfiguration)
        {
            Database = "orders",
            Revisions = """{"Default":{"MinimumRevisionsToKeep":2,"PurgeOnDelete":true}}""",
        }, 3);
        Assert.Null(refused);
        Assert.Equal(3, configured.Etag);
        var stored = configured.Databases["Orders"].RevisionsConfiguration;
        // As the database stores it (every property written), so each node compares its copy's byte for byte.
        Assert.Equal("""{"Default":{"Disabled":false,"MinimumRevisionsToKeep":2,"MinimumRevisionAgeToKeep":null,"PurgeOnDelete":true,"MaximumRevisionsToDeleteUponDocumentUpdate":null},"Collections":{}}""", stored);
        Assert.Null(configured.Databases["Orders"].RevisionsConflictsConfiguration);
        var restored = ClusterState.FromJson(configured.ToJson()).Databases["Orders"];
        Assert.Equal(stored, restored.RevisionsConfiguration);
        Assert.Null(restored.RevisionsConflictsConfiguration);

        var (conflicts, refusedConflicts) = configured.Apply(new ClusterCommand("c", ClusterCommandKind.SetRevisionsConflictsConfiguration)
        {
            Database = "Orders",
            Revisions = """{"MinimumRevisionsToKeep":5}""",
        }, 4);
        Assert.Null(refusedConflicts);
        Assert.Equal(stored, conflicts.Databases["Orders"].RevisionsConfiguration);
        Assert.Contains("\"MinimumRevisionsToKeep\":5", conflicts.Databases["Orders"].RevisionsConflictsConfiguration);
        Assert.Equal(conflicts.Databases["Orders"].RevisionsConflictsConfiguration, ClusterState.FromJson(conflicts.ToJson()).Databases["Orders"].RevisionsConflictsConfiguration);
    }

    [Theory]
    [InlineData("Nope", """{"Default":{}}""", "Database 'Nope' does not exist.")]
    [InlineData("Orders", "[1]", "JSON object")]
    [InlineData("Orders", "{", "not valid JSON")]
    [InlineData("Orders", """{"Default":{"MinimumRevisionsToKeep":-1}}""", "MinimumRevisionsToKeep")]
    public void AnInvalidRevisionsConfigurationIsRefusedAndChangesNothing(string database, string json, string message)
    {
        var state = WithOrders();
        var (after, refused) = state.Apply(new ClusterCommand("r", ClusterCommandKind.SetRevisionsConfiguration) { Database = database, Revisions = json }, 3);
        Assert.Contains(message, refused);
        Assert.Equal(state.Etag, after.Etag);
        Assert.Null(after.Databases["Orders"].RevisionsConfiguration);

        (after, refused) = state.Apply(new ClusterCommand("c", ClusterCommandKind.SetRevisionsConflictsConfiguration) { Database = "Orders", Revisions = "[1]" }, 3);
        Assert.Contains("JSON object", refused);
        Assert.Null(after.Databases["Orders"].RevisionsConflictsConfiguration);
    }
}
