using System.Collections.Concurrent;
using System.Net;
using System.Text;
using Jackdaw.Client.Http;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Http;

/// <summary>
/// How the store learns and keeps a topology and where its requests go, against a handler that
/// answers each URL as a test scripts it (no network).
/// </summary>
public sealed class TopologyUpdateTests
{
    private const string TwoNodes = """{"Etag":1,"Nodes":[{"Url":"http://a.test","ClusterTag":"A","Database":"db","ServerRole":"Member"},{"Url":"http://b.test","ClusterTag":"B","Database":"db","ServerRole":"Member"}]}""";

    [Fact]
    public async Task ASingleServerThatIsDownIsTriedOncePerRequest()
    {
        var handler = new ScriptedHandler(_ => throw new HttpRequestException(HttpRequestError.ConnectionError, "Connection refused (a.test)"));
        using var store = Store(handler, "http://a.test");

        await Assert.ThrowsAsync<ServerUnavailableException>(() => LoadAsync(store));
        Assert.Single(handler.Requests);

        // The failure is not kept: the next request asks for the topology again.
        await Assert.ThrowsAsync<ServerUnavailableException>(() => LoadAsync(store));
        Assert.Equal(2, handler.Requests.Count);
        Assert.All(handler.Requests, r => Assert.Equal("/topology?name=db", r.PathAndQuery));
    }

    [Fact]
    public async Task ATopologyWithoutNodesIsAMissingDatabaseAndIsAskedForAgain()
    {
        var topology = """{"Etag":1,"Nodes":[]}""";
        var handler = new ScriptedHandler(r => r.RequestUri!.AbsolutePath == "/topology" ? Json(topology) : new HttpResponseMessage(HttpStatusCode.NotFound));
        using var store = Store(handler, "http://a.test");

        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => store.GetTopologyAsync());

        topology = TwoNodes;
        Assert.Equal(["A", "B"], (await store.GetTopologyAsync()).Nodes.Select(n => n.ClusterTag));
    }

    [Fact]
    public async Task ARefreshThatFindsNoNodesKeepsTheTopology()
    {
        var topology = TwoNodes;
        var handler = new ScriptedHandler(_ => Json(topology));
        using var store = Store(handler, "http://a.test");
        Assert.Equal(2, (await store.GetTopologyAsync()).Nodes.Count);

        topology = """{"Etag":2,"Nodes":[]}""";
        var nodes = store.Executor.NodesOf("db");
        nodes.RefreshInBackground(null);
        await nodes.LastRefresh.WaitAsync(TimeSpan.FromSeconds(60));

        var held = await store.GetTopologyAsync();
        Assert.Equal(1, held.Etag);
        Assert.Equal(["A", "B"], held.Nodes.Select(n => n.ClusterTag));
    }

    [Fact]
    public async Task AServerWideRequestWhoseConnectionBrokeIsNotSentAgain()
    {
        var handler = new ScriptedHandler(r => r.RequestUri!.Host == "a.test" && r.Method == HttpMethod.Put
            ? throw new HttpRequestException(HttpRequestError.ResponseEnded, "The response ended prematurely.")
            : Json("{}"));
        using var store = Store(handler, "http://a.test", "http://b.test");

        await Assert.ThrowsAsync<ServerUnavailableException>(() => store.Maintenance.CreateDatabaseAsync("orders"));

        Assert.DoesNotContain(handler.Requests, r => r.Host == "b.test");
    }

    [Fact]
    public async Task AServerWideRequestGoesToTheNextUrlWhenTheConnectionIsRefused()
    {
        var handler = new ScriptedHandler(r => r.RequestUri!.Host == "a.test"
            ? throw new HttpRequestException(HttpRequestError.ConnectionError, "Connection refused (a.test)")
            : Json("""{"Databases":[]}"""));
        using var store = Store(handler, "http://a.test", "http://b.test");

        Assert.Empty(await store.Maintenance.GetDatabaseNamesAsync());

        Assert.Equal(["a.test", "b.test"], handler.Requests.Select(r => r.Host));
    }

    [Fact]
    public async Task AServerATopologyNamesAgainUnderAnotherSpellingIsTriedOnce()
    {
        // The topology names the store's URL with its default port: one server, not two.
        var handler = new ScriptedHandler(r => r.RequestUri!.AbsolutePath == "/topology"
            ? Json("""{"Etag":1,"Nodes":[{"Url":"http://a.test:80","ClusterTag":"A"},{"Url":"http://b.test","ClusterTag":"B"}]}""")
            : throw new HttpRequestException(HttpRequestError.ConnectionError, "Connection refused"));
        using var store = Store(handler, "http://a.test");
        await store.GetTopologyAsync();

        await Assert.ThrowsAsync<AllTopologyNodesDownException>(() => store.Maintenance.GetDatabaseNamesAsync());

        Assert.Equal(2, handler.Requests.Count(r => r.PathAndQuery.StartsWith("/databases?namesOnly=true", StringComparison.Ordinal)));
    }

    [Fact]
    public async Task ARaceAfterTheTopologyChangedAnswersWithTheChosenNode()
    {
        var handler = new ScriptedHandler(r => Json(r.RequestUri!.AbsolutePath == "/topology" ? TwoNodes : "\"" + r.RequestUri!.Host + "\""));
        using var store = Store(handler, "http://a.test", "http://b.test");
        var nodes = store.Executor.NodesOf("db");
        var selector = await nodes.GetSelectorAsync(CancellationToken.None);
        var chosen = selector.GetPreferredNode().Node;
        Assert.Equal("http://a.test", chosen.Url);

        // A refresh swaps the topology between the choice and the race.
        Assert.True(selector.TryUpdate(new Topology(2, [new ServerNode("http://b.test", "db", "B", ServerNode.Role.Member), new ServerNode("http://a.test", "db", "A", ServerNode.Role.Member)]), force: false));
        using var client = new HttpClient(handler, disposeHandler: false);
        var attempt = new RequestExecutor.Attempt(client, HttpCompletionOption.ResponseContentRead, null, HttpMethod.Get, "/databases/db/stats", null, null);
        var (response, failure) = await store.Executor.RaceAsync(nodes, selector, chosen, attempt, CancellationToken.None);

        Assert.Null(failure);
        using (response)
        {
            Assert.Equal("\"a.test\"", await response!.Content.ReadAsStringAsync());
        }
    }

    private static DocumentStore Store(ScriptedHandler handler, params string[] urls) =>
        new DocumentStore { Urls = urls, Database = "db", HttpMessageHandlerFactory = () => handler }.Initialize();

    private static async Task LoadAsync(DocumentStore store)
    {
        using var session = store.OpenAsyncSession();
        await session.LoadAsync<User>("users/1");
    }

    private static HttpResponseMessage Json(string json) => new(HttpStatusCode.OK) { Content = new StringContent(json, Encoding.UTF8, "application/json") };

    /// <summary>Records each request's host and path, and answers (or throws) as the test says.</summary>
    private sealed class ScriptedHandler(Func<HttpRequestMessage, HttpResponseMessage> answer) : HttpMessageHandler
    {
        public ConcurrentQueue<(string Host, string PathAndQuery)> Requests { get; } = new();

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            Requests.Enqueue((request.RequestUri!.Host, request.RequestUri.PathAndQuery));
            return Task.FromResult(answer(request));
        }
    }
}
