using System.Net;
using System.Net.Http.Json;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Replication;

public class ReplicationTests
{
    private static readonly TimeSpan Converge = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task WritesAndDeletesOnEitherNodeReachTheOther()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B");
        await nodes.PutAsync(0, "users/1", new { Name = "Ann" });
        await nodes.PutAsync(1, "users/2", new { Name = "Bob" });
        await nodes.WaitConvergedAsync(Converge);
        Assert.Equal(2, nodes.Documents(0).Count);

        await nodes.DeleteAsync(1, "users/1");
        await nodes.PutAsync(0, "users/2", new { Name = "Bobby" });
        await Poll.UntilAsync(() => Task.FromResult(!nodes.Documents(0).ContainsKey("users/1") && nodes.Documents(1)["users/2"].Json.Contains("Bobby")), Converge, "the delete and the update to cross");
        await nodes.WaitConvergedAsync(Converge);
        Assert.Single(nodes.Documents(1));
    }

    [Fact]
    public async Task ReplicatedVersionKeepsItsChangeVectorAndALocalWriteAddsTheNodesEntry()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B");
        await nodes.PutAsync(0, "users/1", new { Name = "Ann" });
        await nodes.WaitConvergedAsync(Converge);
        var a = nodes.DatabaseOf(0);
        var b = nodes.DatabaseOf(1);
        var first = nodes.Documents(1)["users/1"].ChangeVector;
        Assert.Matches($"^A:\\d+-{a.DatabaseId}$", first);

        await nodes.PutAsync(1, "users/1", new { Name = "Ann B" });
        await nodes.WaitConvergedAsync(Converge);
        var second = nodes.Documents(0)["users/1"].ChangeVector;
        Assert.Equal($"{first}, B:{ChangeVectors.EtagOf(second, b.DatabaseId)}-{b.DatabaseId}", second);
        Assert.Equal(ChangeVectorOrder.Newer, ChangeVectors.Compare(second, first));

        // The ETag is the whole vector, and If-Match with it works across nodes.
        using var get = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/1");
        Assert.Equal($"\"{second}\"", get.Headers.ETag!.Tag);
        using var put = new HttpRequestMessage(HttpMethod.Put, $"/databases/{ReplicationNodes.Database}/docs?id=users/1") { Content = JsonContent.Create(new { Name = "Ann again" }) };
        put.Headers.TryAddWithoutValidation("If-Match", $"\"{second}\"");
        using var answer = await nodes.Client(0).SendAsync(put);
        Assert.Equal(HttpStatusCode.Created, answer.StatusCode);
    }

    [Fact]
    public async Task GeneratedIdsAndHiLoCarryTheNodeTag()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        using var put = await nodes.Client(1).PutAsJsonAsync($"/databases/{ReplicationNodes.Database}/docs?id=orders/", new { Total = 1 });
        var id = ReplicationNodes.Json(await put.Content.ReadAsStringAsync()).GetProperty("Id").GetString();
        Assert.EndsWith("-B", id);
        using var hilo = await nodes.Client(1).GetAsync($"/databases/{ReplicationNodes.Database}/hilo/next?tag=orders&lastBatchSize=0&lastRangeAt=0001-01-01T00:00:00.0000000&identityPartsSeparator=/&lastMax=0");
        Assert.Equal("B", ReplicationNodes.Json(await hilo.Content.ReadAsStringAsync()).GetProperty("ServerTag").GetString());
        using var operation = await nodes.Client(1).GetAsync($"/databases/{ReplicationNodes.Database}/operations/next-operation-id");
        Assert.Equal("B", ReplicationNodes.Json(await operation.Content.ReadAsStringAsync()).GetProperty("NodeTag").GetString());
        using var query = await nodes.Client(1).PostAsync($"/databases/{ReplicationNodes.Database}/queries",
            new StringContent("{\"Query\":\"from Orders\"}", Encoding.UTF8, "application/json"));
        Assert.Equal("B", ReplicationNodes.Json(await query.Content.ReadAsStringAsync()).GetProperty("NodeTag").GetString());
    }

    [Fact]
    public async Task StoppedDestinationCatchesUpWithoutApplyingAnythingTwice()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B");
        for (var i = 0; i < 20; i++)
        {
            await nodes.PutAsync(0, $"items/{i}", new { Number = i });
        }
        await nodes.WaitConvergedAsync(Converge);

        await nodes.StopAsync(1);
        for (var i = 20; i < 50; i++)
        {
            await nodes.PutAsync(0, $"items/{i}", new { Number = i });
        }
        for (var i = 0; i < 5; i++)
        {
            await nodes.DeleteAsync(0, $"items/{i}");
        }
        // Replication holds the tombstones B has not received: a clean-up now removes none.
        Assert.Equal(0, await nodes.DatabaseOf(0).Tombstones.CleanAsync());
        await nodes.StartAgainAsync(1);
        await nodes.WaitConvergedAsync(Converge);

        // The new instance of B received exactly what it missed: 30 versions and 5 deletions. (Its
        // counters move just after the batch is visible: wait for them, then check nothing more.)
        var stats = nodes.StatsOf(1);
        await Poll.UntilAsync(() => Task.FromResult(stats.Applied + stats.AlreadyMerged + stats.Repeated >= 35), Converge, "B's counters");
        Assert.True(stats.Applied == 35 && stats.Repeated == 0 && stats.AlreadyMerged == 0, stats.ToString());
        Assert.Equal(45, nodes.Documents(1).Count);
        // Once B acknowledged them, they may go.
        await Poll.UntilAsync(async () => await nodes.DatabaseOf(0).Tombstones.CleanAsync() > 0 || ReadTombstoneCount(nodes, 0) == 0, Converge, "A's tombstones to be cleaned up");
    }

    [Fact]
    public async Task TombstonesStayHeldAfterARestartUntilTheTopologyIsGivenAgain()
    {
        using var folder = new TempFolder("jackdaw-replication-hold");
        Action<Jackdaw.Server.Hosting.ServerOptions> asA = options => options.Database = options.Database with { NodeTag = "A" };
        await using (var server = await InProcessServer.StartInFolderAsync(folder.Path, asA))
        {
            using (var created = await server.Client.PutAsync($"/admin/databases?name={ReplicationNodes.Database}", null))
            {
                created.EnsureSuccessStatusCode();
            }
            // B is down for good: it never acknowledges anything.
            server.Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new ReplicationNode("B", "http://127.0.0.1:1")]);
            using (var put = await server.Client.PutAsJsonAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/1", new { Name = "Ann" }))
            {
                put.EnsureSuccessStatusCode();
            }
            using (var delete = await server.Client.DeleteAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/1"))
            {
                delete.EnsureSuccessStatusCode();
            }
            var database = server.Host.Server.Databases.GetDatabase(ReplicationNodes.Database);
            await Poll.UntilAsync(async () =>
            {
                Assert.Equal(0, await database.Tombstones.CleanAsync());
                return DatabaseReplication.Of(database).DurableTombstoneHold == 0;
            }, Converge, "the tombstone hold to be stored");
        }

        // Restarted, and a clean-up runs before the cluster gives the topology again: B still
        // needs the deletion, so the tombstone stays.
        await using (var server = await InProcessServer.StartInFolderAsync(folder.Path, asA))
        {
            var database = server.Host.Server.Databases.GetDatabase(ReplicationNodes.Database);
            Assert.Equal(0, await database.Tombstones.CleanAsync());
            using (var reader = database.BeginRead())
            {
                Assert.Equal(1, reader.TombstoneCount);
            }

            // The cluster says the database has no other node now: the hold goes, then the tombstone.
            server.Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", []);
            await Poll.UntilAsync(async () => await database.Tombstones.CleanAsync() > 0, Converge, "the tombstone to be cleaned up");
            Assert.Null(DatabaseReplication.Of(database).DurableTombstoneHold);
        }
    }

    private static long ReadTombstoneCount(ReplicationNodes nodes, int node)
    {
        using var reader = nodes.DatabaseOf(node).BeginRead();
        return reader.TombstoneCount;
    }

    [Fact]
    public async Task ConcurrentWritesToTheSameIdsConvergeToOneVersionEverywhere()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B", "C");
        for (var i = 0; i < 10; i++)
        {
            for (var node = 0; node < 3; node++)
            {
                await nodes.PutAsync(node, $"users/{i}", new { Name = $"written on {nodes.Tag(node)}", Round = i });
            }
        }
        // A put on one side, a delete on the other.
        await nodes.PutAsync(0, "users/deleted", new { Name = "A" });
        await nodes.PutAsync(1, "users/deleted", new { Name = "B" });
        await nodes.DeleteAsync(1, "users/deleted");
        nodes.Wire();
        await nodes.WaitConvergedAsync(Converge);

        var documents = nodes.Documents(0);
        foreach (var (id, version) in documents)
        {
            if (id.StartsWith("users/", StringComparison.Ordinal) && id != "users/deleted")
            {
                Assert.Equal(3, ChangeVectors.Parse(version.ChangeVector).Count);
            }
        }
        // The counters move just after a batch is visible: poll them.
        await Poll.UntilAsync(() => Task.FromResult(nodes.StatsOf(0).Conflicts + nodes.StatsOf(1).Conflicts + nodes.StatsOf(2).Conflicts > 0), Converge, "a conflict to be counted");
    }

    [Fact]
    public async Task KeptConflictIsListedAnsweredAs409AndResolvedByAPut()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        for (var node = 0; node < 2; node++)
        {
            using var solver = await nodes.Client(node).PutAsync($"/databases/{ReplicationNodes.Database}/admin/replication/conflicts/solver",
                new StringContent("{\"ResolveToLatest\":false,\"ResolveByCollection\":{}}", Encoding.UTF8, "application/json"));
            solver.EnsureSuccessStatusCode();
            await nodes.PutAsync(node, "users/1", new { Name = $"on {nodes.Tag(node)}" });
        }
        nodes.Wire();

        await Poll.UntilAsync(async () =>
        {
            using var list = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/replication/conflicts");
            return ReplicationNodes.Json(await list.Content.ReadAsStringAsync()).GetProperty("TotalResults").GetInt32() == 1;
        }, Converge, "the conflict to be listed on A");
        using (var versions = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/replication/conflicts?docId=users/1"))
        {
            var results = ReplicationNodes.Json(await versions.Content.ReadAsStringAsync()).GetProperty("Results");
            Assert.Equal(2, results.GetArrayLength());
            Assert.Equal(["on A", "on B"], results.EnumerateArray().Select(r => r.GetProperty("Doc").GetProperty("name").GetString()).Order());
        }
        using (var get = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/1"))
        {
            Assert.Equal(HttpStatusCode.Conflict, get.StatusCode);
            var error = ReplicationNodes.Json(await get.Content.ReadAsStringAsync());
            Assert.Equal("DocumentConflictException", error.GetProperty("Type").GetString());
            // What RavenDB's clients read to build their DocumentConflictException.
            Assert.Equal("users/1", error.GetProperty("DocId").GetString());
            Assert.True(error.GetProperty("LargestEtag").GetInt64() > 0);
        }
        // Every read of the id says so: several ids at once, and HEAD.
        using (var many = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/2&id=users/1"))
        {
            Assert.Equal(HttpStatusCode.Conflict, many.StatusCode);
        }
        using (var head = await nodes.Client(0).SendAsync(new HttpRequestMessage(HttpMethod.Head, $"/databases/{ReplicationNodes.Database}/docs?id=users/1")))
        {
            Assert.Equal(HttpStatusCode.Conflict, head.StatusCode);
        }

        await nodes.PutAsync(0, "users/1", new { Name = "resolved" });
        await nodes.WaitConvergedAsync(Converge);
        await Poll.UntilAsync(async () =>
        {
            using var list = await nodes.Client(1).GetAsync($"/databases/{ReplicationNodes.Database}/replication/conflicts");
            return ReplicationNodes.Json(await list.Content.ReadAsStringAsync()).GetProperty("TotalResults").GetInt32() == 0;
        }, Converge, "the conflict to be resolved on B");
        Assert.Contains("resolved", nodes.Documents(1)["users/1"].Json);
    }

    [Fact]
    public async Task AGetByIdLooksForConflictsOnlyWhenTheDatabaseMayHaveThemAcrossARestart()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        using (var reader = nodes.DatabaseOf(0).BeginRead())
        {
            Assert.False(reader.MayHaveConflicts);
        }
        for (var node = 0; node < 2; node++)
        {
            // The route RavenDB's ModifyConflictSolverOperation posts to.
            using var solver = await nodes.Client(node).PostAsync($"/admin/replication/conflicts/solver?name={ReplicationNodes.Database}",
                new StringContent("{\"ResolveToLatest\":false}", Encoding.UTF8, "application/json"));
            solver.EnsureSuccessStatusCode();
            var result = ReplicationNodes.Json(await solver.Content.ReadAsStringAsync());
            Assert.Equal(ReplicationNodes.Database, result.GetProperty("Key").GetString());
            Assert.False(result.GetProperty("Solver").GetProperty("ResolveToLatest").GetBoolean());
            await nodes.PutAsync(node, "users/1", new { Name = $"on {nodes.Tag(node)}" });
        }
        nodes.Wire();
        await Poll.UntilAsync(async () =>
        {
            using var get = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/1");
            return get.StatusCode == HttpStatusCode.Conflict;
        }, Converge, "users/1 to be in conflict on A");

        // After a restart the database knows it from its storage.
        await nodes.StopAsync(0);
        await nodes.StartAgainAsync(0);
        using (var reader = nodes.DatabaseOf(0).BeginRead())
        {
            Assert.True(reader.MayHaveConflicts);
        }
        using (var get = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/1"))
        {
            Assert.Equal(HttpStatusCode.Conflict, get.StatusCode);
        }

        // Resolved: the flag clears once the resolving commit is durable, and the GET answers.
        await nodes.PutAsync(0, "users/1", new { Name = "resolved" });
        await Poll.UntilAsync(() =>
        {
            using var reader = nodes.DatabaseOf(0).BeginRead();
            return Task.FromResult(!reader.MayHaveConflicts);
        }, Converge, "A to know it has no conflict left");
        using (var get = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=users/1"))
        {
            Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        }
    }

    [Fact]
    public async Task AConflictOfTheLongestIdIsKept()
    {
        // 1,000 bytes of id key: with its change vector appended the conflict key used to pass the
        // tree's 1,024-byte limit, and the batch was refused (and resent) for ever.
        var id = "users/" + new string('\u00e9', 497);
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        for (var node = 0; node < 2; node++)
        {
            using var solver = await nodes.Client(node).PutAsync($"/databases/{ReplicationNodes.Database}/admin/replication/conflicts/solver",
                new StringContent("{\"ResolveToLatest\":false}", Encoding.UTF8, "application/json"));
            solver.EnsureSuccessStatusCode();
            await nodes.PutAsync(node, id, new { Name = $"on {nodes.Tag(node)}" });
        }
        nodes.Wire();
        await Poll.UntilAsync(async () =>
        {
            using var versions = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/replication/conflicts?docId={Uri.EscapeDataString(id)}");
            return ReplicationNodes.Json(await versions.Content.ReadAsStringAsync()).GetProperty("Results").GetArrayLength() == 2;
        }, Converge, "the long id's two versions to be kept on A");
        await nodes.PutAsync(0, id, new { Name = "resolved" });
        await nodes.WaitConvergedAsync(Converge);
    }

    [Fact]
    public async Task ADocumentMovedToAnotherCollectionSurvivesReplication()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B", "C");
        await nodes.PutAsync(0, "users/1", new Dictionary<string, object> { ["Name"] = "Ann", ["@metadata"] = new Dictionary<string, object> { ["@collection"] = "Users" } });
        await nodes.WaitConvergedAsync(Converge);
        // The replicated put on B and C moves it too, leaving a tombstone in Users there.
        await nodes.PutAsync(0, "users/1", new Dictionary<string, object> { ["Name"] = "Ann", ["@metadata"] = new Dictionary<string, object> { ["@collection"] = "Admins" } });
        await nodes.PutAsync(0, "marker", new { Done = true });
        await nodes.WaitConvergedAsync(Converge);
        for (var node = 0; node < nodes.Count; node++)
        {
            await Poll.UntilAsync(() => Task.FromResult(nodes.Documents(node).ContainsKey("marker")), Converge, $"node {nodes.Tag(node)} to get the marker");
            Assert.True(nodes.Documents(node).ContainsKey("users/1"), $"users/1 was deleted on node {nodes.Tag(node)}");
        }
    }

    [Fact]
    public async Task ReplayedChangesCarryTheStoredChangeVector()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "B");
        await nodes.PutAsync(0, "users/1", new { Name = "Ann" });
        var stored = nodes.Documents(0)["users/1"].ChangeVector;
        Assert.StartsWith("B:", stored, StringComparison.Ordinal);
        using var stream = await Jackdaw.Server.Tests.Changes.EventStreamClient.OpenAsync(nodes.Client(0), $"/databases/{ReplicationNodes.Database}/changes/events?lastEventId=0");
        var replayed = await stream.NextAsync();
        Assert.Equal(stored, replayed!.Data!.Value.GetProperty("ChangeVector").GetString());
    }

    [Fact]
    public async Task ConflictsOfAnIdTooLongAreA400()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A");
        using var answer = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/replication/conflicts?docId={new string('x', 2000)}");
        Assert.Equal(HttpStatusCode.BadRequest, answer.StatusCode);
        Assert.Contains("docId", await answer.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task AReceiverGivesUpASenderThatSendsNothing()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A");
        nodes.Server(0).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new ReplicationNode("B", "http://127.0.0.1:1")]);
        using var socket = new System.Net.WebSockets.ClientWebSocket();
        var url = nodes.Client(0).BaseAddress!.ToString().Replace("http://", "ws://", StringComparison.Ordinal).TrimEnd('/');
        await socket.ConnectAsync(new Uri($"{url}/databases/{ReplicationNodes.Database}/replication/push?sourceDatabaseId=SomeOtherCopy&sourceTag=B"), CancellationToken.None);
        Assert.Equal("Hello", ReplicationNodes.Json(await ReceiveTextAsync(socket)).GetProperty("Type").GetString());
        // No batch and no heartbeat: after three heartbeats' time the receiver drops the connection.
        using var wait = new CancellationTokenSource(IncomingReplication.ReceiveTimeout + Converge);
        await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            var buffer = new byte[1024];
            while (true)
            {
                var result = await socket.ReceiveAsync(buffer, wait.Token);
                if (result.MessageType == System.Net.WebSockets.WebSocketMessageType.Close)
                {
                    throw new System.Net.WebSockets.WebSocketException("closed");
                }
            }
        });
        Assert.False(wait.IsCancellationRequested, "the receiver kept the silent connection open");
    }

    [Fact]
    public async Task ARefusedSenderShowsItsFailuresInDebug()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        // A pushes to B, but B was not told A is a node of the database: it refuses every push.
        var urlOfB = nodes.Client(1).BaseAddress!.ToString().TrimEnd('/');
        nodes.Server(0).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new ReplicationNode("B", urlOfB)]);
        await Poll.UntilAsync(async () =>
        {
            using var debug = await nodes.Client(0).GetAsync($"/databases/{ReplicationNodes.Database}/replication/debug");
            var sender = ReplicationNodes.Json(await debug.Content.ReadAsStringAsync()).GetProperty("Outgoing")[0];
            return sender.GetProperty("Failures").GetInt32() >= 2 && sender.GetProperty("LastError").GetString() is { Length: > 0 };
        }, Converge, "A's sender to count its failures");
    }

    [Fact]
    public async Task WriteAssuranceNamesTheNodeThatHoldsTheBatchAndTimesOutWhenItIsDown()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B");
        const string query = "waitForReplicasTimeout=00:00:30&numberOfReplicasToWaitFor=1&throwOnTimeoutInWaitForReplicas=true";
        var batch = "{\"Commands\":[{\"Type\":\"PUT\",\"Id\":\"users/1\",\"Document\":{\"Name\":\"Ann\",\"@metadata\":{\"@collection\":\"Users\"}}}]}";
        using (var answer = await nodes.Client(0).PostAsync($"/databases/{ReplicationNodes.Database}/bulk_docs?{query}", new StringContent(batch, Encoding.UTF8, "application/json")))
        {
            var text = await answer.Content.ReadAsStringAsync();
            Assert.True(answer.IsSuccessStatusCode, text);
            Assert.Equal(["B"], ReplicationNodes.Json(text).GetProperty("ReplicatedTo").EnumerateArray().Select(t => t.GetString()));
        }
        // The wait was for the batch: B has it now, without polling.
        Assert.True(nodes.Documents(1).ContainsKey("users/1"));

        await nodes.StopAsync(1);
        using (var answer = await nodes.Client(0).PostAsync($"/databases/{ReplicationNodes.Database}/bulk_docs?{query.Replace("00:00:30", "00:00:01")}", new StringContent(batch, Encoding.UTF8, "application/json")))
        {
            var text = await answer.Content.ReadAsStringAsync();
            Assert.Equal(HttpStatusCode.RequestTimeout, answer.StatusCode);
            var error = ReplicationNodes.Json(text);
            Assert.Equal("TimeoutException", error.GetProperty("Type").GetString());
            Assert.Contains("was replicated to 1 servers", error.GetProperty("Message").GetString());
        }
        using (var answer = await nodes.Client(0).PostAsync($"/databases/{ReplicationNodes.Database}/bulk_docs?{query.Replace("00:00:30", "00:00:01").Replace("=true", "=false")}", new StringContent(batch, Encoding.UTF8, "application/json")))
        {
            var text = await answer.Content.ReadAsStringAsync();
            Assert.True(answer.IsSuccessStatusCode, text);
            Assert.Empty(ReplicationNodes.Json(text).GetProperty("ReplicatedTo").EnumerateArray());
        }
    }

    [Fact]
    public async Task APushIsGreetedWithItsPositionAndABatchThatCannotBeAppliedIsAnsweredWithAnError()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A");
        // B (nowhere: its sender only retries) is A's peer, so A accepts its push.
        nodes.Server(0).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new ReplicationNode("B", "http://127.0.0.1:1")]);
        using var socket = new System.Net.WebSockets.ClientWebSocket();
        var url = nodes.Client(0).BaseAddress!.ToString().Replace("http://", "ws://", StringComparison.Ordinal).TrimEnd('/');
        await socket.ConnectAsync(new Uri($"{url}/databases/{ReplicationNodes.Database}/replication/push?sourceDatabaseId=SomeOtherCopy&sourceTag=B"), CancellationToken.None);
        var hello = ReplicationNodes.Json(await ReceiveTextAsync(socket));
        Assert.Equal("Hello", hello.GetProperty("Type").GetString());
        Assert.Equal(0, hello.GetProperty("LastEtag").GetInt64());
        Assert.Equal("A", hello.GetProperty("NodeTag").GetString());

        await socket.SendAsync(new byte[] { 99, 1, 2, 3 }, System.Net.WebSockets.WebSocketMessageType.Binary, true, CancellationToken.None);
        var error = ReplicationNodes.Json(await ReceiveTextAsync(socket));
        Assert.Equal("Error", error.GetProperty("Type").GetString());
        Assert.Contains("version 99", error.GetProperty("Message").GetString());
    }

    [Fact]
    public async Task WriteAssuranceIsNotMetByFewerNodesThanAsked()
    {
        // One node, before the cluster gave it any peer (a restart): no replica holds the batch.
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A");
        var batch = "{\"Commands\":[{\"Type\":\"PUT\",\"Id\":\"users/1\",\"Document\":{\"Name\":\"Ann\"}}]}";
        foreach (var wanted in new[] { "1", "majority" })
        {
            using var answer = await nodes.Client(0).PostAsync($"/databases/{ReplicationNodes.Database}/bulk_docs?waitForReplicasTimeout=00:00:01&numberOfReplicasToWaitFor={wanted}", new StringContent(batch, Encoding.UTF8, "application/json"));
            var text = await answer.Content.ReadAsStringAsync();
            Assert.True(answer.StatusCode == HttpStatusCode.RequestTimeout, $"{wanted}: {(int)answer.StatusCode} {text}");
        }
        // RavenDB's majority of one other node is two replicas: (1 + 1) / 2 + 1.
        nodes.Server(0).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new ReplicationNode("B", "http://127.0.0.1:1")]);
        Assert.Equal(2, nodes.Server(0).Host.Server.Replication.MajorityOf(ReplicationNodes.Database));
    }

    [Fact]
    public async Task OnlyADatabasesOtherNodesMayPush()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A");
        var push = $"/databases/{ReplicationNodes.Database}/replication/push?sourceDatabaseId=SomeOtherCopy&sourceTag=B";

        // Before the cluster said who the database's nodes are, no one: a forged source could
        // otherwise move the stored position past what the real node sends.
        using (var refused = await nodes.Client(0).GetAsync(push))
        {
            Assert.Equal(System.Net.HttpStatusCode.Forbidden, refused.StatusCode);
            Assert.Equal("AuthorizationException", ReplicationNodes.Json(await refused.Content.ReadAsStringAsync()).GetProperty("Type").GetString());
        }
        nodes.Server(0).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new ReplicationNode("B", "http://127.0.0.1:1")]);
        using (var refused = await nodes.Client(0).GetAsync(push.Replace("sourceTag=B", "sourceTag=C", StringComparison.Ordinal)))
        {
            Assert.Equal(System.Net.HttpStatusCode.Forbidden, refused.StatusCode);
        }
        // B is a peer: past the check (a plain GET is then refused for not being a WebSocket).
        using (var plain = await nodes.Client(0).GetAsync(push))
        {
            Assert.Equal(System.Net.HttpStatusCode.BadRequest, plain.StatusCode);
        }
    }

    [Fact]
    public async Task ABatchWhoseLastEtagIsBelowItsItemsIsRefused()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A");
        nodes.Server(0).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new ReplicationNode("B", "http://127.0.0.1:1")]);
        using var socket = new System.Net.WebSockets.ClientWebSocket();
        var url = nodes.Client(0).BaseAddress!.ToString().Replace("http://", "ws://", StringComparison.Ordinal).TrimEnd('/');
        await socket.ConnectAsync(new Uri($"{url}/databases/{ReplicationNodes.Database}/replication/push?sourceDatabaseId=SomeOtherCopy&sourceTag=B"), CancellationToken.None);
        Assert.Equal("Hello", ReplicationNodes.Json(await ReceiveTextAsync(socket)).GetProperty("Type").GetString());

        var batch = new ReplicationBatch(1, [new ReplicationItem(5, true, "users/1", "Users", "B:5-SomeOtherCopy", DateTime.UtcNow.Ticks, [])]);
        await socket.SendAsync(batch.Serialize(), System.Net.WebSockets.WebSocketMessageType.Binary, true, CancellationToken.None);
        var error = ReplicationNodes.Json(await ReceiveTextAsync(socket));
        Assert.Equal("Error", error.GetProperty("Type").GetString());
        Assert.Contains("below its own items", error.GetProperty("Message").GetString());
        using var reader = nodes.DatabaseOf(0).BeginRead();
        Assert.Equal(0, ReplicationPositions.Read(reader, "SomeOtherCopy"));
    }

    private static async Task<string> ReceiveTextAsync(System.Net.WebSockets.ClientWebSocket socket)
    {
        var buffer = new byte[64 * 1024];
        var count = 0;
        System.Net.WebSockets.ValueWebSocketReceiveResult result;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        do
        {
            result = await socket.ReceiveAsync(buffer.AsMemory(count), timeout.Token);
            count += result.Count;
        }
        while (!result.EndOfMessage);
        return Encoding.UTF8.GetString(buffer, 0, count);
    }

    [Fact]
    public async Task RandomWritesOnThreeNodesConvergeDocumentByDocument()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B", "C");
        var writers = Enumerable.Range(0, 3).Select(node => Task.Run(async () =>
        {
            var random = new Random(1234 + node);
            for (var i = 0; i < 150; i++)
            {
                var id = $"things/{random.Next(25)}";
                if (random.Next(5) == 0)
                {
                    await nodes.DeleteAsync(node, id);
                }
                else
                {
                    await nodes.PutAsync(node, id, new { Writer = nodes.Tag(node), Step = i, Value = random.Next() });
                }
            }
        })).ToArray();
        await Task.WhenAll(writers);
        await nodes.WaitConvergedAsync(Converge);

        // Converged means identical on every node; each surviving document also holds the last
        // version of every node that wrote it (nothing skipped).
        var documents = nodes.Documents(0);
        Assert.NotEmpty(documents);
        foreach (var node in Enumerable.Range(0, 3))
        {
            Assert.Equal(0, nodes.StatsOf(node).Repeated);
        }
    }
}
