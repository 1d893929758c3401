using System.Net;
using System.Net.Http.Headers;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>
/// Issue 31's hard attachment tests, against the real server as a child process: a 1 GiB attachment
/// through HTTP with the server's anonymous memory watched, and kill -9 during and right after the
/// upload of a 200 MB one. The bytes come from <see cref="PseudoRandomStream"/>, made as they are
/// sent and made again to check what comes back: no test holds a large attachment in an array.
/// </summary>
/// <remarks>
/// They run alone: the memory test measures a whole process, and each moves hundreds of MB through
/// the disk (the 1 GiB one about 3 GB: the journal, the data file, the read back).
/// </remarks>
[Collection(RunsAlone.Name)]
public sealed class LargeAttachmentTests(ITestOutputHelper output)
{
    /// <summary>
    /// The most RssAnon may rise above idle while 1 GiB streams in or out: an eighth of the size, so
    /// that memory that grows with the size fails. The target, 64 MB for 100 MB, does not
    /// hold every time for 1 GiB: measured +34, +34, +37 and once +96 MB during the PUT (the GC's
    /// timing: the chunks' page arrays are garbage once flushed), +0 to +6 MB during the GET. Before
    /// the upload flushed every 16 MiB it rose +753 MB (and +114 MB for 100 MB in perf/load).
    /// </summary>
    private const long MemoryBoundAboveIdle = 128L << 20;

    private const int ChunkSize = 8 * 8192 - 32;

    private const long CrashSize = 200_000_000;

    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    private static readonly TimeSpan Slow = TimeSpan.FromSeconds(120);

    private static string Url(string db, string id, string name) =>
        $"/databases/{db}/attachments?id={Uri.EscapeDataString(id)}&name={Uri.EscapeDataString(name)}&contentType=application%2Foctet-stream";

    private static long ChunkCount(long size) => (size + ChunkSize - 1) / ChunkSize;

    /// <summary>
    /// A 1 GiB attachment PUT and read back through HTTP: the response's hash and every byte match
    /// what was sent, and the server's RssAnon (heap and native memory, not the page cache of the
    /// data file it maps) stays within <see cref="MemoryBoundAboveIdle"/> of its idle value during
    /// each transfer: it does not grow with the size.
    /// </summary>
    [Fact]
    public async Task AGigabyteAttachmentRoundTripsWithTheServersMemoryBounded()
    {
        const long size = 1L << 30;
        using var data = new TempFolder();
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        using var client = await ClientAsync(server);
        await CreateDatabaseAsync(client, "Big");
        await PutDocumentAsync(client, "Big", "files/1");

        // Warm-up: the same routes, staged in steps too, so that the JIT and the pools are not
        // counted as the large attachment's memory.
        for (var i = 0; i < 2; i++)
        {
            await PutAsync(client, "Big", "files/1", "warm-up.bin", new PseudoRandomStream(8 << 20, 99));
            await ReadBackAsync(client, "Big", "files/1", "warm-up.bin", 8 << 20, 99, null);
        }

        var idle = await SettledRssAnonAsync(server.Id);
        PutResult put;
        long putPeak;
        await using (var sampler = new RssAnonSampler(server.Id))
        {
            put = await PutAsync(client, "Big", "files/1", "big.bin", new PseudoRandomStream(size, 1));
            putPeak = await sampler.StopAsync();
        }
        Assert.Equal(size, put.Size);

        var idleBeforeGet = await SettledRssAnonAsync(server.Id);
        long getPeak;
        await using (var sampler = new RssAnonSampler(server.Id))
        {
            await ReadBackAsync(client, "Big", "files/1", "big.bin", size, 1, put.Hash);
            getPeak = await sampler.StopAsync();
        }

        output.WriteLine($"RssAnon idle {Mb(idle)} MB, PUT peak {Mb(putPeak)} MB (+{Mb(putPeak - idle)}) in {put.Elapsed.TotalSeconds:0.0} s; idle before GET {Mb(idleBeforeGet)} MB, GET peak {Mb(getPeak)} MB (+{Mb(getPeak - idleBeforeGet)})");
        Assert.True(putPeak - idle < MemoryBoundAboveIdle, $"During the PUT of 1 GiB the server's RssAnon rose {Mb(putPeak - idle)} MB above idle ({Mb(idle)} MB), over {Mb(MemoryBoundAboveIdle)} MB.");
        Assert.True(getPeak - idleBeforeGet < MemoryBoundAboveIdle, $"During the GET of 1 GiB the server's RssAnon rose {Mb(getPeak - idleBeforeGet)} MB above idle ({Mb(idleBeforeGet)} MB), over {Mb(MemoryBoundAboveIdle)} MB.");
    }

    /// <summary>
    /// The server is killed with SIGKILL while a 200 MB attachment streams in, some of its staging
    /// steps committed; two other documents already hold the same bytes (one content, two
    /// references). After a restart on the same folder the upload left nothing: its document is
    /// unchanged, the orphan clean-up deletes exactly the staged chunks, and the committed content's
    /// count is right: both copies read back, deleting one keeps the other, deleting both frees it.
    /// </summary>
    [Fact]
    public async Task KillNineDuringALargeUploadLeavesNothingHalfStored()
    {
        using var data = new TempFolder();
        string documentChangeVector;
        var committed = ChunkCount(CrashSize);
        using (var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\""))
        {
            using var client = await ClientAsync(server);
            await CreateDatabaseAsync(client, "Crash");
            await PutDocumentAsync(client, "Crash", "keep/1");
            await PutDocumentAsync(client, "Crash", "keep/2");
            // The second upload of the same bytes is staged, then found stored: its stream is an orphan.
            await PutAsync(client, "Crash", "keep/1", "same.bin", new PseudoRandomStream(CrashSize, 7));
            await PutAsync(client, "Crash", "keep/2", "same.bin", new PseudoRandomStream(CrashSize, 7));
            documentChangeVector = await PutDocumentAsync(client, "Crash", "target/1");
            await WaitForStatsAsync(client, "Crash", new(2, 1, committed, 0), "the duplicate upload's orphan stream to be deleted");

            // The same bytes again, to a third document, held halfway: the server has read 100 MB
            // of the 200 the request announced when it is killed.
            var body = new PseudoRandomStream(CrashSize, 7, pauseAt: CrashSize / 2);
            var upload = PutAsync(client, "Crash", "target/1", "same.bin", body);
            await body.Paused.WaitAsync(Slow);
            // Two staging steps of 16 chunks may still be in memory: the rest is committed.
            var staged = ChunkCount(CrashSize / 2) - 3 * 16;
            await Poll.UntilAsync(async () => await StatsAsync(client, "Crash") is { StagedStreams: 1 } stats && stats.Chunks >= committed + staged, Slow, $"{staged} chunks of the upload to be committed");
            server.KillHard();
            await server.WaitForExitAsync(StartTimeout);
            // The rest of the body now goes to a dead connection.
            body.Release();
            await Assert.ThrowsAnyAsync<Exception>(() => upload);
        }

        using (var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\""))
        {
            using var client = await ClientAsync(server);
            // The open found the upload's stream "being written" and deleted its chunks.
            await WaitForStatsAsync(client, "Crash", new(2, 1, committed, 0), "the cut-off upload's chunks to be deleted at open");
            var removed = (await StatsAsync(client, "Crash")).ChunksRemoved;
            Assert.True(removed >= ChunkCount(CrashSize / 2) - 3 * 16, $"The clean-up deleted {removed} chunks.");

            var target = await GetDocumentAsync(client, "Crash", "target/1");
            Assert.Equal(documentChangeVector, target.GetProperty("@metadata").GetProperty("@change-vector").GetString());
            Assert.False(target.GetProperty("@metadata").TryGetProperty("@attachments", out _));
            using (var head = new HttpRequestMessage(HttpMethod.Head, Url("Crash", "target/1", "same.bin")))
            using (var response = await client.SendAsync(head))
            {
                Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            }

            // Two references to one content: each reads back whole, and a delete releases only one.
            var hash = await ReadBackAsync(client, "Crash", "keep/1", "same.bin", CrashSize, 7, null);
            await ReadBackAsync(client, "Crash", "keep/2", "same.bin", CrashSize, 7, hash);
            using (var delete = await client.DeleteAsync(Url("Crash", "keep/1", "same.bin")))
            {
                Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
            }
            Assert.Equal(new AttachmentStats(1, 1, committed, 0), (await StatsAsync(client, "Crash")) with { ChunksRemoved = 0 });
            await ReadBackAsync(client, "Crash", "keep/2", "same.bin", CrashSize, 7, hash);
            using (var delete = await client.DeleteAsync(Url("Crash", "keep/2", "same.bin")))
            {
                Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
            }
            await WaitForStatsAsync(client, "Crash", new(0, 0, 0, 0), "the released content's chunks to be deleted");
        }
    }

    /// <summary>
    /// The server is killed with SIGKILL as soon as the PUT of a 200 MB attachment is acknowledged:
    /// after a restart the attachment is there, whole, on the document version the PUT answered.
    /// </summary>
    [Fact]
    public async Task AnAcknowledgedLargeUploadSurvivesKillNine()
    {
        using var data = new TempFolder();
        PutResult put;
        using (var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\""))
        {
            using var client = await ClientAsync(server);
            await CreateDatabaseAsync(client, "Acked");
            await PutDocumentAsync(client, "Acked", "files/1");
            put = await PutAsync(client, "Acked", "files/1", "acked.bin", new PseudoRandomStream(CrashSize, 11));
            server.KillHard();
            await server.WaitForExitAsync(StartTimeout);
        }

        using (var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\""))
        {
            using var client = await ClientAsync(server);
            await ReadBackAsync(client, "Acked", "files/1", "acked.bin", CrashSize, 11, put.Hash);
            var metadata = (await GetDocumentAsync(client, "Acked", "files/1")).GetProperty("@metadata");
            Assert.Equal(put.ChangeVector, metadata.GetProperty("@change-vector").GetString());
            var listed = Assert.Single(metadata.GetProperty("@attachments").EnumerateArray());
            Assert.Equal(put.Hash, listed.GetProperty("Hash").GetString());
            Assert.Equal(CrashSize, listed.GetProperty("Size").GetInt64());
            Assert.Equal(new AttachmentStats(1, 1, ChunkCount(CrashSize), 0), (await StatsAsync(client, "Acked")) with { ChunksRemoved = 0 });
        }
    }

    private sealed record PutResult(string Hash, long Size, string ChangeVector, TimeSpan Elapsed);

    private sealed record AttachmentStats(long Attachments, long UniqueAttachments, long Chunks, long StagedStreams, long ChunksRemoved = 0);

    private static async Task<HttpClient> ClientAsync(ServerProcess server) =>
        new() { BaseAddress = await server.WaitForAddressAsync(StartTimeout), Timeout = TimeSpan.FromMinutes(5) };

    private static async Task CreateDatabaseAsync(HttpClient client, string name)
    {
        using var response = await client.PutAsync($"/admin/databases?name={name}", null);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    /// <summary>Stores a document; returns its change vector.</summary>
    private static async Task<string> PutDocumentAsync(HttpClient client, string db, string id)
    {
        using var response = await client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json("""{"Name":"x","@metadata":{"@collection":"Files"}}"""));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("ChangeVector").GetString()!;
    }

    private static async Task<JsonElement> GetDocumentAsync(HttpClient client, string db, string id)
    {
        using var response = await client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    /// <summary>PUTs the stream's bytes (with their Content-Length) and checks the answer's hash against what was sent.</summary>
    private static async Task<PutResult> PutAsync(HttpClient client, string db, string id, string name, PseudoRandomStream body)
    {
        var started = System.Diagnostics.Stopwatch.StartNew();
        using var content = new StreamContent(body, 256 * 1024);
        content.Headers.ContentLength = body.Length;
        content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
        using var response = await client.PutAsync(Url(db, id, name), content);
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.Created, json.ToString());
        var hash = json.GetProperty("Hash").GetString()!;
        Assert.Equal(body.SentHash(), hash);
        return new PutResult(hash, json.GetProperty("Size").GetInt64(), json.GetProperty("ChangeVector").GetString()!, started.Elapsed);
    }

    /// <summary>
    /// GETs an attachment and checks, as the response streams in, every byte against the generator's
    /// and the SHA-256 of the whole against the <c>Attachment-Hash</c> header (and
    /// <paramref name="expectedHash"/> when given); returns the hash.
    /// </summary>
    private static async Task<string> ReadBackAsync(HttpClient client, string db, string id, string name, long size, ulong seed, string? expectedHash)
    {
        using var response = await client.GetAsync(Url(db, id, name), HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(size, response.Content.Headers.ContentLength);
        var header = response.Headers.GetValues("Attachment-Hash").Single();
        if (expectedHash is not null)
        {
            Assert.Equal(expectedHash, header);
        }

        using var expected = new PseudoRandomStream(size, seed);
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        var received = new byte[256 * 1024];
        var wanted = new byte[received.Length];
        await using var stream = await response.Content.ReadAsStreamAsync();
        long position = 0;
        while (true)
        {
            var read = await stream.ReadAsync(received);
            if (read == 0)
            {
                break;
            }
            hash.AppendData(received, 0, read);
            if (read > size - position)
            {
                Assert.Fail($"The attachment read back is longer than the {size:N0} bytes sent.");
            }
            expected.ReadExactly(wanted, 0, read);
            var same = received.AsSpan(0, read).CommonPrefixLength(wanted.AsSpan(0, read));
            if (same != read)
            {
                Assert.Fail($"The attachment read back differs from what was sent at byte {position + same:N0} of {size:N0}.");
            }
            position += read;
        }
        Assert.Equal(size, position);
        var actual = Convert.ToBase64String(hash.GetHashAndReset());
        Assert.Equal(header, actual);
        return actual;
    }

    private static async Task<AttachmentStats> StatsAsync(HttpClient client, string db)
    {
        using var response = await client.GetAsync($"/databases/{db}/stats");
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        var storage = json.GetProperty("AttachmentStorage");
        return new AttachmentStats(
            json.GetProperty("CountOfAttachments").GetInt64(),
            json.GetProperty("CountOfUniqueAttachments").GetInt64(),
            storage.GetProperty("Chunks").GetInt64(),
            storage.GetProperty("StagedStreams").GetInt64(),
            storage.GetProperty("ChunksRemoved").GetInt64());
    }

    /// <summary>Waits until the stats show <paramref name="expected"/> (<c>ChunksRemoved</c> not compared).</summary>
    private static async Task WaitForStatsAsync(HttpClient client, string db, AttachmentStats expected, string what)
    {
        AttachmentStats? last = null;
        try
        {
            await Poll.UntilAsync(async () => (last = (await StatsAsync(client, db)) with { ChunksRemoved = 0 }) == expected, Slow, what);
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} Expected {expected}, last {last}.", e);
        }
    }

    private static long Mb(long bytes) => bytes / (1 << 20);

    /// <summary>RssAnon of a process, in bytes.</summary>
    private static long RssAnon(int pid)
    {
        foreach (var line in File.ReadLines($"/proc/{pid}/status"))
        {
            if (line.StartsWith("RssAnon:", StringComparison.Ordinal))
            {
                return long.Parse(line.AsSpan(8).Trim().TrimEnd("kB").Trim(), System.Globalization.CultureInfo.InvariantCulture) * 1024;
            }
        }
        throw new InvalidOperationException($"/proc/{pid}/status has no RssAnon line.");
    }

    /// <summary>The idle value: the least of RssAnon sampled over half a second once nothing is sent.</summary>
    private static async Task<long> SettledRssAnonAsync(int pid)
    {
        var least = long.MaxValue;
        for (var i = 0; i < 25; i++)
        {
            least = Math.Min(least, RssAnon(pid));
            await Task.Delay(20);
        }
        return least;
    }

    /// <summary>Samples a process's RssAnon every few milliseconds on a thread of its own; keeps the highest.</summary>
    private sealed class RssAnonSampler : IAsyncDisposable
    {
        private readonly CancellationTokenSource _stop = new();
        private readonly Task<long> _sampling;

        public RssAnonSampler(int pid)
        {
            _sampling = Task.Factory.StartNew(() =>
            {
                long peak = 0;
                while (!_stop.IsCancellationRequested)
                {
                    peak = Math.Max(peak, RssAnon(pid));
                    Thread.Sleep(5);
                }
                return Math.Max(peak, RssAnon(pid));
            }, TaskCreationOptions.LongRunning);
        }

        public async Task<long> StopAsync()
        {
            await _stop.CancelAsync();
            return await _sampling;
        }

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            try
            {
                await _sampling;
            }
            catch (Exception)
            {
                // Already reported by StopAsync, or the test failed before it.
            }
            _stop.Dispose();
        }
    }
}

/// <summary>
/// <paramref name="length"/> deterministic pseudo-random bytes (xorshift64, a 64 KiB block at a time,
/// each block seeded by <paramref name="seed"/> and its number), made as they are read, never held
/// whole; the SHA-256 of what was read so far is kept. With <paramref name="pauseAt"/>, an async
/// read stops at that offset until <see cref="Release"/>: the request's body is held mid-stream.
/// </summary>
public sealed class PseudoRandomStream(long length, ulong seed, long pauseAt = -1) : Stream
{
    private const int BlockSize = 64 * 1024;
    private readonly byte[] _block = new byte[BlockSize];
    private readonly IncrementalHash _hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private readonly TaskCompletionSource _paused = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _released = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _blockNumber = -1;
    private long _position;
    private string? _sentHash;

    /// <summary>Completes when an async read reached <c>pauseAt</c> and waits.</summary>
    public Task Paused => _paused.Task;

    public void Release() => _released.TrySetResult();

    /// <summary>The base64 SHA-256 of the bytes read, once all were.</summary>
    public string SentHash() => _sentHash ?? throw new InvalidOperationException($"{_position} of {length} bytes were read.");

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => length;

    public override long Position
    {
        get => _position;
        set => throw new NotSupportedException();
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        var end = pauseAt >= 0 && _position < pauseAt && !_released.Task.IsCompleted ? pauseAt : length;
        var total = 0;
        while (!buffer.IsEmpty && _position < end)
        {
            var number = _position / BlockSize;
            if (number != _blockNumber)
            {
                Fill(_block, seed, number);
                _blockNumber = number;
            }
            var offset = (int)(_position % BlockSize);
            var count = (int)Math.Min(Math.Min(BlockSize - offset, buffer.Length), end - _position);
            _block.AsSpan(offset, count).CopyTo(buffer);
            _hash.AppendData(_block.AsSpan(offset, count));
            buffer = buffer[count..];
            _position += count;
            total += count;
        }
        // Taken at the end: the request disposes its body stream once sent, and the hash with it.
        if (_position == length && _sentHash is null)
        {
            _sentHash = Convert.ToBase64String(_hash.GetHashAndReset());
        }
        return total;
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (pauseAt >= 0 && _position >= pauseAt && _position < length && !_released.Task.IsCompleted)
        {
            _paused.TrySetResult();
            await _released.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        return Read(buffer.Span);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _hash.Dispose();
            _released.TrySetResult();
        }
        base.Dispose(disposing);
    }

    private static void Fill(byte[] block, ulong seed, long number)
    {
        var words = MemoryMarshal.Cast<byte, ulong>(block.AsSpan());
        var x = (seed * 0x9E3779B97F4A7C15UL) ^ ((ulong)number * 0xBF58476D1CE4E5B9UL) ^ 0x94D049BB133111EBUL;
        if (x == 0)
        {
            x = 1;
        }
        for (var i = 0; i < words.Length; i++)
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            words[i] = x;
        }
    }
}
