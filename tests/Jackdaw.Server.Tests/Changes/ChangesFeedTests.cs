using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Changes;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Changes;

/// <summary>The changes feed over its WebSocket: what each watcher gets, index events, unwatching, back-pressure, bad input, clean-up.</summary>
public sealed class ChangesFeedTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private Uri Server => Client.BaseAddress!;

    internal static async Task<string> PutAsync(HttpClient client, string db, string id, string collection, string extra = "")
    {
        using var response = await client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json($"{{\"Name\":\"{id}\"{extra},\"@metadata\":{{\"@collection\":\"{collection}\"}}}}"));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("ChangeVector").GetString()!;
    }

    internal static async Task DeleteAsync(HttpClient client, string db, string id)
    {
        using var response = await client.DeleteAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
    }

    private ChangesFeed FeedOf(string db) => ChangesFeed.For(fixture.Server.Host.Server.Databases.GetDatabase(db));

    private static string Describe(JsonElement change) => $"{change.GetProperty("Type").GetString()} {change.GetProperty("Id").GetString()}";

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
    public async Task WatchersOfADocumentAPrefixAndACollectionGetExactlyTheirEvents()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var document = await ChangesSocket.ConnectAsync(Server, db);
        await using var prefix = await ChangesSocket.ConnectAsync(Server, db);
        await using var collection = await ChangesSocket.ConnectAsync(Server, db);
        // Ids, prefixes and collections match ignoring case, as RavenDB's do.
        await document.CommandAsync("watch-doc", "Orders/2");
        await prefix.CommandAsync("watch-prefix", "USERS/");
        await collection.CommandAsync("watch-collection", "orders");
        foreach (var socket in new[] { document, prefix, collection })
        {
            await socket.CommandAsync("watch-doc", "sentinel/1");
        }

        await PutAsync(Client, db, "orders/1", "Orders");
        var orders2 = await PutAsync(Client, db, "orders/2", "Orders");
        await PutAsync(Client, db, "users/1", "Users");
        await PutAsync(Client, db, "companies/1", "Companies");
        await PutAsync(Client, db, "users/2", "Users");
        await DeleteAsync(Client, db, "orders/2");
        await PutAsync(Client, db, "usersX/1", "Users");
        await PutAsync(Client, db, "sentinel/1", "Sentinels");

        var documentChanges = await document.DocumentChangesUntilAsync("sentinel/1");
        var prefixChanges = await prefix.DocumentChangesUntilAsync("sentinel/1");
        var collectionChanges = await collection.DocumentChangesUntilAsync("sentinel/1");
        Assert.Equal(["Put orders/2", "Delete orders/2", "Put sentinel/1"], documentChanges.Select(Describe));
        Assert.Equal(["Put users/1", "Put users/2", "Put sentinel/1"], prefixChanges.Select(Describe));
        Assert.Equal(["Put orders/1", "Put orders/2", "Delete orders/2", "Put sentinel/1"], collectionChanges.Select(Describe));

        // RavenDB's shape: CollectionName and the change vector the PUT answered with.
        var put = documentChanges[0];
        Assert.Equal("Orders", put.GetProperty("CollectionName").GetString());
        Assert.Equal(orders2, put.GetProperty("ChangeVector").GetString());
        var delete = documentChanges[1];
        Assert.Equal("Orders", delete.GetProperty("CollectionName").GetString());
        Assert.Matches(@"^A:\d+-", delete.GetProperty("ChangeVector").GetString());
    }

    [Fact]
    public async Task AllDocumentsInCommitOrderThenNothingOnceUnwatched()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.CommandAsync("watch-docs");
        var bulk = string.Join(',', Enumerable.Range(1, 50).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
        using (var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + bulk + "]}")))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
        var changes = await socket.DocumentChangesUntilAsync("items/50");
        Assert.Equal(Enumerable.Range(1, 50).Select(i => $"Put items/{i}"), changes.Select(Describe));
        var etags = changes.Select(c => long.Parse(c.GetProperty("ChangeVector").GetString()![2..].Split('-')[0])).ToList();
        Assert.Equal(etags.Order(), etags);

        await socket.CommandAsync("unwatch-docs");
        await socket.CommandAsync("watch-doc", "sentinel/1");
        await PutAsync(Client, db, "items/51", "Items");
        await PutAsync(Client, db, "sentinel/1", "Sentinels");
        Assert.Equal(["Put sentinel/1"], (await socket.DocumentChangesUntilAsync("sentinel/1")).Select(Describe));

        // Unwatching a document, a prefix or a collection stops its events too.
        await socket.CommandAsync("watch-doc", "a/1");
        await socket.CommandAsync("watch-prefix", "b/");
        await socket.CommandAsync("watch-collection", "Cs");
        await socket.CommandAsync("unwatch-doc", "A/1");
        await socket.CommandAsync("unwatch-prefix", "B/");
        await socket.CommandAsync("unwatch-collection", "cs");
        await PutAsync(Client, db, "a/1", "As");
        await PutAsync(Client, db, "b/1", "Bs");
        await PutAsync(Client, db, "c/1", "Cs");
        await PutAsync(Client, db, "sentinel/1", "Sentinels");
        Assert.Equal(["Put sentinel/1"], (await socket.DocumentChangesUntilAsync("sentinel/1")).Select(Describe));
    }

    [Fact]
    public async Task IndexWatchersGetAddedBatchCompletedSideBySideReplaceAndRemoved()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var one = await ChangesSocket.ConnectAsync(Server, db);
        await using var all = await ChangesSocket.ConnectAsync(Server, db);
        await one.CommandAsync("watch-index", "orders/totals");
        await all.CommandAsync("watch-indexes");

        await PutIndexAsync(db, "map('Orders', o => ({ Name: o.Name }))");
        Assert.Equal("IndexAdded", await NextIndexChangeAsync(one, "Orders/Totals"));
        Assert.Equal("IndexAdded", await NextIndexChangeAsync(all, "Orders/Totals"));
        await PutAsync(Client, db, "orders/1", "Orders");
        Assert.Equal("BatchCompleted", await NextIndexChangeAsync(one, "Orders/Totals", "BatchCompleted"));

        // A changed definition builds beside the index, then takes its place.
        await PutIndexAsync(db, "map('Orders', o => ({ Name: o.Name, Again: o.Name }))");
        Assert.Equal("IndexAdded", await NextIndexChangeAsync(all, "ReplacementOf/Orders/Totals"));
        Assert.Equal("SideBySideReplace", await NextIndexChangeAsync(one, "Orders/Totals", "SideBySideReplace"));

        using (var response = await Client.DeleteAsync($"/databases/{db}/indexes?name=Orders/Totals"))
        {
            Assert.True(response.IsSuccessStatusCode, response.StatusCode.ToString());
        }
        Assert.Equal("IndexRemoved", await NextIndexChangeAsync(one, "Orders/Totals", "IndexRemoved"));
        Assert.Equal("IndexRemoved", await NextIndexChangeAsync(all, "Orders/Totals", "IndexRemoved"));

        // The single-index watcher heard nothing of other indexes.
        await PutIndexAsync(db, "map('Orders', o => ({ Name: o.Name }))", "Orders/Other");
        Assert.Equal("IndexAdded", await NextIndexChangeAsync(all, "Orders/Other"));
        await one.CommandAsync("unwatch-index", "Orders/Totals");
        await one.CommandAsync("watch-doc", "sentinel/1");
        await PutAsync(Client, db, "sentinel/1", "Sentinels");
        var last = await one.NextAsync(m => m.GetProperty("Type").GetString() != "IndexChange" || m.GetProperty("Value").GetProperty("Name").GetString() != "Orders/Totals");
        Assert.Equal("DocumentChange", last.GetProperty("Type").GetString());
    }

    private async Task PutIndexAsync(string db, string map, string name = "Orders/Totals")
    {
        var body = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = name, Maps = new[] { map } } } });
        using var response = await Client.PutAsync($"/databases/{db}/indexes", Api.Json(body));
        Assert.True(response.IsSuccessStatusCode, await response.Content.ReadAsStringAsync());
    }

    /// <summary>The type of the next change of that index (of that type, when given), skipping others.</summary>
    private static async Task<string> NextIndexChangeAsync(ChangesSocket socket, string name, string? type = null)
    {
        var message = await socket.NextAsync(m => m.GetProperty("Type").GetString() == "IndexChange"
            && m.GetProperty("Value").GetProperty("Name").GetString() == name
            && (type is null || m.GetProperty("Value").GetProperty("Type").GetString() == type));
        return message.GetProperty("Value").GetProperty("Type").GetString()!;
    }

    [Fact]
    public async Task ASlowConsumerIsToldItIsTooSlowAndDisconnectedWhileOthersGoOn()
    {
        var db = await fixture.CreateDatabaseAsync();
        var feed = FeedOf(db);
        feed.Options = new ChangesOptions { CloseGrace = TimeSpan.FromSeconds(60) };
        await using var fast = await ChangesSocket.ConnectAsync(Server, db);
        await fast.CommandAsync("watch-collection", "Items");
        // The slow client's queue holds a few changes: a second commit while the first waits overflows it.
        feed.Options = new ChangesOptions { QueueCapacity = 32, CloseGrace = TimeSpan.FromSeconds(60) };
        using var slow = new ClientWebSocket();
        // Small socket buffers so that the kernel does not absorb what the client leaves unread.
        slow.Options.SetBuffer(1024, 1024);
        await slow.ConnectAsync(ChangesSocket.UriOf(Server, db), CancellationToken.None);
        await slow.SendAsync("{\"CommandId\":1,\"Command\":\"watch-docs\"}"u8.ToArray(), WebSocketMessageType.Text, true, CancellationToken.None);
        await WaitUntilAsync(() => feed.Connections.Any(c => c.Watches.AllDocuments), "the slow client watches every document");
        var slowConnection = feed.Connections.Single(c => c.Watches.AllDocuments);

        // Write until the slow connection overflows; the server never waits for it.
        var written = 0;
        while (slowConnection.CloseReason == ChangesCloseReason.None)
        {
            Assert.True(written < 2_000_000, "The unread connection never overflowed.");
            var bulk = string.Join(',', Enumerable.Range(written + 1, 1000).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
            using (var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + bulk + "]}")))
            {
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            }
            written += 1000;
        }
        Assert.Equal(ChangesCloseReason.TooSlow, slowConnection.CloseReason);

        // Reading now, the slow client gets what was already on its way, then the notice and the close.
        var received = new List<JsonElement>();
        await ChangesSocket.ReadUntilClosedAsync(slow, received.Add).WaitAsync(ChangesSocket.Timeout);
        var notice = received[^1];
        Assert.Equal("Error", notice.GetProperty("Type").GetString());
        Assert.Equal("TooSlow", notice.GetProperty("Error").GetString());
        Assert.StartsWith("TooSlow:", notice.GetProperty("Exception").GetString());
        Assert.Equal(WebSocketCloseStatus.PolicyViolation, slow.CloseStatus);
        Assert.Equal("TooSlow", slow.CloseStatusDescription);
        Assert.True(received.Count(m => m.GetProperty("Type").GetString() == "DocumentChange") < written);
        await WaitUntilAsync(() => !feed.Connections.Contains(slowConnection), "the slow connection is removed");

        // The reading watcher got every change, in order.
        var changes = await fast.DocumentChangesUntilAsync($"items/{written}");
        Assert.Equal(Enumerable.Range(1, written).Select(i => $"items/{i}"), changes.Select(c => c.GetProperty("Id").GetString()));
    }

    [Fact]
    public async Task WatchesPerConnectionAreBounded()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.SendTextAsync($"{{\"CommandId\":1,\"Command\":\"watch-prefix\",\"Param\":\"{new string('p', ChangesConnection.MaxParamLength + 1)}\"}}");
        var tooLong = await socket.NextAsync();
        Assert.Equal("Error", tooLong.GetProperty("Type").GetString());
        Assert.Contains("at most", tooLong.GetProperty("Exception").GetString(), StringComparison.Ordinal);
        for (var i = 0; i < ChangesConnection.MaxWatches; i++)
        {
            await socket.SendTextAsync($"{{\"Command\":\"watch-doc\",\"Param\":\"orders/{i}\"}}");
        }
        await socket.SendTextAsync("{\"CommandId\":2,\"Command\":\"watch-doc\",\"Param\":\"orders/one-more\"}");
        var tooMany = await socket.NextAsync(m => m.GetProperty("Type").GetString() == "Error");
        Assert.Equal(2, tooMany.GetProperty("CommandId").GetInt64());
        Assert.Contains("unwatch", tooMany.GetProperty("Exception").GetString(), StringComparison.Ordinal);
        // Unwatching makes room; the connection goes on.
        await socket.CommandAsync("unwatch-doc", "orders/0");
        await socket.CommandAsync("watch-doc", "orders/one-more");
        await PutAsync(Client, db, "orders/one-more", "Orders");
        Assert.Equal("Put orders/one-more", Describe((await socket.DocumentChangesUntilAsync("orders/one-more"))[0]));
    }

    [Theory]
    [InlineData("not json", null)]
    [InlineData("{", null)]
    [InlineData("[1,2,3]", null)]
    [InlineData("{\"CommandId\":7}", 7L)]
    [InlineData("{\"CommandId\":8,\"Command\":\"watch-everything\"}", 8L)]
    [InlineData("{\"CommandId\":9,\"Command\":\"watch-doc\"}", 9L)]
    [InlineData("{\"CommandId\":10,\"Command\":\"watch-prefix\",\"Param\":\"\"}", 10L)]
    [InlineData("{\"CommandId\":\"eleven\",\"Command\":\"watch-docs\"}", null)]
    [InlineData("{\"CommandId\":12,\"Command\":42}", 12L)]
    [InlineData("{\"CommandId\":13,\"Command\":\"watch-docs\"} {\"CommandId\":14}", 13L)]
    [InlineData("{\"CommandId\":15,\"Command\":\"watch-doc\",\"Param\":\"\\ud800\"}", 15L)]
    [InlineData("{\"CommandId\":16,\"Command\":\"\\udc00x\"}", 16L)]
    public async Task ABadCommandIsAnsweredWithAnErrorAndTheConnectionGoesOn(string text, long? commandId)
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.SendTextAsync(text);
        var error = await socket.NextAsync();
        Assert.Equal("Error", error.GetProperty("Type").GetString());
        Assert.Equal("InvalidCommand", error.GetProperty("Error").GetString());
        Assert.False(string.IsNullOrWhiteSpace(error.GetProperty("Exception").GetString()));
        if (commandId is { } id)
        {
            Assert.Equal(id, error.GetProperty("CommandId").GetInt64());
        }
        else
        {
            Assert.False(error.TryGetProperty("CommandId", out _));
        }

        await socket.CommandAsync("watch-doc", "orders/1");
        await PutAsync(Client, db, "orders/1", "Orders");
        Assert.Equal("Put orders/1", Describe((await socket.DocumentChangesUntilAsync("orders/1"))[0]));
    }

    [Fact]
    public async Task ABinaryMessageIsAnsweredWithAnErrorAndTheConnectionGoesOn()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.Socket.SendAsync(new byte[] { 1, 2, 3 }, WebSocketMessageType.Binary, true, CancellationToken.None);
        var error = await socket.NextAsync();
        Assert.Equal("BinaryMessage", error.GetProperty("Error").GetString());
        await socket.CommandAsync("watch-docs");
    }

    [Fact]
    public async Task AHugeMessageIsRefusedAndClosesOnlyItsConnection()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var bystander = await ChangesSocket.ConnectAsync(Server, db);
        await bystander.CommandAsync("watch-docs");
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        var huge = Encoding.UTF8.GetBytes("{\"CommandId\":1,\"Command\":\"watch-doc\",\"Param\":\"" + new string('x', 4 * 1024 * 1024) + "\"}");
        // Sent in parts, as a client streaming a large message would.
        for (var offset = 0; offset < huge.Length; offset += 64 * 1024)
        {
            var part = huge.AsMemory(offset, Math.Min(64 * 1024, huge.Length - offset));
            try
            {
                await socket.Socket.SendAsync(part, WebSocketMessageType.Text, offset + part.Length == huge.Length, CancellationToken.None);
            }
            catch (Exception e) when (e is WebSocketException or InvalidOperationException)
            {
                break; // the server closed on us mid-message
            }
        }
        var error = await socket.NextAsync();
        Assert.Equal("MessageTooBig", error.GetProperty("Error").GetString());
        await socket.Closed.WaitAsync(ChangesSocket.Timeout);
        Assert.Equal(WebSocketCloseStatus.MessageTooBig, socket.Socket.CloseStatus);

        await PutAsync(Client, db, "orders/1", "Orders");
        Assert.Equal("Put orders/1", Describe((await bystander.DocumentChangesUntilAsync("orders/1"))[0]));
    }

    [Fact]
    public async Task CommandsRavenDbClientsSendForOtherFeaturesAreConfirmed()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.CommandAsync("watch-counters");
        await socket.CommandAsync("watch-topology-change");
        await socket.CommandAsync("WATCH-DOCS");
    }

    [Fact]
    public async Task ClosingAConnectionRemovesItsSubscriptionAndEachConnectionHasItsOwnId()
    {
        var db = await fixture.CreateDatabaseAsync();
        var feed = FeedOf(db);
        var first = await ChangesSocket.ConnectAsync(Server, db);
        await using var second = await ChangesSocket.ConnectAsync(Server, db);
        await first.CommandAsync("watch-doc", "orders/1");
        await second.CommandAsync("watch-collection", "Orders");

        using (var response = await Client.GetAsync($"/databases/{db}/changes/debug"))
        {
            var connections = (await Api.JsonAsync(response)).GetProperty("Connections").EnumerateArray().ToList();
            Assert.Equal(2, connections.Count);
            Assert.NotEqual(connections[0].GetProperty("Id").GetInt64(), connections[1].GetProperty("Id").GetInt64());
            Assert.Contains(connections, c => c.GetProperty("WatchDocuments").EnumerateArray().Select(x => x.GetString()).SequenceEqual(["orders/1"]));
            Assert.Contains(connections, c => c.GetProperty("WatchCollections").EnumerateArray().Select(x => x.GetString()).SequenceEqual(["Orders"]));
            Assert.All(connections, c => Assert.Equal("WebSocket", c.GetProperty("Protocol").GetString()));
        }

        await first.DisposeAsync();
        await WaitUntilAsync(() => feed.Connections.Count == 1, "the closed connection is removed");
        Assert.Contains("Orders", feed.Connections.Single().Watches.Collections);

        // DELETE /changes?id= closes a connection from the server side.
        var id = feed.Connections.Single().Id;
        using (var response = await Client.DeleteAsync($"/databases/{db}/changes?id={id}"))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        await second.Closed.WaitAsync(ChangesSocket.Timeout);
        Assert.Equal("Dropped", second.Socket.CloseStatusDescription);
        await WaitUntilAsync(() => feed.Connections.Count == 0, "the dropped connection is removed");
        using (var response = await Client.DeleteAsync($"/databases/{db}/changes?id={id}"))
        {
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        }
    }

    [Fact]
    public async Task DeletingTheDatabaseClosesItsConnections()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.CommandAsync("watch-docs");
        using (var response = await Client.DeleteAsync($"/admin/databases?name={db}"))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        await socket.Closed.WaitAsync(ChangesSocket.Timeout);
        Assert.Equal(WebSocketCloseStatus.EndpointUnavailable, socket.Socket.CloseStatus);
        Assert.Equal("DatabaseClosed", socket.Socket.CloseStatusDescription);
    }

    [Fact]
    public async Task APlainGetIsToldTheRouteIsAWebSocket()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.GetAsync($"/databases/{db}/changes");
        Assert.Equal(
            "This route is a WebSocket: connect with ws://.../databases/{db}/changes, or read server-sent events from /databases/{db}/changes/events?collection=Orders.",
            await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException"));
    }
}
