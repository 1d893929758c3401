using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Changes;

/// <summary>
/// Operation status changes on the changes feed (RavenDB's <c>OperationStatusChange</c>): a bulk
/// insert's progress while it runs and its end, over the WebSocket and as server-sent events, and
/// the same state at <c>operations/state</c>. Each insert is held open by the test until the
/// progress it waits for has come, so nothing depends on how fast the machine is.
/// </summary>
public sealed class OperationChangesTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private Uri Server => Client.BaseAddress!;

    private static bool IsOperationChange(JsonElement message, long id) =>
        message.GetProperty("Type").GetString() == "OperationStatusChange"
        && message.GetProperty("Value").GetProperty("OperationId").GetInt64() == id;

    private static JsonElement StateOf(JsonElement message) => message.GetProperty("Value").GetProperty("State");

    private static string StatusOf(JsonElement state) => state.GetProperty("Status").GetString()!;

    /// <summary>The next state of operation <paramref name="id"/> on the socket that passes <paramref name="match"/>.</summary>
    private static async Task<JsonElement> NextStateAsync(ChangesSocket socket, long id, Func<JsonElement, bool> match) =>
        StateOf(await socket.NextAsync(m => IsOperationChange(m, id) && match(StateOf(m))));

    private static Func<JsonElement, bool> InProgress(Func<JsonElement, bool> progress) =>
        state => StatusOf(state) == "InProgress" && progress(state.GetProperty("Progress"));

    private static Func<JsonElement, bool> Ended(string status) => state => StatusOf(state) == status;

    /// <summary>Every message up to the document change of <paramref name="sentinel"/> (which the socket watches).</summary>
    private static async Task<List<JsonElement>> MessagesUntilAsync(ChangesSocket socket, string sentinel)
    {
        var messages = new List<JsonElement>();
        while (true)
        {
            var message = await socket.NextAsync();
            if (message.GetProperty("Type").GetString() == "DocumentChange" && message.GetProperty("Value").GetProperty("Id").GetString() == sentinel)
            {
                return messages;
            }
            messages.Add(message);
        }
    }

    private async Task<JsonElement> OperationStateAsync(string db, long id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/operations/state?id={id}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await Api.JsonAsync(response);
    }

    [Fact]
    public async Task AWatcherOfABulkInsertGetsItsProgressWhileItRunsThenItsCompletion()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var insert = await HeldBulkInsert.StartAsync(Client, db);
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        // RavenDB's clients send the id as a string.
        await socket.CommandAsync("watch-operation", insert.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
        await socket.CommandAsync("watch-doc", "sentinel/1");

        // Read but not yet committed (a batch is 1,024 documents): counted as processed.
        await insert.SendAsync(1, 100);
        var state = await NextStateAsync(socket, insert.Id, InProgress(p => p.GetProperty("DocumentsProcessed").GetInt64() >= 100));
        Assert.Equal(JsonValueKind.Null, state.GetProperty("Result").ValueKind);
        Assert.Equal("Raven.Client.Documents.Operations.OperationState, Raven.Client", state.GetProperty("$type").GetString());
        var progress = state.GetProperty("Progress");
        Assert.Equal("Raven.Client.Documents.Operations.BulkInsertProgress, Raven.Client", progress.GetProperty("$type").GetString());
        Assert.Equal(100, progress.GetProperty("DocumentsProcessed").GetInt64());
        Assert.Equal(100, progress.GetProperty("Processed").GetInt64());
        Assert.Equal(0, progress.GetProperty("Total").GetInt64());
        Assert.Equal(0, progress.GetProperty("BatchCount").GetInt64());
        Assert.Equal(JsonValueKind.Null, progress.GetProperty("LastProcessedId").ValueKind);
        foreach (var none in new[] { "AttachmentsProcessed", "CountersProcessed", "TimeSeriesProcessed" })
        {
            Assert.Equal(0, progress.GetProperty(none).GetInt64());
        }

        // A full batch is counted once durable, while the client still holds the stream open.
        await insert.SendAsync(101, 1900);
        progress = (await NextStateAsync(socket, insert.Id, InProgress(p => p.GetProperty("Total").GetInt64() >= 1024 && p.GetProperty("DocumentsProcessed").GetInt64() == 2000))).GetProperty("Progress");
        Assert.Equal(1024, progress.GetProperty("Total").GetInt64());
        Assert.Equal(1, progress.GetProperty("BatchCount").GetInt64());
        Assert.Equal("items/1024", progress.GetProperty("LastProcessedId").GetString());
        Assert.Equal(2000, progress.GetProperty("DocumentsProcessed").GetInt64());

        using (var response = await insert.EndAsync())
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        var completed = await NextStateAsync(socket, insert.Id, Ended("Completed"));
        Assert.Equal(JsonValueKind.Null, completed.GetProperty("Progress").ValueKind);
        var result = completed.GetProperty("Result");
        Assert.Equal("Raven.Client.Documents.Operations.BulkOperationResult, Raven.Client", result.GetProperty("$type").GetString());
        Assert.Equal(2000, result.GetProperty("Total").GetInt64());
        Assert.Equal(2000, result.GetProperty("DocumentsProcessed").GetInt64());
        Assert.Equal("Processed 2,000 items.", result.GetProperty("Message").GetString());
        Assert.Equal(completed.GetRawText(), (await OperationStateAsync(db, insert.Id)).GetRawText());

        // Nothing of the operation follows its final state.
        await ChangesFeedTests.PutAsync(Client, db, "sentinel/1", "Sentinels");
        Assert.DoesNotContain(await MessagesUntilAsync(socket, "sentinel/1"), m => IsOperationChange(m, insert.Id));
    }

    [Fact]
    public async Task WatchingAllOperationsGetsEachOneAndUnwatchingStopsThem()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var all = await ChangesSocket.ConnectAsync(Server, db);
        await using var one = await ChangesSocket.ConnectAsync(Server, db);
        await using var first = await HeldBulkInsert.StartAsync(Client, db);
        await using var second = await HeldBulkInsert.StartAsync(Client, db);
        await all.CommandAsync("watch-operations");
        await all.CommandAsync("watch-doc", "sentinel/1");
        await one.CommandAsync("watch-operation", first.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
        await one.CommandAsync("watch-doc", "sentinel/1");

        await first.SendAsync(1, 10, "first/");
        await second.SendAsync(1, 20, "second/");
        await NextStateAsync(all, first.Id, InProgress(p => p.GetProperty("DocumentsProcessed").GetInt64() == 10));
        using (var response = await first.EndAsync())
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        using (var response = await second.EndAsync())
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        await ChangesFeedTests.PutAsync(Client, db, "sentinel/1", "Sentinels");

        // Both ended before the sentinel was written, so both final states came before it.
        var seen = await MessagesUntilAsync(all, "sentinel/1");
        Assert.Contains(seen, m => IsOperationChange(m, first.Id) && StatusOf(StateOf(m)) == "Completed");
        Assert.Contains(seen, m => IsOperationChange(m, second.Id) && StatusOf(StateOf(m)) == "Completed");
        var seenByOne = await MessagesUntilAsync(one, "sentinel/1");
        Assert.Contains(seenByOne, m => IsOperationChange(m, first.Id) && StatusOf(StateOf(m)) == "Completed");
        Assert.DoesNotContain(seenByOne, m => IsOperationChange(m, second.Id));

        await all.CommandAsync("unwatch-operations");
        await one.CommandAsync("unwatch-operation", first.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
        await using (var third = await HeldBulkInsert.StartAsync(Client, db))
        {
            await third.SendAsync(1, 5, "third/");
            using var response = await third.EndAsync();
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        await ChangesFeedTests.PutAsync(Client, db, "sentinel/1", "Sentinels");
        Assert.DoesNotContain(await MessagesUntilAsync(all, "sentinel/1"), m => m.GetProperty("Type").GetString() == "OperationStatusChange");
        Assert.DoesNotContain(await MessagesUntilAsync(one, "sentinel/1"), m => m.GetProperty("Type").GetString() == "OperationStatusChange");
    }

    [Fact]
    public async Task AFailedBulkInsertEndsFaultedAndAKilledOneCanceled()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.CommandAsync("watch-operations");

        await using (var failing = await HeldBulkInsert.StartAsync(Client, db))
        {
            await failing.SendAsync(1, 5);
            await failing.SendRawAsync(",{\"Id\":\"items/6\",\"Type\":\"PATCH\",\"Document\":{}}");
            var faulted = await NextStateAsync(socket, failing.Id, Ended("Faulted"));
            Assert.Equal(JsonValueKind.Null, faulted.GetProperty("Progress").ValueKind);
            var result = faulted.GetProperty("Result");
            Assert.Equal("Raven.Client.Documents.Operations.OperationExceptionResult, Raven.Client", result.GetProperty("$type").GetString());
            Assert.Equal("BadRequestException", result.GetProperty("Type").GetString());
            Assert.Equal(400, result.GetProperty("StatusCode").GetInt32());
            Assert.Contains("not 'PATCH'", result.GetProperty("Error").GetString(), StringComparison.Ordinal);
            Assert.Equal(0, result.GetProperty("Total").GetInt64());
        }

        await using var killed = await HeldBulkInsert.StartAsync(Client, db);
        await killed.SendAsync(1, 5);
        await NextStateAsync(socket, killed.Id, InProgress(p => p.GetProperty("DocumentsProcessed").GetInt64() == 5));
        using (var kill = await Client.PostAsync($"/databases/{db}/operations/kill?id={killed.Id}", null))
        {
            Assert.Equal(HttpStatusCode.NoContent, kill.StatusCode);
        }
        var canceled = await NextStateAsync(socket, killed.Id, Ended("Canceled"));
        Assert.Contains("killed", canceled.GetProperty("Result").GetProperty("Message").GetString(), StringComparison.Ordinal);
        Assert.Equal("Canceled", StatusOf(await OperationStateAsync(db, killed.Id)));
    }

    [Fact]
    public async Task AnEventStreamOfOperationsGetsTheirProgressAndEndAsNamedEventsWithoutIds()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var watched = await HeldBulkInsert.StartAsync(Client, db);
        await using var other = await HeldBulkInsert.StartAsync(Client, db);
        using var one = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?operation={watched.Id}");
        using var all = await EventStreamClient.OpenAsync(Client, $"/databases/{db}/changes/events?operations=true&id=sentinel/1");
        // Each stream starts with its position in the etag feeds.
        Assert.Equal(new ServerSentEvent(0, null, null), await one.NextAsync());
        Assert.Equal(new ServerSentEvent(0, null, null), await all.NextAsync());

        await watched.SendAsync(1, 30);
        await other.SendAsync(1, 40, "others/");
        var progress = await one.NextAsync();
        Assert.Equal("OperationStatusChange", progress!.Name);
        Assert.Null(progress.Id);
        Assert.Equal(watched.Id, progress.Data!.Value.GetProperty("OperationId").GetInt64());
        Assert.Equal("InProgress", StatusOf(progress.Data.Value.GetProperty("State")));

        using (var response = await watched.EndAsync())
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        using (var response = await other.EndAsync())
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        // Only the watched operation's events, never a document change of its insert.
        while (true)
        {
            var next = await one.NextAsync();
            Assert.Equal("OperationStatusChange", next!.Name);
            Assert.Null(next.Id);
            Assert.Equal(watched.Id, next.Data!.Value.GetProperty("OperationId").GetInt64());
            var state = next.Data.Value.GetProperty("State");
            if (StatusOf(state) == "Completed")
            {
                Assert.Equal(30, state.GetProperty("Result").GetProperty("Total").GetInt64());
                break;
            }
        }

        // A stream of all operations (and a document, here) has both ends before the sentinel.
        await ChangesFeedTests.PutAsync(Client, db, "sentinel/1", "Sentinels");
        var completed = new HashSet<long>();
        while (true)
        {
            var next = await all.NextAsync();
            if (next!.Name is null)
            {
                Assert.Equal("sentinel/1", next.Data!.Value.GetProperty("Id").GetString());
                Assert.NotNull(next.Id);
                break;
            }
            Assert.Equal("OperationStatusChange", next.Name);
            if (StatusOf(next.Data!.Value.GetProperty("State")) == "Completed")
            {
                completed.Add(next.Data.Value.GetProperty("OperationId").GetInt64());
            }
        }
        Assert.Equal([watched.Id, other.Id], completed.Order());
    }

    [Fact]
    public async Task AnOperationIdThatIsNotANumberIsRefused()
    {
        var db = await fixture.CreateDatabaseAsync();
        await using var socket = await ChangesSocket.ConnectAsync(Server, db);
        await socket.SendTextAsync("{\"CommandId\":5,\"Command\":\"watch-operation\",\"Param\":\"seven\"}");
        var error = await socket.NextAsync(m => m.GetProperty("Type").GetString() == "Error");
        Assert.Equal(5, error.GetProperty("CommandId").GetInt64());
        Assert.Contains("operation id", error.GetProperty("Exception").GetString(), StringComparison.Ordinal);
        await socket.CommandAsync("watch-operation", "7");

        using var response = await Client.GetAsync($"/databases/{db}/changes/events?operation=seven");
        Assert.Contains("operation id", await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
    }
}
