using Jackdaw.Client.Http;

namespace Jackdaw.Client.Tests.Http;

public sealed class NodeUrlsTests
{
    [Theory]
    [InlineData("https://db.example.com", "http://db.example.com")]
    [InlineData("https://proxy.example.com/jackdaw", "https://proxy.example.com")]
    [InlineData("http://proxy.example.com:8080", "http://10.0.0.7:8080")]
    public void ATopologyOfOneNodeKeepsTheUrlItWasAskedOf(string from, string named)
    {
        var topology = NodeUrls.Adopt(new Topology(3, [new ServerNode(named, "shop", "A", ServerNode.Role.Member)]), from, "shop");

        var node = Assert.Single(topology.Nodes);
        Assert.Equal(from, node.Url);
        Assert.Equal("A", node.ClusterTag);
        Assert.Equal("shop", node.Database);
        Assert.Equal(3, topology.Etag);
    }

    [Fact]
    public void ATopologyOfSeveralNodesIsTakenAsItIs()
    {
        var given = Cluster("http://10.0.0.7:8080", "http://10.0.0.8:8080");

        Assert.Same(given, NodeUrls.Adopt(given, "http://proxy.example.com", "shop"));
        var secured = Cluster("https://a.example.com", "https://b.example.com");
        Assert.Same(secured, NodeUrls.Adopt(secured, "https://a.example.com", "shop"));
    }

    [Theory]
    [InlineData("https://a.example.com", "http://a.example.com", "http://b.example.com", "over http")]
    [InlineData("https://a.example.com", "https://a.example.com", "http://b.example.com", "over http")]
    [InlineData("https://proxy.example.com/jackdaw", "https://a.example.com", "https://b.example.com", "another path")]
    [InlineData("http://a.example.com", "http://a.example.com/x", "http://b.example.com/x", "another path")]
    public void ATopologyThatLeavesHttpsOrThePathIsRefused(string from, string a, string b, string why)
    {
        var error = Assert.Throws<JackdawException>(() => NodeUrls.Adopt(Cluster(a, b), from, "shop"));

        Assert.Contains(why, error.Message);
        Assert.Contains("--public-url", error.Message);
    }

    [Theory]
    [InlineData("""{"Etag":4,"Nodes":[]}""")]
    [InlineData("{}")]
    public void ATopologyWithoutNodesIsAMissingDatabase(string body)
    {
        var parsed = RequestExecutor.ParseTopology(System.Text.Encoding.UTF8.GetBytes(body), "shop", "http://a.test");

        var error = Assert.Throws<DatabaseDoesNotExistException>(() => NodeUrls.Adopt(parsed, "http://a.test", "shop"));
        Assert.Contains("'shop'", error.Message);
    }

    [Theory]
    [InlineData("\"a string\"")]
    [InlineData("[]")]
    [InlineData("""{"Etag":1,"Nodes":[1,"x",null]}""")]
    public void AnAnswerThatIsNotATopologyIsAFailedFetch(string body)
    {
        // Not an exception of another kind, which would escape the store's failover.
        var error = Record.Exception(() => NodeUrls.Adopt(RequestExecutor.ParseTopology(System.Text.Encoding.UTF8.GetBytes(body), "shop", "http://a.test"), "http://a.test", "shop"));

        Assert.IsAssignableFrom<JackdawException>(error);
    }

    [Theory]
    [InlineData("http://h", "http://h:80", true)]
    [InlineData("http://h", "http://H/", true)]
    [InlineData("https://h", "https://h:443", true)]
    [InlineData("http://h", "https://h", false)]
    [InlineData("http://h:8080", "http://h:8081", false)]
    [InlineData("http://h/a", "http://h/b", false)]
    public void UrlsAreComparedAsUris(string a, string b, bool same) => Assert.Equal(same, NodeUrls.Same(a, b));

    private static Topology Cluster(string a, string b) =>
        new(1, [new ServerNode(a, "shop", "A", ServerNode.Role.Member), new ServerNode(b, "shop", "B", ServerNode.Role.Member)]);
}
