using System.Net;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// Two in-process servers formed into a cluster; B's database files can be made full on demand. An
/// index deleted from the record while B cannot write stays on B, and B's saved acted state keeps
/// it: B restarted (its disk mended) deletes it at start, with no retry of a run before to remember.
/// </summary>
public sealed class FailedIndexDeleteTests
{
    private const string Index = """{"Indexes":[{"Name":"Orders/ByCompany","Maps":["map('Orders', o => ({ Company: o.Company }))"]}]}""";

    [Fact]
    public async Task AnIndexDeleteThatFailedOnANodeIsDoneWhenItStartsAgain()
    {
        var io = new FaultInjectingStorageIo { Affects = path => path.Contains($"{Path.DirectorySeparatorChar}Shop{Path.DirectorySeparatorChar}", StringComparison.Ordinal) };
        using var folderOfB = new TempFolder("jackdaw-node-b");
        await using var a = await InProcessServer.StartAsync();
        var b = await InProcessServer.StartInFolderAsync(folderOfB.Path, o => o.Database = o.Database with { StorageIo = io }, "--Cluster:Passive=true");
        try
        {
            using (var added = await a.Client.PutAsync($"/admin/cluster/node?url={Uri.EscapeDataString(b.Host.Server.Cluster.Url!)}&tag=B", null))
            {
                Assert.Equal(HttpStatusCode.OK, added.StatusCode);
            }
            using (var created = await a.Client.PutAsync("/admin/databases?name=Shop&replicationFactor=2", null))
            {
                Assert.Equal(HttpStatusCode.Created, created.StatusCode);
            }
            await Poll.UntilAsync(() => Task.FromResult(b.Host.Server.Databases.Names.Contains("Shop")), TestCluster.Timeout, "Shop on B");
            using (var put = await a.Client.PutAsync("/databases/Shop/admin/indexes", Api.Json(Index)))
            {
                Assert.True(put.StatusCode == HttpStatusCode.Created, await put.Content.ReadAsStringAsync());
            }
            var storeB = IndexStore.Of(b.Host.Server.Databases.GetDatabase("Shop"));
            await Poll.UntilAsync(() => Task.FromResult(storeB.TryGet("Orders/ByCompany") is not null), TestCluster.Timeout, "B to build the index");

            // B's database cannot write: the delete fails there, and is remembered in what B saved.
            var acted = Path.Combine(folderOfB.Path, "System", "Cluster", "acted.json");
            var savedBefore = File.GetLastWriteTimeUtc(acted);
            io.DiskFull = true;
            using (var delete = await a.Client.DeleteAsync("/databases/Shop/indexes?name=Orders/ByCompany"))
            {
                Assert.True(delete.IsSuccessStatusCode, await delete.Content.ReadAsStringAsync());
            }
            await Poll.UntilAsync(
                () => Task.FromResult(b.Logs.Records.Any(r => r.Message.Contains("index Orders/ByCompany could not be brought in line", StringComparison.Ordinal))
                    && File.GetLastWriteTimeUtc(acted) != savedBefore),
                TestCluster.Timeout, "B's delete to fail, and B to save the state it acted on after it");
            Assert.NotNull(storeB.TryGet("Orders/ByCompany"));
            Assert.Contains("Orders/ByCompany", await File.ReadAllTextAsync(acted), StringComparison.Ordinal);
        }
        finally
        {
            await b.DisposeAsync();
        }

        // Mended and started again: the comparison with the saved state deletes it, and the file no longer names it.
        io.DiskFull = false;
        await using var again = await InProcessServer.StartInFolderAsync(folderOfB.Path, o => o.Database = o.Database with { StorageIo = io });
        await Poll.UntilAsync(
            () => Task.FromResult(again.Host.Server.Databases.Names.Contains("Shop") && IndexStore.Of(again.Host.Server.Databases.GetDatabase("Shop")).TryGet("Orders/ByCompany") is null),
            TestCluster.Timeout, "B to delete the index at start");
        await Poll.UntilAsync(
            async () => !(await File.ReadAllTextAsync(Path.Combine(folderOfB.Path, "System", "Cluster", "acted.json"))).Contains("Orders/ByCompany", StringComparison.Ordinal),
            TestCluster.Timeout, "B's saved state to drop the index");
    }
}
