using System.Text.Json;
using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Server.Hosting;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// A cluster for the client's failover tests, without a cluster: real Jackdaw servers on
/// 127.0.0.1 (port 0, temp folders), each holding the database with a document saying which
/// node it is (<c>users/node</c>, named by the node's tag; no replication), each behind a
/// <see cref="NodeProxy"/> that answers <c>GET /topology</c> with <see cref="Order"/> and
/// <see cref="Etag"/>. A read tells which node served it; a write, which server holds it.
/// </summary>
public sealed class TestCluster : IAsyncDisposable
{
    public const string Database = "shop";
    public const string NodeDocument = "users/node";

    private readonly List<(string Tag, JackdawHost Host, string DataDir)> _servers = [];
    private readonly Dictionary<string, NodeProxy> _nodes = new(StringComparer.Ordinal);

    /// <summary>The tags the topology lists, in order of preference.</summary>
    public List<string> Order { get; set; } = [];

    public long Etag { get; set; } = 1;

    /// <summary>
    /// The URL a node names itself by in the topology, where it is not its proxy's: a server behind
    /// a proxy names itself by the scheme and host its requests arrive with.
    /// </summary>
    public Dictionary<string, string> AdvertisedUrls { get; } = new(StringComparer.Ordinal);

    /// <summary>The database's client configuration the nodes give, with its etag (0 and none at first).</summary>
    public (long Etag, string Json) ClientConfiguration { get; set; } = (0, """{"Etag":0,"Configuration":null}""");

    public NodeProxy this[string tag] => _nodes[tag];

    public static async Task<TestCluster> StartAsync(params string[] tags)
    {
        var cluster = new TestCluster();
        try
        {
            foreach (var tag in tags)
            {
                var dataDir = Path.Combine(Path.GetTempPath(), $"jackdaw-cluster-{Guid.NewGuid():N}");
                Directory.CreateDirectory(dataDir);
                var host = JackdawHost.Create(["--urls", "http://127.0.0.1:0", "--data-dir", dataDir], builder => builder.Logging.ClearProviders());
                cluster._servers.Add((tag, host, dataDir));
                await host.StartAsync();
                using (var direct = DirectStore(host.Urls.Single()))
                {
                    await direct.Maintenance.CreateDatabaseAsync(Database);
                    using var session = direct.OpenAsyncSession();
                    await session.StoreAsync(new User { Name = tag }, NodeDocument);
                    await session.SaveChangesAsync();
                }

                cluster._nodes[tag] = await NodeProxy.StartAsync(tag, host.Urls.Single(), cluster.TopologyJson, () => cluster.ClientConfiguration);
                cluster.Order.Add(tag);
            }

            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>The URL of node <paramref name="tag"/>'s server itself, not its proxy.</summary>
    public string ServerUrl(string tag) => _servers.Single(s => s.Tag == tag).Host.Urls.Single();

    /// <summary>A store on the cluster, given the URLs of <paramref name="tags"/> (by default the first node's).</summary>
    public DocumentStore NewStore(Action<DocumentConventions>? conventions = null, params string[] tags)
    {
        var store = new DocumentStore
        {
            Urls = [.. (tags.Length == 0 ? [Order[0]] : tags).Select(t => _nodes[t].Url)],
            Database = Database,
        };
        conventions?.Invoke(store.Conventions);
        return store.Initialize();
    }

    /// <summary>The tag of the node that served a load of <see cref="NodeDocument"/> in a new session.</summary>
    public static async Task<string> ReadNodeAsync(DocumentStore store)
    {
        using var session = store.OpenAsyncSession();
        return (await session.LoadAsync<User>(NodeDocument))!.Name;
    }

    /// <summary>The tags of the servers that hold document <paramref name="id"/>.</summary>
    public async Task<List<string>> HoldersOfAsync(string id)
    {
        var holders = new List<string>();
        foreach (var (tag, host, _) in _servers)
        {
            using var direct = DirectStore(host.Urls.Single());
            using var session = direct.OpenAsyncSession(Database);
            if (await session.LoadAsync<User>(id) is not null)
            {
                holders.Add(tag);
            }
        }

        return holders;
    }

    /// <summary>Deletes the database on node <paramref name="tag"/>'s server: it answers 503 with <c>Database-Missing</c>.</summary>
    public async Task DeleteDatabaseOnAsync(string tag)
    {
        using var direct = DirectStore(ServerUrl(tag));
        await direct.Maintenance.DeleteDatabaseAsync(Database);
    }

    private string TopologyJson() => JsonSerializer.Serialize(new
    {
        Etag,
        Nodes = Order.Select(tag => new { Url = AdvertisedUrls.GetValueOrDefault(tag, _nodes[tag].Url), ClusterTag = tag, Database, ServerRole = "Member" }),
    });

    private static DocumentStore DirectStore(string url)
    {
        var store = new DocumentStore { Urls = [url], Database = Database };
        store.Conventions.DisableTopologyUpdates = true;
        return store.Initialize();
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var node in _nodes.Values)
        {
            await node.DisposeAsync();
        }

        foreach (var (_, host, dataDir) in _servers)
        {
            await host.DisposeAsync();
            try
            {
                Directory.Delete(dataDir, recursive: true);
            }
            catch (DirectoryNotFoundException)
            {
            }
        }
    }
}
