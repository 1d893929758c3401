using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Changes;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Changes;

/// <summary>The changes feed as server-sent events: filters, the position, resuming with Last-Event-ID without a gap or a duplicate, back-pressure.</summary>
public sealed class ChangesEventStreamTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private ChangesFeed FeedOf(string db) => ChangesFeed.For(fixture.Server.Host.Server.Databases.GetDatabase(db));

    private static async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + ChangesSocket.Timeout;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "Timed out waiting until " + what);
            await Task.Delay(20);
        }
    }

    [Fact]
    public async Task AReplayCutShortLeavesTheClientsPositionAtItsLastEvent()
    {
        var db = await fixture.CreateDatabaseAsync();
        for (var part = 0; part < 6; part++)
        {
            var commands = string.Join(',', Enumerable.Range(part * 1000 + 1, 1000).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"Pad\":\"{new string('x', 200)}\",\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
            using var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        var feed = FeedOf(db);
        feed.Options = new ChangesOptions { CloseGrace = TimeSpan.FromSeconds(60) };
        // A client that does not read: the replay of 6,000 changes stops on the full pipe; then
        // the connection is dropped (as TooSlow, a closing database or shutdown would).
        var pipe = new System.IO.Pipelines.Pipe(new System.IO.Pipelines.PipeOptions(pauseWriterThreshold: 16 * 1024, resumeWriterThreshold: 8 * 1024));
        var connection = feed.Connect(ChangesProtocol.EventStream, WatchSet.Empty.WithAllDocuments(true));
        var run = ChangesEventStream.RunAsync(connection, pipe.Writer, 0, CancellationToken.None, CancellationToken.None);
        await Task.Delay(300);
        Assert.False(run.IsCompleted);
        feed.Drop(connection.Id);
        var text = new StringBuilder();
        var reading = Task.Run(async () =>
        {
            while (true)
            {
                var result = await pipe.Reader.ReadAsync();
                foreach (var segment in result.Buffer)
                {
                    text.Append(Encoding.UTF8.GetString(segment.Span));
                }
                pipe.Reader.AdvanceTo(result.Buffer.End);
                if (result.IsCompleted)
                {
                    return;
                }
            }
        });
        await run.WaitAsync(TimeSpan.FromSeconds(30));
        await pipe.Writer.CompleteAsync();
        await reading;
        connection.Dispose();
        // The last id the client holds is where it resumes: every change up to it came.
        var lines = text.ToString().Split('\n');
        var lastId = lines.Where(l => l.StartsWith("id: ", StringComparison.Ordinal)).Select(l => long.Parse(l[4..], System.Globalization.CultureInfo.InvariantCulture)).Last();
        var events = lines.Count(l => l.StartsWith("data: ", StringComparison.Ordinal));
        Assert.True(events < 6000, "the replay was not cut short");
        Assert.Equal(events, lastId);
    }

    private static async Task<long> EtagOf(Task<string> changeVector) => long.Parse((await changeVector)[2..].Split('-')[0]);

    [Fact]
    public async Task EachStreamGetsTheChangesOfItsFilterWithTheirEtagsAsIds()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var orders = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?collection=Orders&id=sentinel/1");
        using var user = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?id=Users/1&id=sentinel/1");
        using var companies = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?prefix=companies/&id=sentinel/1");
        using var all = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events");
        // Each starts with its position: the database's last etag (nothing yet).
        foreach (var stream in new[] { orders, user, companies, all })
        {
            Assert.Equal(new ServerSentEvent(0, null, null), await stream.NextAsync());
        }
        await WaitUntilAsync(() => FeedOf(db).Connections.Count == 4, "the four streams are registered");

        var etags = new Dictionary<string, long>
        {
            ["orders/1"] = await EtagOf(ChangesFeedTests.PutAsync(Client, db, "orders/1", "Orders")),
            ["users/1"] = await EtagOf(ChangesFeedTests.PutAsync(Client, db, "users/1", "Users")),
            ["users/2"] = await EtagOf(ChangesFeedTests.PutAsync(Client, db, "users/2", "Users")),
            ["companies/1"] = await EtagOf(ChangesFeedTests.PutAsync(Client, db, "companies/1", "Companies")),
            ["orders/2"] = await EtagOf(ChangesFeedTests.PutAsync(Client, db, "orders/2", "Orders")),
        };
        await ChangesFeedTests.DeleteAsync(Client, db, "orders/1");
        await ChangesFeedTests.DeleteAsync(Client, db, "users/1");
        await ChangesFeedTests.PutAsync(Client, db, "sentinel/1", "Sentinels");

        var orderEvents = await orders.ChangesUntilAsync("sentinel/1");
        Assert.Equal(["Put orders/1", "Put orders/2", "Delete orders/1", "Put sentinel/1"], orderEvents.Select(e => e.Describe()));
        Assert.Equal(etags["orders/1"], orderEvents[0].Id);
        Assert.Equal(etags["orders/2"], orderEvents[1].Id);
        Assert.Equal("Orders", orderEvents[0].Data!.Value.GetProperty("CollectionName").GetString());
        Assert.Equal($"A:{orderEvents[1].Id}-", orderEvents[1].Data!.Value.GetProperty("ChangeVector").GetString()![..($"A:{orderEvents[1].Id}-".Length)]);
        Assert.True(orderEvents[2].Id > etags["orders/2"]);
        Assert.Equal(["Put users/1", "Delete users/1", "Put sentinel/1"], (await user.ChangesUntilAsync("sentinel/1")).Select(e => e.Describe()));
        Assert.Equal(["Put companies/1", "Put sentinel/1"], (await companies.ChangesUntilAsync("sentinel/1")).Select(e => e.Describe()));
        var everything = await all.ChangesUntilAsync("sentinel/1");
        Assert.Equal(8, everything.Count);
        Assert.Equal(everything.Select(e => e.Id).Order(), everything.Select(e => e.Id));
    }

    [Fact]
    public async Task AResumedStreamReplaysWhatIsStillInTheDatabaseThenGoesLiveWithoutAGapOrADuplicate()
    {
        var db = await fixture.CreateDatabaseAsync();
        for (var i = 1; i <= 5; i++)
        {
            await ChangesFeedTests.PutAsync(Client, db, $"orders/{i}", "Orders");
        }
        long lastSeen;
        var seen = new List<ServerSentEvent>();
        using (var first = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?collection=Orders"))
        {
            await first.NextAsync(); // the position
            await ChangesFeedTests.PutAsync(Client, db, "orders/6", "Orders");
            await ChangesFeedTests.PutAsync(Client, db, "orders/7", "Orders");
            seen.AddRange(await first.ChangesUntilAsync("orders/7"));
            lastSeen = seen[^1].Id!.Value;
        }

        // While nobody listens: a new order, an order changed (it moves to a new etag), one deleted,
        // one created and deleted (only its tombstone is left), and other collections.
        await ChangesFeedTests.PutAsync(Client, db, "orders/8", "Orders");
        await ChangesFeedTests.PutAsync(Client, db, "orders/6", "Orders", ",\"Changed\":true");
        await ChangesFeedTests.DeleteAsync(Client, db, "orders/7");
        await ChangesFeedTests.PutAsync(Client, db, "orders/9", "Orders");
        await ChangesFeedTests.DeleteAsync(Client, db, "orders/9");
        await ChangesFeedTests.PutAsync(Client, db, "users/1", "Users");

        // A writer keeps adding orders across the reconnection: the hand-over from replay to live
        // happens while commits are being published.
        using var stop = new CancellationTokenSource();
        var written = new List<string>();
        var writer = Task.Run(async () =>
        {
            for (var i = 100; !stop.IsCancellationRequested; i++)
            {
                await ChangesFeedTests.PutAsync(Client, db, $"orders/{i}", "Orders");
                lock (written)
                    written.Add($"orders/{i}");
            }
        });
        await WaitUntilAsync(() => { lock (written) return written.Count >= 20; }, "the writer has started");
        using var resumed = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?collection=Orders", lastSeen.ToString());
        var events = new List<ServerSentEvent>();
        ServerSentEvent? position = null;
        while (events.Count < 200)
        {
            var next = await resumed.NextAsync() ?? throw new InvalidOperationException("The stream ended");
            if (next.Data is null)
            {
                position = next;
            }
            else
            {
                events.Add(next);
            }
        }
        stop.Cancel();
        await writer;
        await ChangesFeedTests.PutAsync(Client, db, "orders/last", "Orders");
        events.AddRange(await resumed.ChangesUntilAsync("orders/last"));

        // In etag order, each etag once, all after the one resumed from.
        var ids = events.Select(e => e.Id!.Value).ToList();
        Assert.Equal(ids.Order(), ids);
        Assert.Equal(ids.Count, ids.Distinct().Count());
        Assert.All(ids, id => Assert.True(id > lastSeen));
        Assert.NotNull(position);
        // The replay: what changed while away, as the database has it now.
        var replayed = events.TakeWhile(e => e.Id <= position!.Id).Select(e => e.Describe()).ToList();
        Assert.Equal(["Put orders/8", "Put orders/6", "Delete orders/7", "Delete orders/9"], replayed.Take(4));
        // Every order the writer added arrived exactly once, in the replay or live.
        var orders = events.Select(e => e.Describe()).ToList();
        List<string> added;
        lock (written)
            added = [.. written];
        foreach (var id in added)
        {
            Assert.Single(orders, o => o == "Put " + id);
        }
        Assert.Equal(added.Count + 5, orders.Count);
    }

    [Fact]
    public async Task LastEventIdMayComeAsAQueryParameterAndMustBeANumber()
    {
        var db = await fixture.CreateDatabaseAsync();
        await ChangesFeedTests.PutAsync(Client, db, "orders/1", "Orders");
        await ChangesFeedTests.PutAsync(Client, db, "orders/2", "Orders");
        using (var stream = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?lastEventId=1"))
        {
            var replayed = await stream.NextAsync();
            Assert.Equal("Put orders/2", replayed!.Describe());
            Assert.Equal(new ServerSentEvent(2, null, null), await stream.NextAsync());
        }
        using var bad = await Client.GetAsync($"/databases/{db}/changes/events?collection=Orders&lastEventId=abc");
        await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException");
        using var empty = await Client.GetAsync($"/databases/{db}/changes/events?collection=");
        await Api.AssertErrorAsync(empty, HttpStatusCode.BadRequest, "BadRequestException");
    }

    [Fact]
    public async Task AStreamClosedByItsClientIsRemoved()
    {
        var db = await fixture.CreateDatabaseAsync();
        var feed = FeedOf(db);
        using (var stream = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?prefix=orders/"))
        {
            await stream.NextAsync();
            var connection = Assert.Single(feed.Connections);
            Assert.Equal(ChangesProtocol.EventStream, connection.Protocol);
            Assert.Equal("orders/", Assert.Single(connection.Watches.Prefixes));
        }
        await WaitUntilAsync(() => feed.Connections.Count == 0, "the closed stream is removed");
    }

    [Fact]
    public async Task AStreamThatIsNotReadIsToldItIsTooSlowAndEnds()
    {
        var db = await fixture.CreateDatabaseAsync();
        var feed = FeedOf(db);
        feed.Options = new ChangesOptions { QueueCapacity = 32, CloseGrace = TimeSpan.FromSeconds(60) };
        using var stream = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?collection=Items");
        var connection = Assert.Single(feed.Connections);
        var written = 0;
        while (connection.CloseReason == ChangesCloseReason.None)
        {
            Assert.True(written < 2_000_000, "The unread stream never overflowed.");
            var bulk = string.Join(',', Enumerable.Range(written + 1, 1000).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
            using (var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + bulk + "]}")))
            {
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            }
            written += 1000;
        }
        Assert.Equal(ChangesCloseReason.TooSlow, connection.CloseReason);

        ServerSentEvent? last = null;
        var changes = 0;
        while (await stream.NextAsync() is { } next)
        {
            last = next;
            if (next.Name is null && next.Data is not null)
            {
                changes++;
            }
        }
        Assert.Equal("TooSlow", last!.Name);
        Assert.Equal("TooSlow", last.Data!.Value.GetProperty("Error").GetString());
        Assert.True(changes < written);
        await WaitUntilAsync(() => feed.Connections.Count == 0, "the stream is removed");
    }
}
