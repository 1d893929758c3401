using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Patching;

/// <summary>
/// Patch by query over the 100,000 corpus orders while writers patch some of them, killed halfway
/// and then run again to the end, checked against a model: every order patched exactly once per
/// run that reached it, the killed run a prefix of whole batches, no write of the writers lost, no
/// half-written document. Loads both cores for several seconds, so it runs alone.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class PatchByQueryUnderLoadTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private const int Orders = 100_000;
    private const string Update = "from Orders update { this.Runs = (this.Runs || 0) + 1; this.Mark = 'run' + this.Runs; this.Freight += 1; }";

    private HttpClient Client => fixture.Client;

    [Fact]
    public async Task AKilledRunLeavesWholeBatchesAndASecondRunPatchesEveryOrderOnceMore()
    {
        var db = await fixture.CreateDatabaseAsync();
        var ids = await LoadCorpusAsync(db);
        var freight = (await ReadAllAsync(db)).ToDictionary(o => o.Id, o => o.Freight);

        // Writers: atomic increments of another field on random orders, counted in the model.
        var touched = new Dictionary<string, int>();
        using var stop = new CancellationTokenSource();
        var writers = Enumerable.Range(0, 2).Select(w => Task.Run(async () =>
        {
            var random = new Random(w);
            while (!stop.IsCancellationRequested)
            {
                var picked = Enumerable.Range(0, 20).Select(_ => ids[random.Next(ids.Count)]).ToList();
                var commands = string.Join(',', picked.Select(id => $"{{\"Type\":\"PATCH\",\"Id\":\"{id}\",\"Patch\":{{\"Script\":\"this.Touched = (this.Touched || 0) + 1;\"}}}}"));
                using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                lock (touched)
                {
                    foreach (var id in picked)
                    {
                        touched[id] = touched.GetValueOrDefault(id) + 1;
                    }
                }
            }
        })).ToList();

        // First run, killed once about a third is done.
        var first = await PatchByQueryTests.StartAsync(Client, HttpMethod.Patch, $"/databases/{db}/queries", "{\"Query\":{\"Query\":" + JsonSerializer.Serialize(Update) + "}}");
        await Poll.UntilAsync(async () => (await PatchByQueryTests.StateAsync(Client, db, first)) is var s
            && (s.GetProperty("Status").GetString() != "InProgress" || s.GetProperty("Progress").GetProperty("Processed").GetInt64() >= Orders / 3), TimeSpan.FromSeconds(60), "a third of the first run");
        using (var kill = await Client.PostAsync($"/databases/{db}/operations/kill?id={first}", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, kill.StatusCode);
        }
        var killed = await PatchByQueryTests.WaitAsync(Client, db, first);
        Assert.Equal("Canceled", killed.GetProperty("Status").GetString());
        var firstTotal = killed.GetProperty("Result").GetProperty("Total").GetInt64();
        Assert.InRange(firstTotal, Orders / 3, Orders - 1);
        Assert.Equal(0, firstTotal % 1024);

        var afterKill = await ReadAllAsync(db);
        Assert.Equal(firstTotal, afterKill.Count(o => o.Runs == 1));
        Assert.All(afterKill, o => Assert.InRange(o.Runs, 0, 1));

        // Second run, to the end.
        var second = await PatchByQueryTests.StartAsync(Client, HttpMethod.Patch, $"/databases/{db}/queries", "{\"Query\":{\"Query\":" + JsonSerializer.Serialize(Update) + "}}");
        var completed = await PatchByQueryTests.WaitAsync(Client, db, second, TimeSpan.FromSeconds(120));
        Assert.Equal("Completed", completed.GetProperty("Status").GetString());
        Assert.Equal(Orders, completed.GetProperty("Result").GetProperty("Total").GetInt64());
        stop.Cancel();
        await Task.WhenAll(writers);

        var end = await ReadAllAsync(db);
        Assert.Equal(Orders, end.Count);
        Assert.Equal(firstTotal, end.Count(o => o.Runs == 2));
        foreach (var order in end)
        {
            Assert.InRange(order.Runs, 1, 2);
            Assert.Equal("run" + order.Runs, order.Mark);
            Assert.Equal(freight[order.Id] + order.Runs, order.Freight, 6);
            Assert.Equal(touched.GetValueOrDefault(order.Id), order.Touched);
        }
    }

    private async Task<List<string>> LoadCorpusAsync(string db)
    {
        var ids = new List<string>(Orders);
        foreach (var chunk in Corpus.Lines("orders", Orders).Chunk(5_000))
        {
            var body = new StringBuilder();
            foreach (var line in chunk)
            {
                body.Append(line).Append('\n');
                using var document = JsonDocument.Parse(line);
                ids.Add(document.RootElement.GetProperty("@metadata").GetProperty("@id").GetString()!);
            }
            using var response = await Client.PostAsync($"/databases/{db}/bulk_insert", new StringContent(body.ToString(), Encoding.UTF8, "application/x-ndjson"));
            Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync());
        }
        Assert.Equal(Orders, ids.Count);
        return ids;
    }

    private sealed record Order(string Id, int Runs, string? Mark, double Freight, int Touched);

    /// <summary>
    /// Every order, once: a stream resumes after the last etag it sent in a fresh snapshot, so an
    /// order a writer changes while it streams comes again, newer (the last one seen wins).
    /// </summary>
    private async Task<List<Order>> ReadAllAsync(string db)
    {
        var query = Uri.EscapeDataString("from Orders select Runs, Mark, Freight, Touched");
        using var response = await Client.GetAsync($"/databases/{db}/streams/queries?query={query}");
        Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
        using var json = await JsonDocument.ParseAsync(await response.Content.ReadAsStreamAsync());
        return json.RootElement.GetProperty("Results").EnumerateArray().Select(r => new Order(
            r.GetProperty("@metadata").GetProperty("@id").GetString()!,
            r.TryGetProperty("Runs", out var runs) && runs.ValueKind == JsonValueKind.Number ? runs.GetInt32() : 0,
            r.TryGetProperty("Mark", out var mark) && mark.ValueKind == JsonValueKind.String ? mark.GetString() : null,
            r.GetProperty("Freight").GetDouble(),
            r.TryGetProperty("Touched", out var t) && t.ValueKind == JsonValueKind.Number ? t.GetInt32() : 0))
            .GroupBy(o => o.Id).Select(g => g.Last()).ToList();
    }
}
