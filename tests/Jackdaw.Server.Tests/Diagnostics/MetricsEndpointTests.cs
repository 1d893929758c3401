using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Changes;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Tests.Subscriptions;

namespace Jackdaw.Server.Tests.Diagnostics;

/// <summary><c>GET /metrics</c> against the real server, read by a strict Prometheus text parser.</summary>
public sealed class MetricsEndpointTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(60);

    /// <summary>Every series docs/architecture.md names ("Metrics and tracing"), as it is named there.</summary>
    public static readonly string[] DesignSeries =
    [
        "jackdaw_http_requests_total", "jackdaw_http_request_duration_seconds", "jackdaw_http_request_bytes_total",
        "jackdaw_http_response_bytes_total", "jackdaw_merger_batch_size", "jackdaw_merger_commit_duration_seconds",
        "jackdaw_storage_journal_bytes", "jackdaw_storage_data_bytes", "jackdaw_disk_free_bytes", "jackdaw_documents",
        "jackdaw_index_entries", "jackdaw_index_lag_documents", "jackdaw_index_lag_seconds", "jackdaw_index_batch_duration_seconds",
        "jackdaw_index_errors", "jackdaw_subscription_lag_documents", "jackdaw_subscription_workers", "jackdaw_changes_connections",
    ];

    internal static async Task<Dictionary<string, PrometheusTextParser.Family>> ScrapeAsync(HttpClient client)
    {
        using var response = await client.GetAsync("/metrics");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        return PrometheusTextParser.Parse(await response.Content.ReadAsStringAsync());
    }

    private static async Task CreateDatabaseAsync(HttpClient client, string name)
    {
        using var response = await client.PutAsync($"/admin/databases?name={name}", null);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private static async Task PutAsync(HttpClient client, string db, string id, string json)
    {
        using var response = await client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private static async Task QueryAsync(HttpClient client, string db, string query)
    {
        using var response = await client.PostAsync($"/databases/{db}/queries?waitForNonStaleResultsTimeout=00:00:30", Api.Json(JsonSerializer.Serialize(new { Query = query, WaitForNonStaleResults = true })));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    /// <summary>A PUT, a GET, a query through an index, a subscription with a worker and a changes connection.</summary>
    internal static async Task<IAsyncDisposable> ExerciseAsync(HttpClient client, string db)
    {
        await CreateDatabaseAsync(client, db);
        for (var i = 1; i <= 5; i++)
        {
            await PutAsync(client, db, $"orders/{i}", $"{{\"Freight\":{i * 10},\"@metadata\":{{\"@collection\":\"Orders\"}}}}");
        }
        using (var get = await client.GetAsync($"/databases/{db}/docs?id=orders/1"))
        {
            Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        }
        await QueryAsync(client, db, "from Orders where Freight > 15");
        using (var subscription = await client.PutAsync($"/databases/{db}/subscriptions", Api.Json("{\"Name\":\"Cheap\",\"Query\":\"from Orders where Freight < 25\"}")))
        {
            Assert.Equal(HttpStatusCode.Created, subscription.StatusCode);
        }
        var (worker, _) = await SubscriptionWorker.ConnectAsync(client.BaseAddress!, db, "Cheap");
        var changes = await ChangesSocket.ConnectAsync(client.BaseAddress!, db);
        return new Both(worker, changes);
    }

    private sealed class Both(IAsyncDisposable first, IAsyncDisposable second) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            await first.DisposeAsync();
            await second.DisposeAsync();
        }
    }

    private static double Value(PrometheusTextParser.Family family, string label, string value) =>
        family.Samples.Where(s => s.Labels.GetValueOrDefault(label) == value).Sum(s => s.Value);

    [Fact]
    public async Task EverySeriesOfTheDesignIsThereWithItsLabelsAndCountersOnlyGrow()
    {
        await using var server = await InProcessServer.StartAsync();
        await using var clients = await ExerciseAsync(server.Client, "Shop");
        Dictionary<string, PrometheusTextParser.Family> first = [];
        await Poll.UntilAsync(async () =>
        {
            first = await ScrapeAsync(server.Client);
            return Value(first["jackdaw_subscription_workers"], "subscription", "Cheap") == 1
                && first.ContainsKey("jackdaw_index_batch_duration_seconds")
                && Value(first["jackdaw_changes_connections"], "database", "Shop") == 1;
        }, Wait, "the worker, the index batch and the changes connection in /metrics");

        foreach (var name in DesignSeries)
        {
            Assert.True(first.ContainsKey(name) && first[name].Samples.Count > 0, $"{name} is missing from /metrics");
        }
        Assert.Equal("counter", first["jackdaw_http_requests_total"].Type);
        Assert.Equal("histogram", first["jackdaw_http_request_duration_seconds"].Type);
        Assert.Equal("histogram", first["jackdaw_merger_commit_duration_seconds"].Type);
        Assert.Equal("gauge", first["jackdaw_documents"].Type);
        Assert.Equal(5, Value(first["jackdaw_documents"], "database", "Shop"));
        Assert.Contains(first["jackdaw_http_requests_total"].Samples, s => s.Labels["route"] == "/databases/*/docs" && s.Labels["method"] == "PUT" && s.Labels["status_class"] == "2xx" && s.Value == 5);
        Assert.Contains(first["jackdaw_http_requests_total"].Samples, s => s.Labels["route"] == "/databases/*/docs" && s.Labels["method"] == "GET" && s.Labels["status_class"] == "2xx");
        // The five PUTs and the subscription's record, at least, went through the merger.
        Assert.True(first["jackdaw_merger_batch_size"].Samples.Single(s => s.Name.EndsWith("_sum", StringComparison.Ordinal) && s.Labels["database"] == "Shop").Value >= 6);
        Assert.Contains(first["jackdaw_index_entries"].Samples, s => s.Labels["database"] == "Shop" && s.Labels["index"].StartsWith("Auto/Orders", StringComparison.Ordinal) && s.Value == 5);
        Assert.Equal(2, Value(first["jackdaw_subscription_lag_documents"], "subscription", "Cheap"), 0);
        Assert.Contains(first.Keys, name => name.StartsWith("dotnet_gc_", StringComparison.Ordinal));
        Assert.Contains(first.Keys, name => name.StartsWith("dotnet_thread_pool_", StringComparison.Ordinal));

        for (var i = 0; i < 3; i++)
        {
            using var get = await server.Client.GetAsync("/databases/Shop/docs?id=orders/2");
        }
        var second = await ScrapeAsync(server.Client);
        // The runtime declares its thread-pool queue length a counter, yet it falls when the queue
        // drains: that one is the runtime's reading, not a counter of Jackdaw's.
        foreach (var family in first.Values.Where(f => f.Type is "counter" or "histogram" && f.Name != "dotnet_thread_pool_queue_length_total"))
        {
            var later = second[family.Name].Samples.ToDictionary(s => s.Key, s => s.Value);
            foreach (var sample in family.Samples)
            {
                Assert.True(later.TryGetValue(sample.Key, out var value) && value >= sample.Value, $"{sample.Key} went from {sample.Value} to {value}");
            }
        }
        Assert.True(Value(second["jackdaw_http_requests_total"], "method", "GET") >= Value(first["jackdaw_http_requests_total"], "method", "GET") + 3);
    }

    [Fact]
    public async Task TenThousandDocumentIdsAndTenThousandUnknownPathsMakeNoNewSeries()
    {
        await using var server = await InProcessServer.StartAsync();
        await CreateDatabaseAsync(server.Client, "Paths");
        var before = (await ScrapeAsync(server.Client)).Values.Sum(f => f.Samples.Count);
        await Parallel.ForEachAsync(Enumerable.Range(0, 20_000), new ParallelOptions { MaxDegreeOfParallelism = 8 }, async (i, _) =>
        {
            var path = i % 2 == 0 ? $"/databases/Paths/docs?id=missing-{i}" : $"/nowhere-{i}/x";
            using var response = await server.Client.GetAsync(path);
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        });
        var families = await ScrapeAsync(server.Client);
        var requests = families["jackdaw_http_requests_total"].Samples;
        Assert.True(requests.Count < 10, $"{requests.Count} request series");
        Assert.Equal(10_000, requests.Single(s => s.Labels["route"] == "unmatched").Value);
        Assert.Equal(10_000, requests.Single(s => s.Labels["route"] == "/databases/*/docs" && s.Labels["status_class"] == "4xx").Value);
        var labels = families.Values.SelectMany(f => f.Samples).SelectMany(s => s.Labels.Values).ToList();
        Assert.DoesNotContain(labels, value => value.Contains("missing-", StringComparison.Ordinal) || value.Contains("nowhere-", StringComparison.Ordinal));
        var after = families.Values.Sum(f => f.Samples.Count);
        Assert.True(after - before < 80, $"{after - before} new series after 20,000 distinct paths");
    }

    [Fact]
    public async Task DatabasesAndIndexesPastTheirCapsAreSummedUnderOther()
    {
        await using var server = await InProcessServer.StartAsync("--Metrics:MaxDatabaseSeries=2", "--Metrics:MaxIndexSeries=1");
        for (var d = 1; d <= 4; d++)
        {
            await CreateDatabaseAsync(server.Client, $"db{d}");
            for (var i = 0; i < d; i++)
            {
                await PutAsync(server.Client, $"db{d}", $"orders/{i}", $"{{\"Freight\":{i},\"Name\":\"n{i}\",\"@metadata\":{{\"@collection\":\"Orders\"}}}}");
            }
        }
        await QueryAsync(server.Client, "db1", "from Orders where Freight > 0");
        // Another collection: an index on Orders' Name would widen and replace the first one.
        await QueryAsync(server.Client, "db1", "from People where Name = 'n0'");
        var families = await ScrapeAsync(server.Client);
        var documents = families["jackdaw_documents"].Samples;
        Assert.Equal(["_other", "db1", "db2"], documents.Select(s => s.Labels["database"]).Order(StringComparer.Ordinal));
        Assert.Equal(3 + 4, Value(families["jackdaw_documents"], "database", "_other"));
        Assert.Equal(2, Value(families["jackdaw_documents"], "database", "db2"));
        var indexes = families["jackdaw_index_entries"].Samples.Where(s => s.Labels["database"] == "db1").Select(s => s.Labels["index"]).ToList();
        Assert.Equal(2, indexes.Count);
        Assert.Contains("_other", indexes);
        var merger = families["jackdaw_merger_batch_size"].Samples.Where(s => s.Name.EndsWith("_count", StringComparison.Ordinal)).ToList();
        Assert.Equal(3 + 4, merger.Single(s => s.Labels["database"] == "_other").Value);
    }

    [Fact]
    public async Task ADeletedDatabaseOrIndexGivesItsLabelBackToTheNextOne()
    {
        await using var server = await InProcessServer.StartAsync("--Metrics:MaxDatabaseSeries=2", "--Metrics:MaxIndexSeries=1");
        for (var d = 1; d <= 5; d++)
        {
            await CreateDatabaseAsync(server.Client, $"gone{d}");
            await PutAsync(server.Client, $"gone{d}", "orders/1", "{\"Freight\":1,\"@metadata\":{\"@collection\":\"Orders\"}}");
            using var deleted = await server.Client.DeleteAsync($"/admin/databases?name=gone{d}");
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        await CreateDatabaseAsync(server.Client, "fresh");
        await PutAsync(server.Client, "fresh", "orders/1", "{\"Freight\":1,\"Name\":\"a\",\"@metadata\":{\"@collection\":\"Orders\"}}");
        await QueryAsync(server.Client, "fresh", "from Orders where Freight > 0");
        var families = await ScrapeAsync(server.Client);
        Assert.Equal(["fresh"], families["jackdaw_documents"].Samples.Select(s => s.Labels["database"]));
        Assert.DoesNotContain(families["jackdaw_merger_batch_size"].Samples, s => s.Labels["database"].StartsWith("gone", StringComparison.Ordinal));
        var index = Assert.Single(families["jackdaw_index_entries"].Samples).Labels["index"];
        Assert.StartsWith("Auto/Orders", index, StringComparison.Ordinal);

        // The index deleted, the next one takes its place (the cap is one).
        using (var deleted = await server.Client.DeleteAsync($"/databases/fresh/indexes?name={Uri.EscapeDataString(index)}"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        await QueryAsync(server.Client, "fresh", "from People where Name = 'a'");
        await Poll.UntilAsync(async () =>
        {
            families = await ScrapeAsync(server.Client);
            // Between the old index's series going and the new one's reading, the family can be absent.
            return families.TryGetValue("jackdaw_index_entries", out var entries) && entries.Samples is [var only] && only.Labels["index"] != index;
        }, Wait, "the deleted index gone from the gauges");
        Assert.StartsWith("Auto/People", Assert.Single(families["jackdaw_index_entries"].Samples).Labels["index"], StringComparison.Ordinal);
    }

    [Fact]
    public async Task DocumentsWrittenFromTheirStoredFormCountInTheResponseBytes()
    {
        await using var server = await InProcessServer.StartAsync();
        await CreateDatabaseAsync(server.Client, "Bytes");
        await PutAsync(server.Client, "Bytes", "orders/1", "{\"Freight\":12.5,\"Name\":\"a name\",\"@metadata\":{\"@collection\":\"Orders\"}}");

        static double Sent(Dictionary<string, PrometheusTextParser.Family> families, string route) =>
            families.TryGetValue("jackdaw_http_response_bytes_total", out var family)
                ? family.Samples.Where(s => s.Labels["route"] == route && s.Labels["method"] == "GET").Sum(s => s.Value)
                : 0;

        var before = await ScrapeAsync(server.Client);
        long body;
        using (var get = await server.Client.GetAsync("/databases/Bytes/docs?id=orders/1"))
        {
            Assert.Equal(HttpStatusCode.OK, get.StatusCode);
            body = (await get.Content.ReadAsByteArrayAsync()).Length;
        }
        long page;
        using (var collection = await server.Client.GetAsync("/databases/Bytes/collections/docs?name=Orders"))
        {
            Assert.Equal(HttpStatusCode.OK, collection.StatusCode);
            page = (await collection.Content.ReadAsByteArrayAsync()).Length;
        }
        var after = await ScrapeAsync(server.Client);
        Assert.True(body > 50, $"a body of {body} bytes");
        Assert.Equal(body, Sent(after, "/databases/*/docs") - Sent(before, "/databases/*/docs"));
        Assert.Equal(page, Sent(after, "/databases/*/collections/docs") - Sent(before, "/databases/*/collections/docs"));
    }

    [Fact]
    public async Task WithMetricsOffThereIsNoSeriesOfJackdaw()
    {
        await using var server = await InProcessServer.StartAsync("--Metrics:Enabled=false");
        await using var clients = await ExerciseAsync(server.Client, "Off");
        using var response = await server.Client.GetAsync("/metrics");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var text = await response.Content.ReadAsStringAsync();
        var families = PrometheusTextParser.Parse(text);
        Assert.Empty(families);
        Assert.DoesNotContain("jackdaw_", text, StringComparison.Ordinal);
        Assert.Null(server.Host.Server.Metrics.Exporter);
        // Nor does a database pay for metrics: no metrics component, no merger observer.
        var database = server.Host.Server.Databases.GetDatabase("Off");
        Assert.Null(database.Merger.Observer);
        Assert.Null(database.GetComponent<Jackdaw.Server.Diagnostics.DatabaseMetrics>());
    }

    [Fact]
    public async Task ASecuredServerShowsMetricsToAnOperatorOnly()
    {
        await using var secured = await SecuredServer.StartAsync();
        using var user = TestCertificates.Client("metrics-user");
        using var operatorCertificate = TestCertificates.Client("metrics-operator");
        secured.Register(user, SecurityClearance.ValidUser);
        secured.Register(operatorCertificate, SecurityClearance.Operator);

        using (var refused = await secured.Client(user).GetAsync("/metrics"))
        {
            Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
        }
        var families = await ScrapeAsync(secured.Client(operatorCertificate));
        Assert.True(families["jackdaw_certificate_expiry_seconds"].Samples.Single(s => s.Labels["certificate"] == "server").Value > 0);
        Assert.Contains(families["jackdaw_certificate_expiry_seconds"].Samples, s => s.Labels["certificate"] == operatorCertificate.Thumbprint);
        Assert.Contains(families["jackdaw_http_requests_total"].Samples, s => s.Labels["route"] == "/metrics" && s.Labels["status_class"] == "4xx");
    }
}
