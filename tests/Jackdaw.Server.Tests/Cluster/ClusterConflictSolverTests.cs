using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>A clustered database's conflict solver is in its record: set through any node, every node resolves alike.</summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterConflictSolverTests
{
    private const string Database = "Orders";

    [Fact]
    public async Task ASolverSetThroughAFollowerKeepsTheSameConflictsOnEveryNode()
    {
        await using var cluster = await TestCluster.StartAsync(2);
        await ClusterDocuments.CreateDatabaseAsync(cluster, Database, replicationFactor: 2);
        var (a, b) = (cluster.Nodes[0], cluster.Nodes[1]);

        // Through B, which does not lead (RavenDB's ModifyConflictSolverOperation): committed in the record.
        using (var set = await cluster.Http.PostAsync($"{b.Url}/admin/replication/conflicts/solver?name={Database}", new StringContent("""{"ResolveToLatest":false,"ResolveByCollection":{}}""", Encoding.UTF8, "application/json")))
        {
            var text = await set.Content.ReadAsStringAsync();
            Assert.True(set.IsSuccessStatusCode, text);
            var result = JsonDocument.Parse(text).RootElement;
            Assert.Equal(Database, result.GetProperty("Key").GetString());
            Assert.True(result.GetProperty("RaftCommandIndex").GetInt64() > 0);
            Assert.False(result.GetProperty("Solver").GetProperty("ResolveToLatest").GetBoolean());
        }
        using (var scripts = await cluster.Http.PostAsync($"{b.Url}/admin/replication/conflicts/solver?name={Database}", new StringContent("""{"ResolveByCollection":{"Orders":{"Script":"return docs[0];"}}}""", Encoding.UTF8, "application/json")))
        {
            Assert.Equal(HttpStatusCode.NotImplemented, scripts.StatusCode);
        }

        await RevisionsConfiguredThroughAFollowerKeepTheSameRevisionsOnEveryNodeAsync(cluster, a, b);

        // Concurrent writes of the same ids: B's own are queued on its stopped sockets while A takes its.
        var ids = Enumerable.Range(0, 16).Select(i => $"conflicts/{i}").ToList();
        var queued = new List<Task<HttpResponseMessage>>();
        b.Pause();
        try
        {
            foreach (var id in ids)
            {
                queued.Add(cluster.Http.PutAsync($"{b.Url}/databases/{Database}/docs?id={id}", Body("B")));
            }
            foreach (var id in ids)
            {
                using var put = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/docs?id={id}", Body("A"));
                Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            }
        }
        finally
        {
            b.Resume();
        }
        foreach (var answer in await Task.WhenAll(queued))
        {
            Assert.Equal(HttpStatusCode.Created, answer.StatusCode);
            answer.Dispose();
        }

        // Kept for the user on both nodes (the default would have resolved them): the same ids on each.
        async Task<List<string>> ConflictsOn(ClusterNodeProcess node) =>
            [.. (await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/replication/conflicts")).GetProperty("Results")
                .EnumerateArray().Select(r => r.GetProperty("Id").GetString()!).Order(StringComparer.Ordinal)];
        await Poll.UntilAsync(async () => await ConflictsOn(a) is { Count: > 0 } onA && onA.SequenceEqual(await ConflictsOn(b)),
            ClusterDocuments.Converge, "the same conflicts kept on A and B");
    }

    /// <summary>
    /// The revisions configuration is in the record too: set through B (checked there first), every
    /// node applies it, so with a limit the nodes remove the same revisions (and the removals travel).
    /// </summary>
    private static async Task RevisionsConfiguredThroughAFollowerKeepTheSameRevisionsOnEveryNodeAsync(TestCluster cluster, ClusterNodeProcess a, ClusterNodeProcess b)
    {
        using (var bad = await cluster.Http.PostAsync($"{b.Url}/databases/{Database}/admin/revisions/config", new StringContent("""{"Default":{"MinimumRevisionsToKeep":-1}}""", Encoding.UTF8, "application/json")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        }
        using (var set = await cluster.Http.PostAsync($"{b.Url}/databases/{Database}/admin/revisions/config", new StringContent("""{"Collections":{"Users":{"MinimumRevisionsToKeep":2}}}""", Encoding.UTF8, "application/json")))
        {
            var text = await set.Content.ReadAsStringAsync();
            Assert.True(set.IsSuccessStatusCode, text);
            Assert.True(JsonDocument.Parse(text).RootElement.GetProperty("RaftCommandIndex").GetInt64() > 0);
        }
        foreach (var node in new[] { a, b })
        {
            var applied = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/revisions/config");
            Assert.Equal(2, applied.GetProperty("Collections").GetProperty("Users").GetProperty("MinimumRevisionsToKeep").GetInt64());
        }

        for (var v = 1; v <= 5; v++)
        {
            using var put = await cluster.Http.PutAsync($"{a.Url}/databases/{Database}/docs?id=users/1",
                new StringContent($$$"""{"V":{{{v}}},"@metadata":{"@collection":"Users"}}""", Encoding.UTF8, "application/json"));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        async Task<List<string>> RevisionsOn(ClusterNodeProcess node) =>
            [.. (await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{Database}/revisions?id=users/1")).GetProperty("Results")
                .EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@change-vector").GetString()!)];
        await Poll.UntilAsync(async () => await RevisionsOn(a) is { Count: 2 } onA && onA.SequenceEqual(await RevisionsOn(b)),
            ClusterDocuments.Converge, "the same two revisions of users/1 on A and B");
    }

    private static StringContent Body(string side) =>
        new($$$"""{"Side":"{{{side}}}","@metadata":{"@collection":"Orders"}}""", Encoding.UTF8, "application/json");
}
