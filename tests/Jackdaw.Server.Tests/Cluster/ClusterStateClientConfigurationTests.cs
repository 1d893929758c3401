using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateClientConfigurationTests
{
    [Fact]
    public void AClientConfigurationIsServerWideInTheStateOrInItsDatabasesRecordWithTheIndexThatSetIt()
    {
        var state = ClusterState.Empty
            .Apply(new ClusterCommand("m", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" }, 1).State
            .Apply(new ClusterCommand("d", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A"] }, 2).State;
        state = state.Apply(new ClusterCommand("s", ClusterCommandKind.PutClientConfiguration) { ClientConfiguration = """{"ReadBalanceBehavior":"FastestNode"}""" }, 3).State;
        state = state.Apply(new ClusterCommand("o", ClusterCommandKind.PutClientConfiguration) { Database = "orders", ClientConfiguration = """{"Disabled":true}""" }, 4).State;
        Assert.Equal(new ClusterClientConfiguration("""{"ReadBalanceBehavior":"FastestNode"}""", 3), state.ClientConfiguration);
        Assert.Equal(new ClusterClientConfiguration("""{"Disabled":true}""", 4), state.Databases["Orders"].ClientConfiguration);

        var restored = ClusterState.FromJson(state.ToJson());
        Assert.Equal(state.ClientConfiguration, restored.ClientConfiguration);
        Assert.Equal(state.Databases["Orders"].ClientConfiguration, restored.Databases["Orders"].ClientConfiguration);
        Assert.Equal(state.ClientConfiguration, state.WithoutAppliedIds().ClientConfiguration);

        var (_, refused) = state.Apply(new ClusterCommand("n", ClusterCommandKind.PutClientConfiguration) { Database = "Nope", ClientConfiguration = "{}" }, 5);
        Assert.Equal("Database 'Nope' does not exist.", refused);
    }
}
