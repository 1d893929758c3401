using System.Buffers.Binary;
using System.Diagnostics;
using Jackdaw.Storage.Engine;
using Xunit.Abstractions;

namespace Jackdaw.Storage.Tests.Engine;

public sealed class MvccTests(ITestOutputHelper output) : EngineTestBase
{
    [Fact]
    public void ReaderSnapshotIgnoresLaterCommits()
    {
        var env = Open();
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var random = new Random(11);
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("t");
            for (var i = 0; i < 2000; i++)
            {
                var key = BitConverter.GetBytes(i);
                var value = new byte[random.Next(1, 3000)];
                random.NextBytes(value);
                t.Put(key, value);
                model[key] = value;
            }

            tx.Commit();
        }

        using var reader = env.BeginRead();
        var snapshotTree = reader.OpenTree("t")!;
        var flushedBefore = env.GetStats().FlushedTransactionId;

        // 10k single-write commits that update, delete and add, with flushes in between.
        for (var i = 0; i < 10_000; i++)
        {
            using (var tx = env.BeginWrite())
            {
                var t = tx.CreateTree("t");
                var key = BitConverter.GetBytes(random.Next(3000));
                if (random.Next(3) == 0)
                {
                    t.Delete(key);
                }
                else
                {
                    t.Put(key, new byte[random.Next(1, 5000)]);
                }

                tx.Commit();
            }

            if (i % 2000 == 0)
            {
                env.Flush();
                ModelBasedTests.CheckEqual(snapshotTree, model);
            }
        }

        env.Flush();
        ModelBasedTests.CheckEqual(snapshotTree, model);
        var stats = env.GetStats();
        Assert.Equal(reader.Id, stats.OldestActiveReaderTransactionId);
        Assert.True(stats.FlushedTransactionId <= reader.Id, "the flusher wrote pages newer than an open snapshot");

        reader.Dispose();
        env.Flush();
        stats = env.GetStats();
        Assert.Equal(stats.LastCommittedTransactionId, stats.FlushedTransactionId);
        Assert.Equal(0, stats.ScratchPageVersions);
        Assert.True(stats.FlushedTransactionId > flushedBefore);
    }

    [Fact]
    public void WriterDoesNotWaitForReadersAndReadersDoNotWaitForWriter()
    {
        var env = Open();
        using (var tx = env.BeginWrite())
        {
            tx.CreateTree("t").Put(Bytes("k"), Bytes("v1"));
            tx.Commit();
        }

        using var reader = env.BeginRead();
        using (var tx = env.BeginWrite())
        {
            tx.OpenTree("t")!.Put(Bytes("k"), Bytes("v2"));

            // An open writer does not block a new reader, which sees the last commit.
            using var r2 = env.BeginRead();
            Assert.True(r2.OpenTree("t")!.TryGet(Bytes("k"), out var v));
            Assert.Equal("v1", Text(v));
            tx.Commit();
        }

        Assert.True(reader.OpenTree("t")!.TryGet(Bytes("k"), out var old));
        Assert.Equal("v1", Text(old));
        using var r3 = env.BeginRead();
        Assert.True(r3.OpenTree("t")!.TryGet(Bytes("k"), out var current));
        Assert.Equal("v2", Text(current));
    }

    [Fact]
    public async Task PipelinedCommitsLetTheNextWriterStartAndBecomeVisibleWhenDurable()
    {
        var env = Open();
        var handles = new List<CommitHandle>();
        for (var i = 0; i < 200; i++)
        {
            using var tx = env.BeginWrite();
            var t = tx.CreateTree("t");

            // The next transaction sees the previous one's writes even before they are durable.
            if (i > 0)
            {
                Assert.True(t.TryGet(BitConverter.GetBytes(i - 1), out _));
            }

            t.Put(BitConverter.GetBytes(i), BitConverter.GetBytes(i * 3));
            handles.Add(tx.CommitPipelined());
        }

        await Task.WhenAll(handles.Select(h => h.Durable)).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(handles[^1].TransactionId, env.GetStats().LastDurableTransactionId);
        using var r = env.BeginRead();
        Assert.Equal(200, r.OpenTree("t")!.Count);
    }

    /// <summary>
    /// 8 readers and a writer for 10 s. The writer moves money between 200 accounts (the total is
    /// constant), bumps a sequence key, and adds and removes filler to split, merge and reuse pages.
    /// Each reader checks, inside one snapshot, that the total holds, that a second pass sees the
    /// same bytes, and across snapshots that the sequence never goes back.
    /// </summary>
    [Fact]
    public void ReadersRacingDisposeEitherReadTheirSnapshotOrAreRefused()
    {
        // A reader that starts while the environment closes must either be counted (the mapping
        // then outlives Dispose) or get ObjectDisposedException; never read unmapped memory.
        var value = new byte[3000];
        Random.Shared.NextBytes(value);
        for (var round = 0; round < 20; round++)
        {
            var env = StorageEnvironment.Open(Options(Path.Combine(Folder, round.ToString(System.Globalization.CultureInfo.InvariantCulture))));
            using (var tx = env.BeginWrite())
            {
                var t = tx.CreateTree("t");
                for (var i = 0; i < 200; i++)
                {
                    t.Put(BitConverter.GetBytes(i), value);
                }

                tx.Commit();
            }

            var reads = 0L;
            var refused = 0;
            var failures = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
            var started = new CountdownEvent(2);
            var readers = Enumerable.Range(0, 2).Select(r => new Thread(() =>
            {
                started.Signal();
                var key = 0;
                while (true)
                {
                    try
                    {
                        using var tx = env.BeginRead();
                        var t = tx.OpenTree("t")!;
                        Assert.True(t.TryGet(BitConverter.GetBytes(key++ % 200), out var read));
                        Assert.True(read.SequenceEqual(value));
                        Interlocked.Increment(ref reads);
                    }
                    catch (ObjectDisposedException)
                    {
                        Interlocked.Increment(ref refused);
                        return;
                    }
                    catch (Exception e)
                    {
                        failures.Enqueue(e);
                        return;
                    }
                }
            })).ToList();
            readers.ForEach(t => t.Start());
            started.Wait();
            Thread.Sleep(round % 5);
            env.Dispose();
            readers.ForEach(t => t.Join());

            Assert.Empty(failures);
            Assert.Equal(2, refused);
        }
    }

    [Fact]
    public void EightReadersAndOneWriterStayConsistentForTenSeconds()
    {
        const int accounts = 200;
        const long initial = 1_000;
        var env = Open(new StorageEnvironmentOptions { Path = Folder, FlushInterval = TimeSpan.FromMilliseconds(50) });
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("accounts");
            for (var i = 0; i < accounts; i++)
            {
                t.Put(AccountKey(i), BitConverter.GetBytes(initial));
            }

            t.Put(Bytes("seq"), BitConverter.GetBytes(0L));
            tx.Commit();
        }

        var stop = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var failures = new List<Exception>();
        var readerChecks = new long[8];
        var writes = 0L;
        var writer = new Thread(() =>
        {
            try
            {
                var random = new Random(5);
                long seq = 0;
                while (!stop.IsCancellationRequested)
                {
                    using var tx = env.BeginWrite();
                    var t = tx.OpenTree("accounts")!;
                    var filler = tx.CreateTree("filler");
                    for (var op = 0; op < 5; op++)
                    {
                        var from = random.Next(accounts);
                        var to = random.Next(accounts);
                        t.TryGet(AccountKey(from), out var fv);
                        var a = BitConverter.ToInt64(fv);
                        t.Put(AccountKey(from), BitConverter.GetBytes(a - 7));
                        t.TryGet(AccountKey(to), out var tv);
                        var b = BitConverter.ToInt64(tv);
                        t.Put(AccountKey(to), BitConverter.GetBytes(b + 7));
                        var fk = BitConverter.GetBytes(random.Next(4000));
                        if (random.Next(2) == 0)
                        {
                            filler.Put(fk, new byte[random.Next(10, 6000)]);
                        }
                        else
                        {
                            filler.Delete(fk);
                        }
                    }

                    t.Put(Bytes("seq"), BitConverter.GetBytes(++seq));
                    if (seq % 4 == 0)
                    {
                        tx.CommitPipelined();
                    }
                    else
                    {
                        tx.Commit();
                    }

                    Interlocked.Increment(ref writes);
                }
            }
            catch (Exception e)
            {
                lock (failures)
                {
                    failures.Add(e);
                }
            }
        });
        var readers = Enumerable.Range(0, 8).Select(id => new Thread(() =>
        {
            try
            {
                long lastSeq = 0;
                var first = new byte[accounts * 8];
                while (!stop.IsCancellationRequested)
                {
                    using var r = env.BeginRead();
                    var t = r.OpenTree("accounts")!;
                    Assert.True(t.TryGet(Bytes("seq"), out var sv));
                    var seq = BitConverter.ToInt64(sv);
                    Assert.True(seq >= lastSeq, $"sequence went back from {lastSeq} to {seq}");
                    lastSeq = seq;
                    long total = 0;
                    for (var i = 0; i < accounts; i++)
                    {
                        Assert.True(t.TryGet(AccountKey(i), out var v));
                        total += BitConverter.ToInt64(v);
                        v.CopyTo(first.AsSpan(i * 8));
                    }

                    Assert.Equal(accounts * initial, total);
                    r.OpenTree("filler")?.Validate();
                    for (var i = 0; i < accounts; i++)
                    {
                        Assert.True(t.TryGet(AccountKey(i), out var v));
                        Assert.True(v.SequenceEqual(first.AsSpan(i * 8, 8)), "a value changed inside a snapshot");
                    }

                    readerChecks[id]++;
                }
            }
            catch (Exception e)
            {
                lock (failures)
                {
                    failures.Add(e);
                }
            }
        })).ToList();

        var sw = Stopwatch.StartNew();
        writer.Start();
        readers.ForEach(r => r.Start());
        writer.Join();
        readers.ForEach(r => r.Join());
        Assert.Empty(failures);
        var stats = env.GetStats();
        output.WriteLine($"{sw.Elapsed}: {writes} write transactions, reader snapshots checked: {string.Join(", ", readerChecks)}; {stats}");
        Assert.True(writes > 100);
        Assert.All(readerChecks, c => Assert.True(c > 10));
        Assert.True(stats.FlushCount > 0);
    }

    private static byte[] AccountKey(int i)
    {
        var key = new byte[12];
        "acct"u8.CopyTo(key);
        BinaryPrimitives.WriteInt64BigEndian(key.AsSpan(4), i);
        return key;
    }
}
