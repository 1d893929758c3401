using System.Diagnostics;
using System.Net;
using System.Text;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Tests.Databases;

/// <summary>
/// A disk that fills up under a database: 507 <c>DiskFullException</c> naming the folder, reads
/// keep working, nothing acknowledged is lost, and writes resume by themselves once space is
/// freed, without a server restart.
/// </summary>
public sealed class DiskFullTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    private static DocumentDatabaseOptions Options(StorageIo io) => new()
    {
        StorageIo = io,
        FirstReopenDelay = TimeSpan.FromMilliseconds(50),
        MaxReopenDelay = TimeSpan.FromMilliseconds(400),
        TombstoneCleanupInterval = Timeout.InfiniteTimeSpan,
    };

    private static async Task<HttpStatusCode> PutAsync(HttpClient client, string db, string id, string json)
    {
        using var response = await client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        if (response.StatusCode is not (HttpStatusCode.Created or HttpStatusCode.InsufficientStorage or HttpStatusCode.ServiceUnavailable))
        {
            Assert.Fail($"PUT {id}: unexpected {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
        }
        return response.StatusCode;
    }

    /// <summary>Reads a document, allowing the short 503 gaps while the database is reopened; never a 500.</summary>
    private static async Task<string?> GetNameAsync(HttpClient client, string db, string id)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            using var response = await client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
            if (response.StatusCode == HttpStatusCode.OK)
            {
                return (await Api.JsonAsync(response)).GetProperty("Results")[0].GetProperty("Name").GetString();
            }
            if (response.StatusCode == HttpStatusCode.NotFound)
            {
                return null;
            }
            Assert.True(response.StatusCode == HttpStatusCode.ServiceUnavailable, $"GET {id}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
            Assert.True(clock.Elapsed < Patience, $"GET {id} kept answering 503");
            await Task.Delay(20);
        }
    }

    private static async Task WaitUntilWritableAsync(HttpClient client, string db)
    {
        var clock = Stopwatch.StartNew();
        var attempt = 0;
        while (await PutAsync(client, db, $"probe/{attempt++}", "{\"Name\":\"probe\"}") != HttpStatusCode.Created)
        {
            Assert.True(clock.Elapsed < Patience, "writes did not resume after space was freed");
            await Task.Delay(50);
        }
    }

    [Fact]
    public async Task AFullDiskAnswers507ThenWritesResumeOnceSpaceIsFreedWithNothingLost()
    {
        var io = new FaultInjectingStorageIo();
        await using var server = await InProcessServer.StartAsync(options => options.Database = Options(io));
        var client = server.Client;
        using (var created = await client.PutAsync("/admin/databases?name=full", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        for (var i = 0; i < 20; i++)
        {
            Assert.Equal(HttpStatusCode.Created, await PutAsync(client, "full", $"users/{i}", $"{{\"Name\":\"user {i}\"}}"));
        }

        io.DiskFull = true;
        using (var refused = await client.PutAsync("/databases/full/docs?id=users/lost", Api.Json("{\"Name\":\"lost\"}")))
        {
            var message = await Api.AssertErrorAsync(refused, HttpStatusCode.InsufficientStorage, "DiskFullException");
            Assert.Contains(Path.Combine(server.DataDir, "Databases", "full"), message, StringComparison.Ordinal);
        }

        // While the disk stays full: writes keep failing with 507 (or 503 while it reopens), reads work.
        for (var i = 0; i < 5; i++)
        {
            Assert.NotEqual(HttpStatusCode.Created, await PutAsync(client, "full", $"users/also-lost-{i}", "{\"Name\":\"x\"}"));
        }
        for (var i = 0; i < 20; i++)
        {
            Assert.Equal($"user {i}", await GetNameAsync(client, "full", $"users/{i}"));
        }

        io.DiskFull = false;
        await WaitUntilWritableAsync(client, "full");
        Assert.Equal(HttpStatusCode.Created, await PutAsync(client, "full", "users/after", "{\"Name\":\"after\"}"));
        for (var i = 0; i < 20; i++)
        {
            Assert.Equal($"user {i}", await GetNameAsync(client, "full", $"users/{i}"));
        }
        Assert.Equal("after", await GetNameAsync(client, "full", "users/after"));
        Assert.Null(await GetNameAsync(client, "full", "users/lost"));
        Assert.DoesNotContain(server.Logs.Records, r => r.Message.Contains("failed (trace id", StringComparison.Ordinal));
    }

    [Fact]
    public async Task AnAcknowledgementTheFullDiskCannotStoreIsAnErrorAndTheBatchComesAgain()
    {
        var io = new FaultInjectingStorageIo();
        await using var server = await InProcessServer.StartAsync(options => options.Database = Options(io));
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=subs", null))
        {
        }
        for (var i = 0; i < 5; i++)
        {
            Assert.Equal(HttpStatusCode.Created, await PutAsync(client, "subs", $"orders/{i}", "{\"Freight\":1,\"@metadata\":{\"@collection\":\"Orders\"}}"));
        }
        using (var created = await client.PutAsync("/databases/subs/subscriptions", Api.Json("{\"Name\":\"S\",\"Query\":\"from Orders\"}")))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        var (worker, accepted) = await Subscriptions.SubscriptionWorker.ConnectAsync(client.BaseAddress!, "subs", "S");
        Assert.Equal("Accepted", accepted.GetProperty("Status").GetString());
        var batch = await worker.BatchAsync();
        io.DiskFull = true;
        await worker.AckAsync(batch.GetProperty("LastEtag").GetInt64());
        // Not stored: the worker is told why, and the connection ends (it may connect again).
        var answer = await worker.ReceiveAsync(Patience);
        Assert.NotNull(answer);
        Assert.Equal("Error", answer.Value.GetProperty("Type").GetString());
        Assert.Equal("DiskFullException", answer.Value.GetProperty("Exception").GetString());
        Assert.Contains("full", answer.Value.GetProperty("Message").GetString(), StringComparison.Ordinal);
        await worker.DisposeAsync();

        io.DiskFull = false;
        await WaitUntilWritableAsync(client, "subs");
        // The batch was not acknowledged: it comes again, and this time its acknowledgement is stored.
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var (again, status) = await Subscriptions.SubscriptionWorker.ConnectAsync(client.BaseAddress!, "subs", "S");
            await using (again)
            {
                if (status.GetProperty("Status").GetString() == "Accepted")
                {
                    var resent = await again.BatchAsync();
                    Assert.Equal(Subscriptions.SubscriptionWorker.Ids(batch), Subscriptions.SubscriptionWorker.Ids(resent).Take(5));
                    await again.AckAndConfirmAsync(resent);
                    break;
                }
            }
            Assert.True(clock.Elapsed < Patience, "the subscription did not accept a worker again: " + status);
            await Task.Delay(50);
        }
        Assert.DoesNotContain(server.Logs.Records, r => r.Message.Contains("failed (trace id", StringComparison.Ordinal));
    }

    [Fact]
    public async Task ADatabaseReopenedOnAFullDiskServesReadsThenHealsByItself()
    {
        var io = new FaultInjectingStorageIo();
        await using var server = await InProcessServer.StartAsync(options => options.Database = Options(io));
        var client = server.Client;
        using (await client.PutAsync("/admin/databases?name=ro", null))
        {
        }
        for (var i = 0; i < 50; i++)
        {
            Assert.Equal(HttpStatusCode.Created, await PutAsync(client, "ro", $"users/{i}", $"{{\"Name\":\"user {i}\"}}"));
        }

        // The data file is full, the journal still writes: closing cannot flush, so the journal keeps
        // the transactions, and the next open has to replay them without space: it opens read-only.
        io.Affects = path => path.EndsWith(".jdb", StringComparison.Ordinal);
        io.DiskFull = true;
        Assert.True(await server.Host.Server.Databases.UnloadAsync("ro"));
        var reopened = server.Host.Server.Databases.GetDatabase("ro");
        Assert.True(reopened.IsReadOnly);
        for (var i = 0; i < 50; i++)
        {
            Assert.Equal($"user {i}", await GetNameAsync(client, "ro", $"users/{i}"));
        }
        Assert.NotEqual(HttpStatusCode.Created, await PutAsync(client, "ro", "users/refused", "{\"Name\":\"refused\"}"));

        io.DiskFull = false;
        await WaitUntilWritableAsync(client, "ro");
        Assert.False(server.Host.Server.Databases.GetDatabase("ro").IsReadOnly);
        for (var i = 0; i < 50; i++)
        {
            Assert.Equal($"user {i}", await GetNameAsync(client, "ro", $"users/{i}"));
        }
    }

    [Fact]
    public async Task ARealSmallFileSystemFillsUpAndRecovers()
    {
        // A tmpfs of its own (the tests run as root on these machines), with a filler file that
        // leaves a little more room than one journal file needs.
        var mount = Directory.CreateTempSubdirectory("jackdaw-tmpfs-").FullName;
        Run("mount", $"-t tmpfs -o size=160m tmpfs {mount}");
        try
        {
            var filler = Path.Combine(mount, "filler");
            Run("fallocate", $"-l 40m {filler}");
            await using (var server = await InProcessServer.StartAsync(
                options => options.Database = new DocumentDatabaseOptions { FirstReopenDelay = TimeSpan.FromMilliseconds(50), MaxReopenDelay = TimeSpan.FromMilliseconds(400) },
                "--data-dir", Path.Combine(mount, "data")))
            {
                var client = server.Client;
                using (var created = await client.PutAsync("/admin/databases?name=tiny", null))
                {
                    Assert.Equal(HttpStatusCode.Created, created.StatusCode);
                }

                // ~100 KB documents of random letters (LZ4 cannot shrink them much) until the disk is full.
                var random = new Random(11);
                var acknowledged = new Dictionary<string, string>();
                var refused = 0;
                for (var i = 0; i < 5_000 && refused < 3; i++)
                {
                    var name = RandomText(random, 100_000);
                    var status = await PutAsync(client, "tiny", $"big/{i}", $"{{\"Name\":\"{name}\"}}");
                    if (status == HttpStatusCode.Created)
                    {
                        acknowledged[$"big/{i}"] = name;
                    }
                    else
                    {
                        refused++;
                    }
                }
                Assert.True(refused > 0, "the file system never filled up");
                Assert.NotEmpty(acknowledged);

                // Every acknowledged write is readable while the disk is full.
                foreach (var (id, name) in acknowledged)
                {
                    Assert.Equal(name, await GetNameAsync(client, "tiny", id));
                }

                File.Delete(filler);
                await WaitUntilWritableAsync(client, "tiny");
                foreach (var (id, name) in acknowledged)
                {
                    Assert.Equal(name, await GetNameAsync(client, "tiny", id));
                }
            }
        }
        finally
        {
            Run("umount", mount);
            Directory.Delete(mount);
        }
    }

    private static string RandomText(Random random, int length)
    {
        var text = new StringBuilder(length);
        for (var i = 0; i < length; i++)
        {
            text.Append((char)('a' + random.Next(26)));
        }
        return text.ToString();
    }

    private static void Run(string command, string arguments)
    {
        using var process = Process.Start(new ProcessStartInfo(command, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })!;
        var error = process.StandardError.ReadToEnd();
        process.WaitForExit();
        Assert.True(process.ExitCode == 0, $"{command} {arguments} failed ({process.ExitCode}): {error} (this test needs root, for a tmpfs of its own)");
    }
}
