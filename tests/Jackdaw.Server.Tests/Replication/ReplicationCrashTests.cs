using System.Net.Http.Json;
using Jackdaw.Server.Replication;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Replication;

public class ReplicationCrashTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task AReceiverKilledMidStreamResumesWithoutRepeatingOrMissingAnything()
    {
        const int total = 300;
        using var folder = new TempFolder("jackdaw-replication-crash");
        // The source is node B; the receiver (a process of its own, tag A) is told its peer B by
        // configuration, as a node without the cluster is: it accepts pushes only from B.
        await using var source = await InProcessServer.StartAsync(options => options.Database = options.Database with { NodeTag = "B" });
        var receiverEnvironment = new Dictionary<string, string> { [$"JACKDAW_REPLICATION__TOPOLOGY__{ReplicationNodes.Database}"] = $"B={source.Client.BaseAddress!.ToString().TrimEnd('/')}" };
        using (var created = await source.Client.PutAsync($"/admin/databases?name={ReplicationNodes.Database}", null))
        {
            created.EnsureSuccessStatusCode();
        }

        var receiver = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{folder.Path}\"", receiverEnvironment);
        try
        {
            var address = await receiver.WaitForAddressAsync(StartTimeout);
            using (var client = new HttpClient { BaseAddress = address })
            using (var created = await client.PutAsync($"/admin/databases?name={ReplicationNodes.Database}", null))
            {
                created.EnsureSuccessStatusCode();
            }
            SetDestination(source, address);

            var writer = Task.Run(async () =>
            {
                for (var i = 0; i < total; i++)
                {
                    using var put = await source.Client.PutAsJsonAsync($"/databases/{ReplicationNodes.Database}/docs?id=items/{i}", new { Number = i, Padding = new string('x', 2000) });
                    put.EnsureSuccessStatusCode();
                }
            });

            // Kill the receiver once it has part of the stream, while batches are still coming.
            using (var client = new HttpClient { BaseAddress = address })
            {
                await Poll.UntilAsync(async () => await CountAsync(client) >= 50, StartTimeout, "the receiver to get 50 documents");
            }
            receiver.KillHard();
            await receiver.WaitForExitAsync(StartTimeout);
            receiver.Dispose();

            receiver = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{folder.Path}\"", receiverEnvironment);
            address = await receiver.WaitForAddressAsync(StartTimeout);
            using var restarted = new HttpClient { BaseAddress = address, Timeout = TimeSpan.FromSeconds(60) };
            var before = await CountAsync(restarted);
            SetDestination(source, address);
            await writer;
            await Poll.UntilAsync(async () => await CountAsync(restarted) == total, TimeSpan.FromSeconds(90), $"the receiver to hold all {total} documents");

            // The restarted receiver applied exactly what it did not hold durably: nothing twice.
            // (Its counters move just after a batch is visible: wait for them first.)
            System.Text.Json.JsonElement incoming = default;
            await Poll.UntilAsync(async () =>
            {
                using var debug = await restarted.GetAsync($"/databases/{ReplicationNodes.Database}/replication/debug");
                incoming = ReplicationNodes.Json(await debug.Content.ReadAsStringAsync()).GetProperty("Incoming");
                return incoming.GetProperty("Applied").GetInt64() + incoming.GetProperty("Repeated").GetInt64() + incoming.GetProperty("AlreadyMerged").GetInt64() >= total - before;
            }, StartTimeout, "the receiver's counters");
            Assert.Equal(0, incoming.GetProperty("Repeated").GetInt64());
            Assert.Equal(total - before, incoming.GetProperty("Applied").GetInt64());

            // Every document with the change vector it has on the source.
            for (var i = 0; i < total; i += 37)
            {
                using var there = await restarted.GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=items/{i}");
                using var here = await source.Client.GetAsync($"/databases/{ReplicationNodes.Database}/docs?id=items/{i}");
                Assert.Equal(here.Headers.ETag!.Tag, there.Headers.ETag!.Tag);
            }
        }
        finally
        {
            receiver.Dispose();
        }
    }

    private static void SetDestination(InProcessServer source, Uri address) =>
        source.Host.Server.Replication.SetTopology(ReplicationNodes.Database, "B", [new ReplicationNode("A", address.ToString().TrimEnd('/'))]);

    private static async Task<long> CountAsync(HttpClient client)
    {
        using var stats = await client.GetAsync($"/databases/{ReplicationNodes.Database}/collections/stats");
        return ReplicationNodes.Json(await stats.Content.ReadAsStringAsync()).GetProperty("CountOfDocuments").GetInt64();
    }
}
