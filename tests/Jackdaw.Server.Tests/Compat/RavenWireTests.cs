using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Compat;

/// <summary>RavenDB's wire shapes that the Node.js suite reaches only in part: HiLo ranges, RavenDB's bulk insert form, operations.</summary>
public sealed class RavenWireTests
{
    private static async Task<(long Low, long High)> NextRangeAsync(HttpClient client, string db, string tag = "users", long lastBatchSize = 0, long lastMax = 0)
    {
        using var response = await client.GetAsync($"/databases/{db}/hilo/next?lastBatchSize={lastBatchSize}&tag={tag}&lastRangeAt=1970-01-01T00%3A00%3A00.0000000Z&identityPartsSeparator=/&lastMax={lastMax}");
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal(tag + "/", body.GetProperty("Prefix").GetString());
        Assert.Equal("A", body.GetProperty("ServerTag").GetString());
        Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$", body.GetProperty("LastRangeAt").GetString());
        var low = body.GetProperty("Low").GetInt64();
        var high = body.GetProperty("High").GetInt64();
        Assert.Equal(high - low + 1, body.GetProperty("LastSize").GetInt64());
        return (low, high);
    }

    [Fact]
    public async Task HiLoRangesNeverOverlapAcrossConcurrentClientsAndRestarts()
    {
        using var data = new TempFolder();
        var ranges = new List<(long Low, long High)>();
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            using (await server.Client.PutAsync("/admin/databases?name=hilo", null))
            {
            }
            var concurrent = await Task.WhenAll(Enumerable.Range(0, 16).Select(_ => Task.Run(async () =>
            {
                var mine = new List<(long, long)>();
                for (var i = 0; i < 10; i++)
                {
                    mine.Add(await NextRangeAsync(server.Client, "hilo"));
                }
                return mine;
            })));
            ranges.AddRange(concurrent.SelectMany(r => r));
            // Another tag has numbers of its own.
            Assert.Equal(1, (await NextRangeAsync(server.Client, "hilo", "companies")).Low);
        }

        await using (var restarted = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            for (var i = 0; i < 5; i++)
            {
                ranges.Add(await NextRangeAsync(restarted.Client, "hilo", "USERS".ToLowerInvariant()));
            }
        }

        var ordered = ranges.OrderBy(r => r.Low).ToList();
        Assert.Equal(1, ordered[0].Low);
        for (var i = 1; i < ordered.Count; i++)
        {
            Assert.True(ordered[i].Low > ordered[i - 1].High, $"range {ordered[i]} overlaps {ordered[i - 1]}");
        }
    }

    [Fact]
    public async Task EachTagsStateShowsInItsRavenHiloDocumentAndAHigherMaxThereIsHonoured()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        foreach (var db in new[] { "doc1", "doc2" })
        {
            using (await client.PutAsync($"/admin/databases?name={db}", null))
            {
            }
        }
        var first = await NextRangeAsync(client, "doc1");
        async Task<JsonElement> HiloAsync(string db, string tag) =>
            (await Api.JsonAsync(await client.GetAsync($"/databases/{db}/docs?id=Raven/Hilo/{tag}"))).GetProperty("Results")[0];

        var document = await HiloAsync("doc1", "users");
        Assert.Equal(first.High, document.GetProperty("Max").GetInt64());
        Assert.Equal("@hilo", document.GetProperty("@metadata").GetProperty("@collection").GetString());

        // A return moves Max back; another database with the same tag has its own state.
        using (await client.PutAsync($"/databases/doc1/hilo/return?tag=users&end={first.High}&last={first.Low + 1}", null))
        {
        }
        Assert.Equal(first.Low + 1, (await HiloAsync("doc1", "users")).GetProperty("Max").GetInt64());
        Assert.Equal(1, (await NextRangeAsync(client, "doc2")).Low);

        // A higher Max written into the document (an import, an edit) is where the next range starts.
        using (var put = await client.PutAsync("/databases/doc1/docs?id=Raven/Hilo/users", Api.Json("""{"Max":5000,"@metadata":{"@collection":"@hilo"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        Assert.Equal(5001, (await NextRangeAsync(client, "doc1")).Low);
    }

    [Theory]
    [InlineData(0, 0, 32)]
    [InlineData(32, 10, 64)]
    [InlineData(64, 29, 128)]
    [InlineData(64, 45, 64)]
    [InlineData(128, 61, 64)]
    [InlineData(32, 3600, 32)]
    public void RangesGrowAsRavenDbsDoDoublingWithin30SecondsAndHalvingAfterAMinute(long lastSize, int secondsAgo, long expected)
    {
        var now = new DateTime(2026, 11, 29, 12, 0, 0, DateTimeKind.Utc);
        var lastRangeAt = lastSize == 0 ? default : now.AddSeconds(-secondsAgo);
        Assert.Equal(expected, Jackdaw.Server.Databases.HiLoRanges.NextSize(lastSize, lastRangeAt, now));
    }

    [Fact]
    public async Task AReturnedRangeIsReusedOnlyWhenNobodyTookOneAfterIt()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=ret", null))
        {
        }
        var first = await NextRangeAsync(client, "ret");
        using (var returned = await client.PutAsync($"/databases/ret/hilo/return?tag=users&end={first.High}&last={first.Low + 4}", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, returned.StatusCode);
        }
        var second = await NextRangeAsync(client, "ret");
        Assert.Equal(first.Low + 5, second.Low);

        // A stale return (someone took a range since) changes nothing.
        var third = await NextRangeAsync(client, "ret");
        using (await client.PutAsync($"/databases/ret/hilo/return?tag=users&end={second.High}&last={second.Low}", null))
        {
        }
        Assert.Equal(third.High + 1, (await NextRangeAsync(client, "ret")).Low);
    }

    [Fact]
    public async Task RavenDbsBulkInsertArrayIsIngestedAndItsOperationCompletes()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=bulk", null))
        {
        }
        using var next = await client.GetAsync("/databases/bulk/operations/next-operation-id");
        var operation = await Api.JsonAsync(next);
        var id = operation.GetProperty("Id").GetInt64();
        Assert.True(id >= 1);
        Assert.Equal("A", operation.GetProperty("NodeTag").GetString());

        var body = new StringBuilder(" [ ");
        for (var i = 0; i < 3000; i++)
        {
            if (i > 0)
            {
                body.Append(i % 7 == 0 ? " ,\n" : ",");
            }
            if (i == 1500)
            {
                body.Append("{\"Type\":\"HeartBeat\"},");
            }
            body.Append("{\"Id\":\"users/").Append(i).Append("\",\"Type\":\"PUT\",\"Document\":{\"Name\":\"user ").Append(i)
                .Append("\",\"Nested\":{\"A\":[1,{\"B\":\"]\"}]},\"@metadata\":{\"@collection\":\"Users\"}}}");
        }
        body.Append("] trailing bytes the server never reads");
        // In small pieces, so elements arrive split at every kind of place.
        using var content = new StreamContent(new TrickleStream(Encoding.UTF8.GetBytes(body.ToString()), 997));
        content.Headers.ContentType = new("application/json");
        using (var response = await client.PostAsync($"/databases/bulk/bulk_insert?id={id}&skipOverwriteIfUnchanged=false", content))
        {
            Assert.True(response.StatusCode == HttpStatusCode.NoContent, await response.Content.ReadAsStringAsync());
        }

        using (var state = await client.GetAsync($"/databases/bulk/operations/state?id={id}"))
        {
            var json = await Api.JsonAsync(state);
            Assert.Equal("Completed", json.GetProperty("Status").GetString());
            Assert.Equal(3000, json.GetProperty("Result").GetProperty("Total").GetInt64());
        }
        using (var stats = await client.GetAsync("/databases/bulk/collections/stats"))
        {
            Assert.Equal(3000, (await Api.JsonAsync(stats)).GetProperty("Collections").GetProperty("Users").GetInt64());
        }
        using (var unknown = await client.GetAsync("/databases/bulk/operations/state?id=999999"))
        {
            Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        }
        using (var kill = await client.PostAsync($"/databases/bulk/operations/kill?id={id}", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, kill.StatusCode);
        }
    }

    [Theory]
    [InlineData("{\"Id\":\"a\"}", "JSON array")]
    [InlineData("[{\"Id\":\"a\",\"Type\":\"PUT\",\"Document\":{}} {\"Id\":\"b\"}]", "expected ',' or ']'")]
    [InlineData("[{\"Id\":\"a\",\"Type\":\"PATCH\",\"Document\":{}}]", "not 'PATCH'")]
    [InlineData("[{\"Id\":\"a\",\"Type\":\"PUT\",\"Document\":{}}", "closing ']'")]
    [InlineData("[{\"Id\":\"a\",\"Type\":\"PUT\",\"Document\":{\"x\":", "command 1")]
    public async Task AMalformedRavenDbBulkInsertIs400AndItsOperationIsFaulted(string body, string mentions)
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=bad", null))
        {
        }
        using var response = await client.PostAsync("/databases/bad/bulk_insert?id=7", Api.Json(body));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains(mentions, message, StringComparison.Ordinal);
        using var state = await client.GetAsync("/databases/bad/operations/state?id=7");
        var json = await Api.JsonAsync(state);
        Assert.Equal("Faulted", json.GetProperty("Status").GetString());
        Assert.Contains(mentions, json.GetProperty("Result").GetProperty("Error").GetString(), StringComparison.Ordinal);
        // RavenDB's OperationExceptionResult: the error as the request was answered.
        Assert.Equal("BadRequestException", json.GetProperty("Result").GetProperty("Type").GetString());
        Assert.Equal(400, json.GetProperty("Result").GetProperty("StatusCode").GetInt32());
    }

    private static async Task<JsonElement> OperationStateAsync(HttpClient client, string db, long id)
    {
        using var response = await client.GetAsync($"/databases/{db}/operations/state?id={id}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await Api.JsonAsync(response);
    }

    [Fact]
    public async Task OperationsStateCarriesABulkInsertsProgressWhileItRuns()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=progress", null))
        {
        }
        await using var insert = await HeldBulkInsert.StartAsync(client, "progress");
        var timeout = TimeSpan.FromSeconds(30);

        // Read but not committed yet (a batch is 1,024 documents): processed, not in Total.
        await insert.SendAsync(1, 100);
        JsonElement state = default;
        await Poll.UntilAsync(async () => (state = await OperationStateAsync(client, "progress", insert.Id)).GetProperty("Progress").GetProperty("DocumentsProcessed").GetInt64() == 100, timeout, "100 documents processed");
        Assert.Equal("InProgress", state.GetProperty("Status").GetString());
        Assert.Equal(JsonValueKind.Null, state.GetProperty("Result").ValueKind);
        var progress = state.GetProperty("Progress");
        Assert.Equal("Raven.Client.Documents.Operations.BulkInsertProgress, Raven.Client", progress.GetProperty("$type").GetString());
        Assert.Equal(0, progress.GetProperty("Total").GetInt64());
        Assert.Equal(JsonValueKind.Null, progress.GetProperty("LastProcessedId").ValueKind);

        // A full batch is in Total once durable, while the client still holds the stream open.
        await insert.SendAsync(101, 1900);
        await Poll.UntilAsync(async () => (state = await OperationStateAsync(client, "progress", insert.Id)).GetProperty("Progress").GetProperty("Total").GetInt64() == 1024, timeout, "the first batch committed");
        progress = state.GetProperty("Progress");
        Assert.Equal(1, progress.GetProperty("BatchCount").GetInt64());
        Assert.Equal("items/1024", progress.GetProperty("LastProcessedId").GetString());
        Assert.Equal(0, progress.GetProperty("AttachmentsProcessed").GetInt64());

        using (var response = await insert.EndAsync())
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        state = await OperationStateAsync(client, "progress", insert.Id);
        Assert.Equal("Completed", state.GetProperty("Status").GetString());
        Assert.Equal(JsonValueKind.Null, state.GetProperty("Progress").ValueKind);
        var result = state.GetProperty("Result");
        Assert.Equal("Raven.Client.Documents.Operations.BulkOperationResult, Raven.Client", result.GetProperty("$type").GetString());
        Assert.Equal(2000, result.GetProperty("Total").GetInt64());
        Assert.Equal(2000, result.GetProperty("DocumentsProcessed").GetInt64());
        Assert.Equal("Processed 2,000 items.", result.GetProperty("Message").GetString());
    }

    [Fact]
    public async Task LinesUnderAnOperationIdAreTrackedAndAnsweredWithTheirCount()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=lines", null))
        {
        }
        using var content = new StringContent("{\"Id\":\"a/1\",\"Document\":{}}\n{\"Id\":\"a/2\",\"Document\":{}}\n", Encoding.UTF8, "application/x-ndjson");
        using (var response = await client.PostAsync("/databases/lines/bulk_insert?id=3", content))
        {
            Assert.Equal(2, (await Api.JsonAsync(response)).GetProperty("Count").GetInt64());
        }
        var state = await OperationStateAsync(client, "lines", 3);
        Assert.Equal("Completed", state.GetProperty("Status").GetString());
        Assert.Equal(2, state.GetProperty("Result").GetProperty("Total").GetInt64());
    }

    [Fact]
    public async Task WhatJackdawDoesNotDoIsA501NamingItNeverASilentSuccess()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=ns", null))
        {
        }
        // Cluster-wide transactions would lose updates if run as ordinary batches.
        using (var clusterWide = await client.PostAsync("/databases/ns/bulk_docs", Api.Json("""{"Commands":[{"Type":"PUT","Id":"a","Document":{}}],"TransactionMode":"ClusterWide"}""")))
        {
            Assert.Contains("ClusterWide", await Api.AssertErrorAsync(clusterWide, (HttpStatusCode)501, "FeatureNotSupportedException"), StringComparison.Ordinal);
        }
        using (var single = await client.PostAsync("/databases/ns/bulk_docs", Api.Json("""{"Commands":[{"Type":"PUT","Id":"a","Document":{}}],"TransactionMode":"SingleNode"}""")))
        {
            Assert.Equal(HttpStatusCode.OK, single.StatusCode);
        }
        // A database record, in RavenDB's shape (its topology), not the list of databases.
        using (var record = await client.GetAsync("/admin/databases?name=ns"))
        {
            Assert.Equal(HttpStatusCode.OK, record.StatusCode);
            var json = JsonDocument.Parse(await record.Content.ReadAsStringAsync()).RootElement;
            Assert.Equal("ns", json.GetProperty("DatabaseName").GetString());
            Assert.Equal(["A"], json.GetProperty("Topology").GetProperty("Members").EnumerateArray().Select(m => m.GetString()));
        }
        // Attachments come as multipart batches, whose first part is the commands.
        using (var multipart = new MultipartFormDataContent { { new StringContent("{}"), "main" } })
        using (var attachments = await client.PostAsync("/databases/ns/bulk_docs", multipart))
        {
            Assert.Contains("Commands", await Api.AssertErrorAsync(attachments, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        }
        using (var counters = await client.GetAsync("/databases/ns/counters?docId=a"))
        {
            await Api.AssertErrorAsync(counters, (HttpStatusCode)501, "FeatureNotSupportedException");
        }
        // Outside a database an unknown path is still a 404.
        using (var nowhere = await client.GetAsync("/nowhere/at/all"))
        {
            await Api.AssertErrorAsync(nowhere, HttpStatusCode.NotFound, "RouteNotFoundException");
        }
    }

    [Fact]
    public async Task ALoadWithIncludesIsNeverAnsweredFromACachedETag()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=inc", null))
        {
        }
        using (await client.PostAsync("/databases/inc/bulk_docs", Api.Json("""{"Commands":[{"Type":"PUT","Id":"orders/1","Document":{"Company":"companies/1"}},{"Type":"PUT","Id":"companies/1","Document":{"Name":"Old"}}]}""")))
        {
        }
        using var plain = await client.GetAsync("/databases/inc/docs?id=orders/1");
        var etag = plain.Headers.ETag!.Tag;
        using (await client.PostAsync("/databases/inc/bulk_docs", Api.Json("""{"Commands":[{"Type":"PUT","Id":"companies/1","Document":{"Name":"New"}}]}""")))
        {
        }
        using var request = new HttpRequestMessage(HttpMethod.Get, "/databases/inc/docs?&include=Company&id=orders%2F1");
        request.Headers.TryAddWithoutValidation("If-None-Match", etag);
        using var response = await client.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Null(response.Headers.ETag);
        var body = await Api.JsonAsync(response);
        Assert.Equal("New", body.GetProperty("Includes").GetProperty("companies/1").GetProperty("Name").GetString());
    }

    [Fact]
    public async Task HiLoSurvivesHostileNumbersWithoutEverRepeatingARange()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=ovf", null))
        {
        }
        var first = await NextRangeAsync(client, "ovf");
        // A batch size that would overflow when doubled is capped.
        using (var huge = await client.GetAsync("/databases/ovf/hilo/next?tag=users&lastBatchSize=4611686018427387904&lastRangeAt=2099-01-01T00%3A00%3A00.0000000Z&lastMax=0"))
        {
            var body = await Api.JsonAsync(huge);
            Assert.True(body.GetProperty("Low").GetInt64() > first.High);
            Assert.True(body.GetProperty("High").GetInt64() > body.GetProperty("Low").GetInt64());
        }
        // A lastMax at the end of the numbers is refused, not wrapped around to 1.
        using (var wrap = await client.GetAsync("/databases/ovf/hilo/next?tag=users&lastMax=9223372036854775800"))
        {
            await Api.AssertErrorAsync(wrap, HttpStatusCode.BadRequest, "BadRequestException");
        }
        // A return below its range's low end changes nothing.
        var range = await NextRangeAsync(client, "ovf");
        using (await client.PutAsync($"/databases/ovf/hilo/return?tag=users&end={range.High}&last=0", null))
        {
        }
        Assert.Equal(range.High + 1, (await NextRangeAsync(client, "ovf")).Low);
    }

    [Fact]
    public async Task TheTopologyNamesThePublicUrlWhenOneIsConfigured()
    {
        await using (var plain = await InProcessServer.StartAsync())
        {
            using (await plain.Client.PutAsync("/admin/databases?name=topo", null))
            {
            }
            using var response = await plain.Client.GetAsync("/topology?name=topo&first-topology-update&applicationIdentifier=x");
            var node = (await Api.JsonAsync(response)).GetProperty("Nodes")[0];
            Assert.Equal(plain.Client.BaseAddress!.GetLeftPart(UriPartial.Authority), node.GetProperty("Url").GetString());
            Assert.Equal("topo", node.GetProperty("Database").GetString());
            Assert.Equal("A", node.GetProperty("ClusterTag").GetString());
        }

        await using var proxied = await InProcessServer.StartAsync("--public-url", "https://db.example.com/jackdaw/");
        using (await proxied.Client.PutAsync("/admin/databases?name=topo", null))
        {
        }
        using (var database = await proxied.Client.GetAsync("/topology?name=topo"))
        {
            Assert.Equal("https://db.example.com/jackdaw", (await Api.JsonAsync(database)).GetProperty("Nodes")[0].GetProperty("Url").GetString());
        }
        using var cluster = await proxied.Client.GetAsync("/cluster/topology");
        Assert.Equal("https://db.example.com/jackdaw", (await Api.JsonAsync(cluster)).GetProperty("Topology").GetProperty("Members").GetProperty("A").GetString());
    }

    /// <summary>A stream that hands out its bytes a few at a time.</summary>
    private sealed class TrickleStream(byte[] bytes, int piece) : Stream
    {
        private int _position;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => bytes.Length;

        public override long Position { get => _position; set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count)
        {
            var n = Math.Min(Math.Min(count, piece), bytes.Length - _position);
            Array.Copy(bytes, _position, buffer, offset, n);
            _position += n;
            return n;
        }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            await Task.Yield();
            var n = Math.Min(Math.Min(buffer.Length, piece), bytes.Length - _position);
            bytes.AsMemory(_position, n).CopyTo(buffer);
            _position += n;
            return n;
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
