using System.Net.Http.Json;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Replication;

/// <summary>
/// A few in-process servers, each one node (tag A, B, C...) holding the same database, wired to
/// each other with SetTopology as the cluster does. A node can be stopped and started again on its
/// data folder (a new port: the topology is set again everywhere).
/// </summary>
public sealed class ReplicationNodes : IAsyncDisposable
{
    public const string Database = "Repl";

    private readonly List<TempFolder> _folders = [];
    private readonly InProcessServer?[] _servers;
    private readonly string[] _tags;
    private readonly Dictionary<int, string?> _urls = [];

    private ReplicationNodes(string[] tags)
    {
        _tags = tags;
        _servers = new InProcessServer?[tags.Length];
        foreach (var _ in tags)
        {
            _folders.Add(new TempFolder("jackdaw-replication"));
        }
    }

    public int Count => _tags.Length;

    public static async Task<ReplicationNodes> StartAsync(bool wired, params string[] tags)
    {
        var nodes = new ReplicationNodes(tags);
        try
        {
            for (var i = 0; i < tags.Length; i++)
            {
                await nodes.StartNodeAsync(i);
                using var created = await nodes.Client(i).PutAsync($"/admin/databases?name={Database}", null);
                created.EnsureSuccessStatusCode();
            }
            if (wired)
            {
                nodes.Wire();
            }
        }
        catch
        {
            await nodes.DisposeAsync();
            throw;
        }
        return nodes;
    }

    public InProcessServer Server(int node) => _servers[node] ?? throw new InvalidOperationException($"Node {_tags[node]} is stopped.");

    public HttpClient Client(int node) => Server(node).Client;

    public string Tag(int node) => _tags[node];

    public Jackdaw.Server.Databases.DocumentDatabase DatabaseOf(int node) => Server(node).Host.Server.Databases.GetDatabase(Database);

    public ReplicationStats StatsOf(int node) => DatabaseReplication.Of(DatabaseOf(node)).Stats;

    /// <summary>Gives every running node the others as its destinations (the stopped ones at their last URL).</summary>
    public void Wire()
    {
        for (var i = 0; i < Count; i++)
        {
            if (_servers[i] is not { } server)
            {
                continue;
            }
            var others = Enumerable.Range(0, Count).Where(j => j != i && _urls.GetValueOrDefault(j) is not null)
                .Select(j => new ReplicationNode(_tags[j], _urls[j]!)).ToList();
            server.Host.Server.Replication.SetTopology(Database, _tags[i], others);
        }
    }

    private async Task StartNodeAsync(int node)
    {
        var tag = _tags[node];
        _servers[node] = await InProcessServer.StartInFolderAsync(_folders[node].Path, options => options.Database = options.Database with { NodeTag = tag });
        _urls[node] = _servers[node]!.Client.BaseAddress!.ToString().TrimEnd('/');
    }

    public async Task StopAsync(int node)
    {
        if (_servers[node] is { } server)
        {
            _servers[node] = null;
            await server.DisposeAsync();
        }
    }

    /// <summary>Starts a stopped node again on its folder and sets the topology everywhere (its URL changed).</summary>
    public async Task StartAgainAsync(int node)
    {
        await StartNodeAsync(node);
        Wire();
    }

    public async Task PutAsync(int node, string id, object body)
    {
        using var response = await Client(node).PutAsJsonAsync($"/databases/{Database}/docs?id={Uri.EscapeDataString(id)}", body);
        response.EnsureSuccessStatusCode();
    }

    public async Task DeleteAsync(int node, string id)
    {
        using var response = await Client(node).DeleteAsync($"/databases/{Database}/docs?id={Uri.EscapeDataString(id)}");
        response.EnsureSuccessStatusCode();
    }

    /// <summary>Every document of a node: id (lowercased) → its JSON (metadata included) and change vector.</summary>
    public Dictionary<string, (string Json, string ChangeVector)> Documents(int node)
    {
        var database = DatabaseOf(node);
        var result = new Dictionary<string, (string, string)>(StringComparer.Ordinal);
        using var reader = database.BeginRead();
        foreach (var record in reader.GetDocumentsFrom(null, 0))
        {
            var json = new System.Buffers.ArrayBufferWriter<byte>();
            BlittableJsonWriter.WriteTo(record.Document, json);
            result[record.Id.ToLowerInvariant()] = (System.Text.Encoding.UTF8.GetString(json.WrittenSpan), record.ChangeVectorOr(database.DatabaseId));
        }
        return result;
    }

    /// <summary>How the nodes differ (null when every document and change vector is the same on all of them).</summary>
    public string? Difference()
    {
        var first = Documents(0);
        for (var i = 1; i < Count; i++)
        {
            var other = Documents(i);
            foreach (var (id, version) in first)
            {
                if (!other.TryGetValue(id, out var theirs))
                {
                    return $"{id} is on {_tags[0]} but not on {_tags[i]}";
                }
                if (theirs != version)
                {
                    return $"{id} differs: {_tags[0]} {version.ChangeVector} {version.Json} / {_tags[i]} {theirs.ChangeVector} {theirs.Json}";
                }
            }
            foreach (var id in other.Keys)
            {
                if (!first.ContainsKey(id))
                {
                    return $"{id} is on {_tags[i]} but not on {_tags[0]}";
                }
            }
        }
        return null;
    }

    /// <summary>Waits until every node holds the same documents with the same change vectors.</summary>
    public async Task WaitConvergedAsync(TimeSpan? timeout = null)
    {
        string? last = null;
        try
        {
            await Poll.UntilAsync(() => Task.FromResult((last = Difference()) is null), timeout ?? TimeSpan.FromSeconds(60), "the nodes to converge");
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} Last difference: {last}. Senders: {Senders()}", e);
        }
    }

    public string Senders() => string.Join("; ", Enumerable.Range(0, Count).Where(i => _servers[i] is not null)
        .SelectMany(i => _servers[i]!.Host.Server.Replication.Outgoing(Database)
            .Select(s => $"{_tags[i]}->{s.Destination.Tag} acked {s.AcknowledgedEtag} connected {s.Connected} error {s.LastError}")));

    public static JsonElement Json(string text) => JsonDocument.Parse(text).RootElement;

    public async ValueTask DisposeAsync()
    {
        for (var i = 0; i < Count; i++)
        {
            await StopAsync(i);
        }
        foreach (var folder in _folders)
        {
            folder.Dispose();
        }
    }
}
