using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// Index positions live in the Lucene commit: after a kill -9 at any moment of indexing the index
/// resumes from its last commit and ends with every document exactly once; after a clean restart it
/// re-indexes nothing.
/// </summary>
public sealed class IndexDurabilityTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    private static async Task PutBatchAsync(HttpClient client, string db, IEnumerable<(string Id, int? Group)> changes)
    {
        var commands = string.Join(',', changes.Select(c => c.Group is { } g
            ? $"{{\"Type\":\"PUT\",\"Id\":\"{c.Id}\",\"Document\":{{\"Group\":{g},\"Name\":\"item {c.Id}\",\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"
            : $"{{\"Type\":\"DELETE\",\"Id\":\"{c.Id}\"}}"));
        using var response = await client.PostAsync($"/databases/{db}/bulk_docs", new StringContent("{\"Commands\":[" + commands + "]}", Encoding.UTF8, "application/json"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    private static async Task<JsonElement> QueryAsync(HttpClient client, string db, string rql, bool wait = true)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = wait, WaitForNonStaleResultsTimeout = "00:02:00" });
        using var response = await client.PostAsync($"/databases/{db}/queries", new StringContent(body, Encoding.UTF8, "application/json"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        return json;
    }

    private static async Task<JsonElement> StatsAsync(HttpClient client, string db)
    {
        using var response = await client.GetAsync($"/databases/{db}/indexes/stats");
        return (await Api.JsonAsync(response)).GetProperty("Results");
    }

    [Fact]
    public async Task AKillDuringIndexingResumesWithEveryDocumentOnce()
    {
        using var data = new TempFolder();
        var model = new Dictionary<string, int>(StringComparer.OrdinalIgnoreCase);
        var random = new Random(18);
        var next = 0;
        var killedWhileStale = 0;
        for (var round = 0; round < 3; round++)
        {
            using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
            using var client = new HttpClient { BaseAddress = await server.WaitForAddressAsync(StartTimeout), Timeout = TimeSpan.FromSeconds(60) };
            if (round == 0)
            {
                using var created = await client.PutAsync("/admin/databases?name=Crash", null);
                Assert.Equal(HttpStatusCode.Created, created.StatusCode);
            }

            // New documents, updates that move documents between groups, deletes: each batch is
            // acknowledged (durable) before the model takes it.
            for (var batch = 0; batch < 8; batch++)
            {
                var changes = new List<(string, int?)>();
                for (var i = 0; i < 2500; i++)
                {
                    var roll = random.Next(10);
                    if (roll < 7 || model.Count < 100)
                    {
                        changes.Add(($"items/{next++}", random.Next(10)));
                    }
                    else
                    {
                        var id = model.Keys.ElementAt(random.Next(model.Count));
                        changes.Add((id, roll < 9 ? random.Next(10) : null));
                    }
                }
                await PutBatchAsync(client, "Crash", changes);
                foreach (var (id, group) in changes)
                {
                    if (group is { } g)
                    {
                        model[id] = g;
                    }
                    else
                    {
                        model.Remove(id);
                    }
                }
                if (round == 0 && batch == 0)
                {
                    // The query creates the auto-index; it indexes while the writes go on.
                    await QueryAsync(client, "Crash", "from Items where Group = 1", wait: false);
                }
            }

            // Kill at some moment of the indexing that follows the writes.
            await Task.Delay(random.Next(50, 1500));
            var stats = await StatsAsync(client, "Crash");
            if (stats.GetArrayLength() > 0 && stats[0].GetProperty("IsStale").GetBoolean())
            {
                killedWhileStale++;
            }
            server.KillHard();
            await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
        }

        using var final = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        using var finalClient = new HttpClient { BaseAddress = await final.WaitForAddressAsync(StartTimeout), Timeout = TimeSpan.FromMinutes(3) };
        for (var group = 0; group < 10; group++)
        {
            var answer = await QueryAsync(finalClient, "Crash", $"from Items where Group = {group}");
            Assert.Equal("Auto/Items/ByGroup", answer.GetProperty("IndexName").GetString());
            var ids = answer.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()!).ToList();
            var expected = model.Where(p => p.Value == group).Select(p => p.Key).ToHashSet(StringComparer.OrdinalIgnoreCase);
            Assert.Equal(expected.Count, answer.GetProperty("TotalResults").GetInt64());
            Assert.Equal(0, answer.GetProperty("SkippedResults").GetInt64());
            Assert.Equal(ids.Count, ids.Distinct(StringComparer.OrdinalIgnoreCase).Count());
            Assert.True(expected.SetEquals(ids), $"group {group}: {expected.Except(ids).Count()} missing, {ids.Except(expected).Count()} extra");
        }
        var entries = (await StatsAsync(finalClient, "Crash"))[0].GetProperty("EntriesCount").GetInt64();
        Assert.Equal(model.Count, entries);
        Assert.True(killedWhileStale > 0, "no kill happened while the index was behind; the test proved less than it should");
        final.SendSigterm();
        await final.WaitForExitAsync(TimeSpan.FromSeconds(30));
    }

    [Fact]
    public async Task ACleanRestartReindexesNothing()
    {
        using var data = new TempFolder();
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            using (await server.Client.PutAsync("/admin/databases?name=Keep", null))
            {
            }
            await PutBatchAsync(server.Client, "Keep", Enumerable.Range(0, 3000).Select(i => ($"items/{i}", (int?)(i % 10))));
            var answer = await QueryAsync(server.Client, "Keep", "from Items where Group = 3");
            Assert.Equal(300, answer.GetProperty("TotalResults").GetInt64());
        }

        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            var answer = await QueryAsync(server.Client, "Keep", "from Items where Group = 3");
            Assert.Equal(300, answer.GetProperty("TotalResults").GetInt64());
            Assert.False(answer.GetProperty("IsStale").GetBoolean());
            var stats = (await StatsAsync(server.Client, "Keep"))[0];
            Assert.Equal("Auto/Items/ByGroup", stats.GetProperty("Name").GetString());
            Assert.Equal(0, stats.GetProperty("DocumentsMappedSinceOpen").GetInt64());
            Assert.Equal(3000, stats.GetProperty("EntriesCount").GetInt64());

            // It goes on from there: a new document is indexed, nothing else.
            await PutBatchAsync(server.Client, "Keep", [("items/new", 3)]);
            answer = await QueryAsync(server.Client, "Keep", "from Items where Group = 3");
            Assert.Equal(301, answer.GetProperty("TotalResults").GetInt64());
            Assert.Equal(1, (await StatsAsync(server.Client, "Keep"))[0].GetProperty("DocumentsMappedSinceOpen").GetInt64());
        }
    }
}
