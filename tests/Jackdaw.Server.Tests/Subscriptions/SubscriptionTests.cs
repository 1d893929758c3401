using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Subscriptions;

/// <summary>Data subscriptions over the WebSocket protocol, against the real server.</summary>
public sealed class SubscriptionTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    private HttpClient Client => fixture.Client;

    private Uri Server => Client.BaseAddress!;

    private async Task<string> SeedAsync(int count = 10)
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutOrdersAsync(db, Enumerable.Range(1, count).Select(i => ($"orders/{i}", i * 10.0)));
        return db;
    }

    private async Task PutOrdersAsync(string db, IEnumerable<(string Id, double Freight)> orders)
    {
        var commands = string.Join(',', orders.Select(o => $"{{\"Type\":\"PUT\",\"Id\":\"{o.Id}\",\"Document\":{{\"Freight\":{o.Freight},\"Company\":\"companies/1\",\"@metadata\":{{\"@collection\":\"Orders\"}}}}}}"));
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    private async Task CreateAsync(string db, string name, string query, string changeVector = "BeginningOfTime")
    {
        using var response = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json(JsonSerializer.Serialize(new { Name = name, Query = query, ChangeVector = changeVector })));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        Assert.Equal(name, (await Api.JsonAsync(response)).GetProperty("Name").GetString());
    }

    private async Task<JsonElement> ListAsync(string db, string name)
    {
        using var response = await Client.GetAsync($"/databases/{db}/subscriptions?name={name}");
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    [Fact]
    public async Task AWorkerGetsTheMatchingDocumentsInBatchesAndEachAckIsStoredBeforeTheNext()
    {
        var db = await SeedAsync();
        await CreateAsync(db, "Big", "from Orders where Freight > 45 include Company");
        var (worker, status) = await SubscriptionWorker.ConnectAsync(Server, db, "Big", maxDocs: 3);
        await using var workerScope = worker;
        Assert.Equal("Accepted", status.GetProperty("Status").GetString());

        var first = await worker.BatchAsync();
        Assert.Equal(["orders/5", "orders/6", "orders/7"], SubscriptionWorker.Ids(first));
        Assert.Equal(70, first.GetProperty("Items")[2].GetProperty("Data").GetProperty("Freight").GetDouble());
        Assert.Equal("orders/5", first.GetProperty("Items")[0].GetProperty("Data").GetProperty("@metadata").GetProperty("@id").GetString());
        Assert.StartsWith("A:", first.GetProperty("Items")[0].GetProperty("ChangeVector").GetString(), StringComparison.Ordinal);
        await worker.AckAndConfirmAsync(first);
        Assert.Equal(first.GetProperty("LastEtag").GetInt64(), (await ListAsync(db, "Big")).GetProperty("AckedEtag").GetInt64());

        var second = await worker.BatchAsync();
        Assert.Equal(["orders/8", "orders/9", "orders/10"], SubscriptionWorker.Ids(second));
        await worker.AckAndConfirmAsync(second);

        // New writes arrive; a non-matching change and a delete send nothing.
        const string Commands = """
            {"Commands":[
              {"Type":"PUT","Id":"orders/11","Document":{"Freight":500,"@metadata":{"@collection":"Orders"}}},
              {"Type":"PUT","Id":"orders/12","Document":{"Freight":1,"@metadata":{"@collection":"Orders"}}},
              {"Type":"DELETE","Id":"orders/11"},
              {"Type":"PUT","Id":"orders/13","Document":{"Freight":99,"@metadata":{"@collection":"Orders"}}}]}
            """;
        using (var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(Commands)))
        {
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        var third = await worker.BatchAsync();
        Assert.Equal(["orders/13"], SubscriptionWorker.Ids(third));
        await worker.AckAndConfirmAsync(third);

        var listed = await ListAsync(db, "Big");
        Assert.Equal(0, listed.GetProperty("PendingDocuments").GetInt64());
        Assert.Single(listed.GetProperty("Workers").EnumerateArray());
        Assert.NotEqual(JsonValueKind.Null, listed.GetProperty("LastBatchAckTime").ValueKind);
    }

    [Fact]
    public async Task ThePendingCountReadsNoMoreDocumentsThanAskedAndSaysWhenItStopped()
    {
        // Freights 10, 20, ... 100: orders/3 to orders/10 match.
        var db = await SeedAsync(10);
        await CreateAsync(db, "Capped", "from Orders where Freight > 25");
        var all = await ListAsync(db, "Capped");
        Assert.Equal(8, all.GetProperty("PendingDocuments").GetInt64());
        Assert.True(all.GetProperty("PendingDocumentsExact").GetBoolean());
        using (var list = await Client.GetAsync($"/databases/{db}/subscriptions?name=Capped&pendingLimit=5"))
        {
            var first = (await Api.JsonAsync(list)).GetProperty("Results")[0];
            Assert.Equal(3, first.GetProperty("PendingDocuments").GetInt64());
            Assert.False(first.GetProperty("PendingDocumentsExact").GetBoolean());
        }
        using (var state = await Client.GetAsync($"/databases/{db}/subscriptions/state?name=Capped&pendingLimit=10"))
        {
            var body = await Api.JsonAsync(state);
            Assert.Equal(8, body.GetProperty("PendingDocuments").GetInt64());
            Assert.True(body.GetProperty("PendingDocumentsExact").GetBoolean());
        }
        using (var zero = await Client.GetAsync($"/databases/{db}/subscriptions/state?name=Capped&pendingLimit=0"))
        {
            Assert.Contains("pendingLimit", await Api.AssertErrorAsync(zero, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task AnUnacknowledgedBatchIsSentAgainAndAChangedDocumentAfterItsSend()
    {
        var db = await SeedAsync(4);
        await CreateAsync(db, "Again", "from Orders");
        var (crashed, _) = await SubscriptionWorker.ConnectAsync(Server, db, "Again");
        var lost = await crashed.BatchAsync();
        Assert.Equal(4, SubscriptionWorker.Ids(lost).Count);
        crashed.Abort();
        await crashed.DisposeAsync();

        // A document changed after it was sent (and never acknowledged) comes again too.
        await PutOrdersAsync(db, [("orders/2", 22)]);
        var (worker, status) = await SubscriptionWorker.ConnectAsync(Server, db, "Again", "WaitForFree");
        await using var workerScope = worker;
        Assert.Equal("Accepted", status.GetProperty("Status").GetString());
        var again = await worker.BatchAsync();
        Assert.Equal(["orders/1", "orders/2", "orders/3", "orders/4"], SubscriptionWorker.Ids(again).Order());
        var changed = again.GetProperty("Items").EnumerateArray().Single(i => i.GetProperty("Id").GetString() == "orders/2");
        Assert.Equal(22, changed.GetProperty("Data").GetProperty("Freight").GetDouble());
        await worker.AckAndConfirmAsync(again);
    }

    [Fact]
    public async Task Strategies()
    {
        var db = await SeedAsync(3);
        await CreateAsync(db, "S", "from Orders");
        var (first, _) = await SubscriptionWorker.ConnectAsync(Server, db, "S");
        var (refused, status) = await SubscriptionWorker.ConnectAsync(Server, db, "S");
        Assert.Equal("InUse", status.GetProperty("Status").GetString());
        await refused.DisposeAsync();

        // WaitForFree waits until the first goes.
        var waiting = SubscriptionWorker.ConnectAsync(Server, db, "S", "WaitForFree");
        await Task.Delay(300);
        Assert.False(waiting.IsCompleted);

        // TakeOver closes the first (which is told why), then WaitForFree still waits for it.
        var (taker, takeStatus) = await SubscriptionWorker.ConnectAsync(Server, db, "S", "TakeOver");
        Assert.Equal("Accepted", takeStatus.GetProperty("Status").GetString());
        JsonElement? closed;
        do
        {
            closed = await first.ReceiveAsync(Wait);
        }
        while (closed is { } m && m.GetProperty("Type").GetString() == "Batch");
        Assert.Equal("Closed", closed!.Value.GetProperty("Status").GetString());
        Assert.Contains("taken over", closed.Value.GetProperty("Message").GetString(), StringComparison.Ordinal);
        await first.DisposeAsync();
        await taker.DisposeAsync();
        var (waited, waitedStatus) = await waiting.WaitAsync(Wait);
        Assert.Equal("Accepted", waitedStatus.GetProperty("Status").GetString());

        // Concurrent workers are refused beside an exclusive one; among themselves they share.
        var (notConcurrent, ncStatus) = await SubscriptionWorker.ConnectAsync(Server, db, "S", "Concurrent");
        Assert.Equal("InUse", ncStatus.GetProperty("Status").GetString());
        await notConcurrent.DisposeAsync();
        await waited.DisposeAsync();
    }

    [Fact]
    public async Task ConcurrentWorkersShareBatchesAndADeadOnesBatchGoesToAnother()
    {
        var db = await SeedAsync(6);
        await CreateAsync(db, "C", "from Orders");
        var (a, _) = await SubscriptionWorker.ConnectAsync(Server, db, "C", "Concurrent", maxDocs: 2);
        var (b, bStatus) = await SubscriptionWorker.ConnectAsync(Server, db, "C", "Concurrent", maxDocs: 2);
        Assert.Equal("Accepted", bStatus.GetProperty("Status").GetString());
        var batchA = await a.BatchAsync();
        var batchB = await b.BatchAsync();
        Assert.Empty(SubscriptionWorker.Ids(batchA).Intersect(SubscriptionWorker.Ids(batchB)));
        // A dies holding its batch: B gets it (and the rest).
        a.Abort();
        await a.DisposeAsync();
        var received = SubscriptionWorker.Ids(batchB);
        await b.AckAndConfirmAsync(batchB);
        while (received.Distinct().Count() < 6)
        {
            var batch = await b.BatchAsync();
            received.AddRange(SubscriptionWorker.Ids(batch));
            await b.AckAndConfirmAsync(batch);
        }
        Assert.Equal(6, received.Distinct().Count());
        Assert.True(SubscriptionWorker.Ids(batchA).All(received.Contains));
        await b.DisposeAsync();
        // Everything acknowledged: the position is past the last order.
        Assert.Equal(0, (await ListAsync(db, "C")).GetProperty("PendingDocuments").GetInt64());
    }

    [Fact]
    public async Task TheBatchPreparedWhileAWorkerWorksGoesBackWhenTheWorkerDies()
    {
        var db = await SeedAsync(10);
        await CreateAsync(db, "P", "from Orders");
        var (a, _) = await SubscriptionWorker.ConnectAsync(Server, db, "P", "Concurrent", maxDocs: 3);
        var batchA = await a.BatchAsync();
        Assert.Equal(["orders/1", "orders/2", "orders/3"], SubscriptionWorker.Ids(batchA));
        // The server prepares A's next batch (orders 4-6) while A works: the listing shows it held.
        var deadline = DateTime.UtcNow + Wait;
        while (HeldOf(await ListAsync(db, "P")) is not [(_, _, true), (_, _, false)])
        {
            Assert.True(DateTime.UtcNow < deadline, "A's next batch was never prepared.");
            await Task.Delay(20);
        }
        var (b, _) = await SubscriptionWorker.ConnectAsync(Server, db, "P", "Concurrent", maxDocs: 3);
        var first = await b.BatchAsync();
        Assert.Equal(["orders/7", "orders/8", "orders/9"], SubscriptionWorker.Ids(first));

        // A dies without acknowledging: both its batch and the one prepared for it go to B.
        a.Abort();
        await a.DisposeAsync();
        var received = SubscriptionWorker.Ids(first);
        await b.AckAndConfirmAsync(first);
        while (received.Distinct().Count() < 10)
        {
            var batch = await b.BatchAsync();
            received.AddRange(SubscriptionWorker.Ids(batch));
            await b.AckAndConfirmAsync(batch);
        }
        Assert.Equal(Enumerable.Range(1, 10).Select(i => $"orders/{i}").Order(), received.Distinct().Order());
        await b.DisposeAsync();
        Assert.Equal(0, (await ListAsync(db, "P")).GetProperty("PendingDocuments").GetInt64());

    }

    private static (long StartExclusive, long LastEtag, bool Sent)[] HeldOf(JsonElement listed) =>
        listed.GetProperty("Workers").EnumerateArray().SelectMany(w => w.GetProperty("Held").EnumerateArray())
            .Select(h => (h.GetProperty("StartExclusive").GetInt64(), h.GetProperty("LastEtag").GetInt64(), h.GetProperty("Sent").GetBoolean()))
            .ToArray();

    [Fact]
    public async Task WritesToOtherCollectionsDoNotHoldUpAnIdleConnection()
    {
        var db = await SeedAsync(3);
        await CreateAsync(db, "Other", "from Orders");
        var (worker, accepted) = await SubscriptionWorker.ConnectAsync(Server, db, "Other");
        await using var _ = worker;
        Assert.Equal("Accepted", accepted.GetProperty("Status").GetString());
        var batch = await worker.BatchAsync();
        // Documents of another collection come after the last order: the connection waits for
        // the next commit, not for documents past the last order (it woke at once, again and
        // again, until its heartbeat: the acknowledgement waited up to 5 s behind it).
        using (var company = await Client.PutAsync($"/databases/{db}/docs?id=companies/9", Api.Json("{\"Name\":\"x\",\"@metadata\":{\"@collection\":\"Companies\"}}")))
        {
            Assert.Equal(HttpStatusCode.Created, company.StatusCode);
        }
        var state = Jackdaw.Server.Subscriptions.SubscriptionStore.Of(fixture.Server.Host.Server.Databases.GetDatabase(db)).Get("Other");
        for (var round = 0; round < 3; round++)
        {
            var clock = System.Diagnostics.Stopwatch.StartNew();
            await worker.AckAndConfirmAsync(batch);
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(2.5), $"the confirmation took {clock.Elapsed}");
            // Idle, with ten more documents of another collection: a scan for each commit, not thousands.
            var scans = state.Scans;
            for (var i = 0; i < 10; i++)
            {
                using var other = await Client.PutAsync($"/databases/{db}/docs?id=companies/{round}-{i}", Api.Json("{\"Name\":\"z\",\"@metadata\":{\"@collection\":\"Companies\"}}"));
                Assert.Equal(HttpStatusCode.Created, other.StatusCode);
            }
            await Task.Delay(300);
            Assert.True(state.Scans - scans <= 30, $"{state.Scans - scans} scans for 10 commits of another collection");
            await PutOrdersAsync(db, [($"orders/new{round}", 5.0)]);
            batch = await worker.BatchAsync();
            Assert.Equal([$"orders/new{round}"], SubscriptionWorker.Ids(batch));
            using var company = await Client.PutAsync($"/databases/{db}/docs?id=companies/{round}", Api.Json("{\"Name\":\"y\",\"@metadata\":{\"@collection\":\"Companies\"}}"));
            Assert.Equal(HttpStatusCode.Created, company.StatusCode);
        }
    }

    [Fact]
    public async Task ATakeOverGetsInWhenTheWorkerStoppedReadingAMidBatch()
    {
        var db = await fixture.CreateDatabaseAsync();
        var pad = new string('x', 1024 * 1024);
        for (var part = 0; part < 4; part++)
        {
            var commands = string.Join(',', Enumerable.Range(part * 6, 6).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"orders/{i}\",\"Document\":{{\"Pad\":\"{pad}\",\"@metadata\":{{\"@collection\":\"Orders\"}}}}}}"));
            using var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        await CreateAsync(db, "Big", "from Orders");
        // This worker reads its status and nothing more: a 24 MB batch fills the socket's buffers
        // and the server's send waits on it.
        var (stalled, accepted) = await SubscriptionWorker.ConnectAsync(Server, db, "Big");
        Assert.Equal("Accepted", accepted.GetProperty("Status").GetString());
        for (var wait = 0; wait < 300; wait++)
        {
            var held = (await ListAsync(db, "Big")).GetProperty("Workers").EnumerateArray().SelectMany(w => w.GetProperty("Held").EnumerateArray());
            if (held.Any(h => h.GetProperty("Sent").GetBoolean()))
            {
                break;
            }
            await Task.Delay(20);
        }
        await Task.Delay(500);
        // The takeover closes it: the send is cut off after its grace, the session leaves.
        var taking = SubscriptionWorker.ConnectAsync(Server, db, "Big", "TakeOver");
        Assert.True(await Task.WhenAny(taking, Task.Delay(Wait)) == taking, "the takeover waited for a worker that does not read");
        var (taker, status) = await taking;
        Assert.Equal("Accepted", status.GetProperty("Status").GetString());
        // The stalled worker's batch comes to the taker (one batch: the documents are small on disk,
        // 24 MB as JSON).
        var batch = await taker.BatchAsync();
        Assert.Equal(24, SubscriptionWorker.Ids(batch).Count);
        await taker.AckAndConfirmAsync(batch);
        stalled.Abort();
        await stalled.DisposeAsync();
        await taker.DisposeAsync();
    }

    [Fact]
    public async Task ADeletedSubscriptionStaysDeletedWhenAnAcknowledgementRacedTheDelete()
    {
        var db = await SeedAsync(3);
        await CreateAsync(db, "Stays", "from Orders");
        var names = new List<string>();
        for (var round = 0; round < 30; round++)
        {
            var name = $"Gone{round}";
            await CreateAsync(db, name, "from Orders");
            var (worker, _) = await SubscriptionWorker.ConnectAsync(Server, db, name);
            await using (worker)
            {
                var batch = await worker.BatchAsync();
                // The acknowledgement's store and the delete's meet in various orders.
                var delete = Client.DeleteAsync($"/databases/{db}/subscriptions?name={name}");
                await Task.Delay(round % 6);
                await worker.AckAsync(batch.GetProperty("LastEtag").GetInt64());
                using var deleted = await delete;
                Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
            }
            names.Add(name);
        }
        // What the next open reads from storage: none of them came back.
        Assert.True(await fixture.Server.Host.Server.Databases.UnloadAsync(db));
        using var list = await Client.GetAsync($"/databases/{db}/subscriptions");
        var listed = (await Api.JsonAsync(list)).GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("SubscriptionName").GetString()).ToList();
        Assert.Equal(["Stays"], listed);
    }

    [Fact]
    public async Task DefinitionsDisableEnableDropAndDelete()
    {
        var db = await SeedAsync(2);
        using (var bad = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("{\"Query\":\"from Orders where\"}")))
        {
            await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "InvalidQueryException");
        }
        using (var bad = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("{\"Query\":\"from index 'X'\"}")))
        {
            await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "InvalidQueryException");
        }
        await CreateAsync(db, "D", "from Orders", "LastDocument");
        using (var again = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("{\"Name\":\"d\",\"Query\":\"from Orders\"}")))
        {
            await Api.AssertErrorAsync(again, HttpStatusCode.Conflict, "SubscriptionAlreadyExistsException");
        }
        using (var generated = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("{\"Query\":\"from Orders\"}")))
        {
            Assert.False(string.IsNullOrEmpty((await Api.JsonAsync(generated)).GetProperty("Name").GetString()));
        }
        Assert.Equal(0, (await ListAsync(db, "D")).GetProperty("PendingDocuments").GetInt64());

        using (await Client.PostAsync($"/databases/{db}/subscriptions/disable?name=D", null))
        {
        }
        var (refused, status) = await SubscriptionWorker.ConnectAsync(Server, db, "D");
        Assert.Equal("Closed", status.GetProperty("Status").GetString());
        Assert.Contains("disabled", status.GetProperty("Message").GetString(), StringComparison.Ordinal);
        await refused.DisposeAsync();
        using (await Client.PostAsync($"/databases/{db}/subscriptions/enable?name=D", null))
        {
        }
        var (worker, accepted) = await SubscriptionWorker.ConnectAsync(Server, db, "D");
        Assert.Equal("Accepted", accepted.GetProperty("Status").GetString());
        using (var drop = await Client.PostAsync($"/databases/{db}/subscriptions/drop?name=D", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, drop.StatusCode);
        }
        var dropped = await worker.ReceiveAsync(Wait);
        Assert.Equal("Closed", dropped!.Value.GetProperty("Status").GetString());
        Assert.True(dropped.Value.GetProperty("CanReconnect").GetBoolean());
        // The dropped worker's place is free once it is told: it reconnects (OpenIfFree, as
        // RavenDB's workers do) before its old socket has closed.
        var (back, backStatus) = await SubscriptionWorker.ConnectAsync(Server, db, "D");
        Assert.Equal("Accepted", backStatus.GetProperty("Status").GetString());
        await worker.DisposeAsync();
        await back.DisposeAsync();

        using (var delete = await Client.DeleteAsync($"/databases/{db}/subscriptions?name=D"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        using (var missing = await Client.DeleteAsync($"/databases/{db}/subscriptions?name=D"))
        {
            await Api.AssertErrorAsync(missing, HttpStatusCode.NotFound, "SubscriptionDoesNotExistException");
        }
        var (gone, goneStatus) = await SubscriptionWorker.ConnectAsync(Server, db, "D");
        Assert.Equal("NotFound", goneStatus.GetProperty("Status").GetString());
        await gone.DisposeAsync();
    }

    [Fact]
    public async Task ARefusedWorkerIsToldWhyThenClosedAsAPolicyViolation()
    {
        var db = await fixture.CreateDatabaseAsync();
        var (worker, status) = await SubscriptionWorker.ConnectAsync(Server, db, "Missing");
        await using var scope = worker;
        Assert.Equal("NotFound", status.GetProperty("Status").GetString());
        Assert.Equal("SubscriptionDoesNotExistException", status.GetProperty("Exception").GetString());
        Assert.Null(await worker.ReceiveAsync(Wait));
        Assert.Equal(System.Net.WebSockets.WebSocketCloseStatus.PolicyViolation, worker.Socket.CloseStatus);
        Assert.Equal("NotFound", worker.Socket.CloseStatusDescription);
    }

    [Fact]
    public async Task ADroppedWorkerIsToldWhyThenClosedNormally()
    {
        var db = await SeedAsync(1);
        await CreateAsync(db, "C", "from Orders");
        var (worker, _) = await SubscriptionWorker.ConnectAsync(Server, db, "C");
        await using var scope = worker;
        using (var drop = await Client.PostAsync($"/databases/{db}/subscriptions/drop?name=C", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, drop.StatusCode);
        }
        JsonElement? closed;
        do
        {
            closed = await worker.ReceiveAsync(Wait);
        }
        while (closed is { } m && m.GetProperty("Type").GetString() == "Batch");
        Assert.Equal("Closed", closed!.Value.GetProperty("Status").GetString());
        Assert.Null(await worker.ReceiveAsync(Wait));
        Assert.Equal(System.Net.WebSockets.WebSocketCloseStatus.NormalClosure, worker.Socket.CloseStatus);
        Assert.Equal("closed", worker.Socket.CloseStatusDescription);
    }

    [Fact]
    public async Task APlainGetOfTheConnectRouteIsToldItIsAWebSocket()
    {
        var db = await SeedAsync(1);
        await CreateAsync(db, "P", "from Orders");
        using var response = await Client.GetAsync($"/databases/{db}/subscriptions/connect?name=P");
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Equal("This route is a WebSocket: connect with ws://.../databases/{db}/subscriptions/connect?name=...", message);
    }

    [Theory]
    [InlineData("not json", "InvalidJsonException")]
    [InlineData("{\"Type\":\"Acknowledge\",\"Etag\":999999}", "does not match")]
    [InlineData("{\"Type\":\"Dance\"}", "Acknowledge")]
    [InlineData("binary", "Binary frames")]
    [InlineData("huge", "at most")]
    public async Task BadSocketInputIsAnErrorAndClosesWithThePositionUnchanged(string input, string mentions)
    {
        var db = await SeedAsync(3);
        await CreateAsync(db, "B", "from Orders");
        var (worker, _) = await SubscriptionWorker.ConnectAsync(Server, db, "B");
        await worker.BatchAsync();
        if (input == "binary")
        {
            await worker.Socket.SendAsync(new byte[] { 1, 2, 3 }, System.Net.WebSockets.WebSocketMessageType.Binary, true, CancellationToken.None);
        }
        else if (input == "huge")
        {
            await worker.SendAsync(new string('x', 1024 * 1024));
        }
        else
        {
            await worker.SendAsync(input);
        }
        var error = await worker.ReceiveAsync(Wait);
        Assert.Equal("Error", error!.Value.GetProperty("Type").GetString());
        Assert.Contains(mentions, error.Value.GetProperty("Exception").GetString() + " " + error.Value.GetProperty("Message").GetString(), StringComparison.Ordinal);
        await worker.DisposeAsync();
        Assert.Equal(0, (await ListAsync(db, "B")).GetProperty("AckedEtag").GetInt64());
        // The server keeps serving: a new worker gets the same documents.
        var (next, status) = await SubscriptionWorker.ConnectAsync(Server, db, "B", "WaitForFree");
        await using var nextScope = next;
        Assert.Equal(3, SubscriptionWorker.Ids(await next.BatchAsync()).Count);
    }
}
