using System.Collections.Concurrent;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// The default path of a store on one server (topology updates on, as a user has them): the
/// topology is asked for once per database and costs nothing after that.
/// </summary>
public sealed class SingleServerTopologyTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    [Fact]
    public async Task AStoreOnOneServerAsksForTheTopologyOnceAndKeepsItsUrl()
    {
        var recorder = new RecordingHandler();
        using var store = await server.NewStoreAsync(s => s.HttpMessageHandlerFactory = () => recorder);

        for (var i = 0; i < 3; i++)
        {
            using var session = store.OpenAsyncSession();
            await session.StoreAsync(new User { Name = $"u{i}" }, $"users/{i}");
            await session.SaveChangesAsync();
            using var reader = store.OpenAsyncSession();
            Assert.Equal($"u{i}", (await reader.LoadAsync<User>($"users/{i}"))!.Name);
        }

        Assert.Equal([$"/topology?name={store.Database}"], recorder.Requests.Select(r => r.PathAndQuery).Where(p => p.StartsWith("/topology", StringComparison.Ordinal)));
        // Everything went to the store's URL, and nothing but what the calls asked: no health
        // checks, no client configuration (the server sends no header for it).
        Assert.All(recorder.Requests, r => Assert.StartsWith(server.Url + "/", r.Url));
        Assert.DoesNotContain(recorder.Requests, r => r.PathAndQuery.Contains("failure=check", StringComparison.Ordinal) || r.PathAndQuery.Contains("/configuration/client", StringComparison.Ordinal));
        Assert.Equal(1 + 1 + 6, recorder.Requests.Count); // create the database, the topology, three saves and three loads

        // The server answered the topology (not the store's URLs standing in, which are asked for again every 5 s).
        var node = Assert.Single((await store.GetTopologyAsync()).Nodes);
        Assert.Equal(server.Url, node.Url);
        Assert.Equal("A", node.ClusterTag);
        Assert.True(store.Executor.NodesOf(store.Database!).Selector!.Topology.Etag >= 0);
    }

    private sealed class RecordingHandler() : DelegatingHandler(new SocketsHttpHandler())
    {
        public ConcurrentQueue<(string Url, string PathAndQuery)> Requests { get; } = new();

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            Requests.Enqueue((request.RequestUri!.ToString(), request.RequestUri.PathAndQuery));
            return base.SendAsync(request, cancellationToken);
        }
    }
}
