using System.Collections.Concurrent;
using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Subscriptions;

/// <summary>
/// At least once, never a gap, through crashes of both sides: a worker process (the .NET client's
/// <c>SubscriptionWorker</c>, <c>Jackdaw.Tests.SubscriptionWorker</c>) counts the corpus's orders
/// that match while 16 writers add orders and change new and corpus ones; the worker process and
/// the server process are each killed with SIGKILL at random moments, in four rounds. At the end
/// every matching order (of the corpus, and every one acknowledged to its writer) was received, and
/// nothing that does not match ever was.
/// </summary>
public sealed class SubscriptionCrashTests(ITestOutputHelper output)
{
    private const string Query = "from Orders where Freight > 50";
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    // A written order's match never changes with its updates: odd numbers have Freight 100, even 1.
    private static bool WrittenMatches(string id) => int.Parse(id[(id.LastIndexOf('-') + 1)..]) % 2 == 1;

    [Fact]
    public async Task EveryMatchingOrderArrivesThroughWorkerAndServerKills()
    {
        using var folder = new TempFolder();
        var data = Path.Combine(folder.Path, "data");
        var receivedFile = Path.Combine(folder.Path, "received.txt");
        var corpus = ReadCorpus();
        var corpusMatches = corpus.Where(o => o.Freight > 50).Select(o => o.Id).ToHashSet(StringComparer.Ordinal);
        Assert.InRange(corpusMatches.Count, 1, corpus.Count - 1);
        var acknowledged = new ConcurrentDictionary<string, bool>();
        var touched = new ConcurrentDictionary<string, bool>();
        var random = new Random(20);

        for (var round = 0; round < 4; round++)
        {
            using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data}\"");
            var address = await server.WaitForAddressAsync(StartTimeout);
            using var client = new HttpClient { BaseAddress = address, Timeout = TimeSpan.FromSeconds(60) };
            if (round == 0)
            {
                using (var created = await client.PutAsync("/admin/databases?name=Crash", null))
                {
                    Assert.Equal(HttpStatusCode.Created, created.StatusCode);
                }
                using var subscription = await client.PutAsync("/databases/Crash/subscriptions", new StringContent(JsonSerializer.Serialize(new { Name = "Paid", Query }), Encoding.UTF8, "application/json"));
                Assert.Equal(HttpStatusCode.Created, subscription.StatusCode);
            }
            var worker = StartWorker(address, receivedFile);
            output.WriteLine($"round {round}: {ReceivedIds.Read(receivedFile).Count} orders received so far");
            try
            {
                using var stopWriters = new CancellationTokenSource();
                var writers = StartWriters(client, round, corpus, acknowledged, touched, stopWriters.Token);
                if (round == 0)
                {
                    // The corpus goes in while the worker receives and the writers write.
                    using var bulk = await client.PostAsync("/databases/Crash/bulk_insert", new CorpusContent(corpus));
                    Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
                }

                // Somewhere in the round, once the worker receives, the worker process is killed
                // (and another started), then the server process; the worker goes down with it.
                await WaitReceivingAsync(worker, receivedFile);
                await Task.Delay(random.Next(100, 1200));
                worker.KillHard();
                await worker.WaitForExitAsync(TimeSpan.FromSeconds(30));
                worker.Dispose();
                worker = StartWorker(address, receivedFile);
                await WaitReceivingAsync(worker, receivedFile);
                await Task.Delay(random.Next(100, 1200));
                server.KillHard();
                await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
                await stopWriters.CancelAsync();
                await Task.WhenAll(writers);
            }
            finally
            {
                worker.KillHard();
                await worker.WaitForExitAsync(TimeSpan.FromSeconds(30));
                worker.Dispose();
            }
        }

        // A last server and worker, left to catch up.
        using var final = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data}\"");
        var finalAddress = await final.WaitForAddressAsync(StartTimeout);
        using var lastWorker = StartWorker(finalAddress, receivedFile);
        var expected = corpusMatches.Concat(acknowledged.Keys.Where(WrittenMatches)).ToHashSet(StringComparer.Ordinal);
        Assert.True(acknowledged.Count(a => WrittenMatches(a.Key)) > 200, $"only {acknowledged.Count} written orders were acknowledged");
        Dictionary<string, int> received = [];
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(120);
        while (true)
        {
            received = ReceivedIds.Read(receivedFile);
            if (expected.All(received.ContainsKey) || DateTime.UtcNow > deadline)
            {
                break;
            }
            await Task.Delay(250);
        }
        lastWorker.KillHard();

        var missing = expected.Where(id => !received.ContainsKey(id)).ToList();
        Assert.True(missing.Count == 0, $"{missing.Count} of {expected.Count} matching orders never arrived, e.g. {string.Join(", ", missing.Take(5))}. Worker output:\n{lastWorker.Output}");
        var corpusIds = corpus.Select(o => o.Id).ToHashSet(StringComparer.Ordinal);
        var wrong = received.Keys.Where(id => corpusIds.Contains(id) ? !corpusMatches.Contains(id) : !WrittenMatches(id)).ToList();
        Assert.True(wrong.Count == 0, $"{wrong.Count} orders that do not match arrived, e.g. {string.Join(", ", wrong.Take(5))}");
        // A document written once and delivered twice was in a batch that a kill left unacknowledged:
        // the kills landed while batches were in flight (updates alone explain the other repeats).
        var writtenOnceTwice = received.Where(r => r.Value > 1 && (corpusIds.Contains(r.Key) ? !touched.ContainsKey(r.Key) : WrittenOnce(r.Key))).ToList();
        output.WriteLine($"{writtenOnceTwice.Count} written once and delivered twice; {expected.Count} matching orders ({corpusMatches.Count} of the corpus's {corpus.Count}), {acknowledged.Count} written orders acknowledged; {received.Count} received, {received.Values.Count(n => n > 1)} of them more than once");
        Assert.True(writtenOnceTwice.Count > 0, "no document written once was delivered twice: no kill interrupted a batch, and the test proved less than it should");
        final.SendSigterm();
        await final.WaitForExitAsync(TimeSpan.FromSeconds(30));
    }

    // Writer orders n = 1 (mod 4) are updated (by write n + 2); the others are written once.
    private static bool WrittenOnce(string id) => int.Parse(id[(id.LastIndexOf('-') + 1)..]) % 4 != 1;

    /// <summary>Waits until the worker process is connected and the received file grew (it receives).</summary>
    private static async Task WaitReceivingAsync(ServerProcess worker, string receivedFile)
    {
        var before = File.Exists(receivedFile) ? new FileInfo(receivedFile).Length : 0;
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        while (!worker.Output.Contains("connected", StringComparison.Ordinal) || (File.Exists(receivedFile) ? new FileInfo(receivedFile).Length : 0) <= before)
        {
            Assert.True(DateTime.UtcNow < deadline, "The worker process never received anything. Output:\n" + worker.Output);
            await Task.Delay(20);
        }
    }

    private sealed record CorpusOrder(string Id, double Freight, string Line);

    private static List<CorpusOrder> ReadCorpus() =>
        Corpus.Lines("orders", int.MaxValue).Select(line =>
        {
            using var json = JsonDocument.Parse(line);
            var root = json.RootElement;
            return new CorpusOrder(root.GetProperty("@metadata").GetProperty("@id").GetString()!, root.GetProperty("Freight").GetDouble(), line);
        }).ToList();

    private static ServerProcess StartWorker(Uri server, string receivedFile) =>
        ServerProcess.StartProgram("Jackdaw.Tests.SubscriptionWorker.dll", $"{server.ToString().TrimEnd('/')} Crash Paid \"{receivedFile}\" 10");

    /// <summary>16 writers: mostly new orders; every 4th write changes one of the writer's earlier orders, every 8th a corpus order (its match unchanged).</summary>
    private static List<Task> StartWriters(HttpClient client, int round, List<CorpusOrder> corpus, ConcurrentDictionary<string, bool> acknowledged, ConcurrentDictionary<string, bool> touched, CancellationToken stop) =>
        Enumerable.Range(0, 16).Select(w => Task.Run(async () =>
        {
            var random = new Random(round * 100 + w);
            for (var i = 0; !stop.IsCancellationRequested; i++)
            {
                string id;
                string body;
                var written = i % 8 != 7;
                if (!written)
                {
                    var order = corpus[random.Next(corpus.Count)];
                    id = order.Id;
                    touched[id] = true;
                    body = "{\"Touched\":" + i + "," + order.Line[1..];
                }
                else
                {
                    var n = i % 4 == 3 ? i - 2 : i;
                    id = $"orders/r{round}w{w}-{n}";
                    body = "{\"Freight\":" + (n % 2 == 1 ? 100 : 1) + ",\"Version\":" + i + ",\"@metadata\":{\"@collection\":\"Orders\"}}";
                }
                try
                {
                    using var put = await client.PutAsync($"/databases/Crash/docs?id={Uri.EscapeDataString(id)}", new StringContent(body, Encoding.UTF8, "application/json"), stop);
                    if (put.StatusCode == HttpStatusCode.Created && written)
                    {
                        acknowledged[id] = true;
                    }
                }
                catch (Exception)
                {
                    return;
                }
            }
        })).ToList();

    /// <summary>The corpus as the NDJSON of <c>bulk_insert</c>, streamed.</summary>
    private sealed class CorpusContent : HttpContent
    {
        private readonly List<CorpusOrder> _corpus;

        public CorpusContent(List<CorpusOrder> corpus)
        {
            _corpus = corpus;
            Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/x-ndjson");
        }

        protected override async Task SerializeToStreamAsync(Stream stream, System.Net.TransportContext? context)
        {
            var buffer = new StringBuilder();
            foreach (var order in _corpus)
            {
                buffer.Append("{\"Id\":").Append(JsonSerializer.Serialize(order.Id)).Append(",\"Document\":").Append(order.Line).Append("}\n");
                if (buffer.Length > 256 * 1024)
                {
                    await stream.WriteAsync(Encoding.UTF8.GetBytes(buffer.ToString()));
                    buffer.Clear();
                }
            }
            await stream.WriteAsync(Encoding.UTF8.GetBytes(buffer.ToString()));
        }

        protected override bool TryComputeLength(out long length)
        {
            length = 0;
            return false;
        }
    }
}
