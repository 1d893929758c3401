using System.Net.Http.Json;
using System.Text.Json;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// A database of a <see cref="TestCluster"/> as its nodes hold it: created through the cluster and
/// waited for on every node, read whole from each node, and compared until every node holds the
/// same documents with the same bodies, metadata and change vectors.
/// </summary>
public static class ClusterDocuments
{
    /// <summary>Long: a node that was killed or paused catches up on a loaded 2-core machine.</summary>
    public static readonly TimeSpan Converge = TimeSpan.FromSeconds(120);

    /// <summary>Creates <paramref name="database"/> with a replication factor through node 0 and waits until every node holds it.</summary>
    public static async Task CreateDatabaseAsync(TestCluster cluster, string database, int replicationFactor = 3)
    {
        using var created = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases?name={database}&replicationFactor={replicationFactor}", null);
        Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains(database), TestCluster.Timeout, $"{database} on {node.Url}");
        }
    }

    /// <summary>
    /// Waits until every node holds the same documents with the same change vectors and bodies,
    /// and answers them (id → the document's JSON) as node 0 has them.
    /// </summary>
    public static async Task<Dictionary<string, string>> ConvergedAsync(TestCluster cluster, string database)
    {
        Dictionary<string, string>? first = null;
        var differences = "";
        try
        {
            await Poll.UntilAsync(async () =>
            {
                var all = new List<Dictionary<string, string>>();
                foreach (var node in cluster.Nodes)
                {
                    all.Add(await DocumentsAsync(cluster, node, database));
                }
                first = all[0];
                differences = string.Join("; ", all.Skip(1).Select((other, i) => Difference(first, other, i + 1)).Where(d => d.Length > 0));
                return differences.Length == 0;
            }, Converge, "every node to hold the same documents");
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} Still different: {differences}", e);
        }
        return first!;
    }

    /// <summary>Every document of the database on one node: id → its whole JSON (metadata and change vector included).</summary>
    public static async Task<Dictionary<string, string>> DocumentsAsync(TestCluster cluster, ClusterNodeProcess node, string database)
    {
        var documents = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        var start = 0;
        while (true)
        {
            var page = await cluster.Http.GetFromJsonAsync<JsonElement>($"{node.Url}/databases/{database}/docs?start={start}&pageSize=1000");
            var results = page.GetProperty("Results");
            foreach (var document in results.EnumerateArray())
            {
                var metadata = document.GetProperty("@metadata");
                documents[metadata.GetProperty("@id").GetString()!] = document.GetRawText();
            }
            if (results.GetArrayLength() < 1000)
            {
                return documents;
            }
            start += 1000;
        }
    }

    private static string Difference(Dictionary<string, string> a, Dictionary<string, string> b, int node)
    {
        var missing = a.Keys.Except(b.Keys).ToList();
        var extra = b.Keys.Except(a.Keys).ToList();
        var changed = a.Keys.Intersect(b.Keys).Where(k => a[k] != b[k]).ToList();
        return missing.Count + extra.Count + changed.Count == 0
            ? ""
            : $"node {node}: {missing.Count} missing [{string.Join(", ", missing.Take(3))}], {extra.Count} extra [{string.Join(", ", extra.Take(3))}], {changed.Count} different [{string.Join(", ", changed.Take(3))}]";
    }
}
