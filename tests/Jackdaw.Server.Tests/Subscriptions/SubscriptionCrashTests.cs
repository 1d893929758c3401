using System.Collections.Concurrent;
using System.Net;
using System.Text;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Subscriptions;

/// <summary>
/// At least once, never a gap, through crashes: a worker receives orders while 16 writers add and
/// change more; the server is killed with SIGKILL and the worker's connection dropped without a
/// goodbye, several times at random moments. At the end every matching order that was
/// acknowledged to its writer was received, and nothing that does not match ever was.
/// </summary>
public sealed class SubscriptionCrashTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    // Whether an order matches never changes with its updates: odd numbers have Freight 100.
    private static bool Matches(string id) => int.Parse(id[(id.LastIndexOf('-') + 1)..]) % 2 == 1;

    [Fact]
    public async Task EveryMatchingDocumentArrivesThroughServerKillsAndWorkerCrashes()
    {
        using var data = new TempFolder();
        var acknowledged = new ConcurrentDictionary<string, bool>();
        var received = new ConcurrentDictionary<string, int>();
        var random = new Random(20);
        Uri? address = null;
        using var stopWorker = new CancellationTokenSource();
        var crashWorker = new CancellationTokenSource();

        // The worker: reconnects whenever its connection or the server goes.
        var worker = Task.Run(async () =>
        {
            while (!stopWorker.IsCancellationRequested)
            {
                try
                {
                    var server = Volatile.Read(ref address);
                    if (server is null)
                    {
                        await Task.Delay(50);
                        continue;
                    }
                    var (connection, status) = await SubscriptionWorker.ConnectAsync(server, "Crash", "Odd", "TakeOver", maxDocs: 256);
                    await using var scope = connection;
                    if (status.GetProperty("Status").GetString() != "Accepted")
                        continue;
                    var crash = Volatile.Read(ref crashWorker).Token;
                    while (!stopWorker.IsCancellationRequested)
                    {
                        if (crash.IsCancellationRequested)
                        {
                            connection.Abort();
                            break;
                        }
                        var batch = await connection.BatchAsync(TimeSpan.FromSeconds(10));
                        foreach (var id in SubscriptionWorker.Ids(batch))
                            received.AddOrUpdate(id, 1, (_, n) => n + 1);
                        await connection.AckAndConfirmAsync(batch);
                    }
                }
                catch (Exception) when (!stopWorker.IsCancellationRequested)
                {
                    await Task.Delay(50);
                }
                catch (Exception)
                {
                    return;
                }
            }
        });

        for (var round = 0; round < 4; round++)
        {
            using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
            var baseAddress = await server.WaitForAddressAsync(StartTimeout);
            using var client = new HttpClient { BaseAddress = baseAddress, Timeout = TimeSpan.FromSeconds(30) };
            if (round == 0)
            {
                using (var created = await client.PutAsync("/admin/databases?name=Crash", null))
                    Assert.Equal(HttpStatusCode.Created, created.StatusCode);
                using var subscription = await client.PutAsync("/databases/Crash/subscriptions", new StringContent("""{"Name":"Odd","Query":"from Orders where Freight > 50"}""", Encoding.UTF8, "application/json"));
                Assert.Equal(HttpStatusCode.Created, subscription.StatusCode);
            }
            Volatile.Write(ref address, baseAddress);

            using var stopWriters = new CancellationTokenSource();
            var r = round;
            var writers = Enumerable.Range(0, 16).Select(w => Task.Run(async () =>
            {
                for (var i = 0; !stopWriters.IsCancellationRequested; i++)
                {
                    // Mostly new orders; every 4th write updates an earlier one of this writer.
                    var n = i % 4 == 3 ? i - 2 : i;
                    var id = $"orders/r{r}w{w}-{n}";
                    var body = "{\"Freight\":" + (n % 2 == 1 ? 100 : 1) + ",\"Version\":" + i + ",\"@metadata\":{\"@collection\":\"Orders\"}}";
                    try
                    {
                        using var put = await client.PutAsync($"/databases/Crash/docs?id={id}", new StringContent(body, Encoding.UTF8, "application/json"), stopWriters.Token);
                        if (put.StatusCode == HttpStatusCode.Created)
                            acknowledged[id] = true;
                    }
                    catch (Exception)
                    {
                        return;
                    }
                }
            })).ToList();

            // Somewhere in the round, the worker crashes once; then the server is killed.
            await Task.Delay(random.Next(300, 1200));
            Interlocked.Exchange(ref crashWorker, new CancellationTokenSource()).Cancel();
            await Task.Delay(random.Next(300, 1500));
            server.KillHard();
            await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
            await stopWriters.CancelAsync();
            await Task.WhenAll(writers);
        }

        using var final = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        Volatile.Write(ref address, await final.WaitForAddressAsync(StartTimeout));
        var expected = acknowledged.Keys.Where(Matches).ToList();
        Assert.True(expected.Count > 200, $"only {expected.Count} matching orders were acknowledged");
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(90);
        while (DateTime.UtcNow < deadline && !expected.All(received.ContainsKey))
            await Task.Delay(200);
        await stopWorker.CancelAsync();
        await worker;

        var missing = expected.Where(id => !received.ContainsKey(id)).ToList();
        Assert.True(missing.Count == 0, $"{missing.Count} of {expected.Count} acknowledged matching orders never arrived, e.g. {string.Join(", ", missing.Take(5))}");
        var wrong = received.Keys.Where(id => !Matches(id)).ToList();
        Assert.True(wrong.Count == 0, $"{wrong.Count} orders that do not match arrived, e.g. {string.Join(", ", wrong.Take(5))}");
        Assert.True(received.Values.Any(n => n > 1), "nothing was delivered twice: the crashes did not interrupt any batch, and the test proved less than it should");
        final.SendSigterm();
        await final.WaitForExitAsync(TimeSpan.FromSeconds(30));
    }
}
