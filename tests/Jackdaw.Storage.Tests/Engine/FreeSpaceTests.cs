using System.Diagnostics;
using Jackdaw.Storage.Engine;
using Xunit.Abstractions;

namespace Jackdaw.Storage.Tests.Engine;

public sealed class FreeSpaceTests(ITestOutputHelper output) : EngineTestBase
{
    /// <summary>
    /// 1 GiB of updates and deletes over a working set of about 10 MiB (values 100 B to 12 KiB, so
    /// both inline values and overflow runs are freed and reused). Pages ever allocated (the high-water
    /// mark) must stay under 24 MiB, and the data file under 32 MiB: the file grows by a quarter of its
    /// size per step (measured: high-water 17 MiB).
    /// </summary>
    [Fact]
    public void ChurnOfOneGigabyteKeepsTheDataFileBounded()
    {
        const long churn = 1L << 30;
        const long bound = 32L << 20;
        const long highWaterBound = 24L << 20;
        const int keys = 4000;
        var env = Open(new StorageEnvironmentOptions { Path = Folder, FlushInterval = TimeSpan.FromMilliseconds(100) });
        var random = new Random(3);
        var buffer = new byte[12 * 1024];
        random.NextBytes(buffer);
        var sizes = new int[keys];
        long written = 0;
        long live = 0;
        var sw = Stopwatch.StartNew();
        var maxFile = 0L;
        while (written < churn)
        {
            using (var tx = env.BeginWrite())
            {
                var t = tx.CreateTree("churn");
                for (var i = 0; i < 200; i++)
                {
                    var k = random.Next(keys);
                    var key = BitConverter.GetBytes(k);
                    live -= sizes[k];
                    if (random.Next(5) == 0)
                    {
                        t.Delete(key);
                        sizes[k] = 0;
                        continue;
                    }

                    var size = random.Next(10) < 7 ? random.Next(100, 2048) : random.Next(2049, buffer.Length);
                    buffer[random.Next(size)]++;
                    t.Put(key, buffer.AsSpan(0, size));
                    sizes[k] = size;
                    live += size;
                    written += size;
                }

                tx.Commit();
            }

            maxFile = Math.Max(maxFile, env.GetStats().DataFileSize);
        }

        env.Flush();
        var stats = env.GetStats();
        output.WriteLine($"{sw.Elapsed}: wrote {written >> 20} MiB, live {live >> 20} MiB; max data file {maxFile >> 20} MiB; {stats}");
        Assert.True(maxFile < bound, $"the data file grew to {maxFile} bytes under churn");
        Assert.True(stats.AllocatedPages * 8192 < highWaterBound, $"{stats.AllocatedPages} pages allocated under churn");
        using var r = env.BeginRead();
        r.OpenTree("churn")!.Validate();
    }

    [Fact]
    public void FreedPagesAreReusedByLaterTransactions()
    {
        var env = Open();
        for (var round = 0; round < 20; round++)
        {
            using (var tx = env.BeginWrite())
            {
                var t = tx.CreateTree("t");
                for (var i = 0; i < 1000; i++)
                {
                    t.Put(BitConverter.GetBytes(i), new byte[round % 2 == 0 ? 1500 : 200]);
                }

                tx.Commit();
            }

            using (var tx = env.BeginWrite())
            {
                tx.DeleteTree("t");
                tx.Commit();
            }
        }

        var stats = env.GetStats();
        Assert.True(stats.AllocatedPages < 600, $"{stats.AllocatedPages} pages allocated for a tree of at most ~300 pages");
    }

    /// <summary>
    /// The data file grows in steps of a quarter of its size, so after a load it may end well past
    /// its last page. Closing cuts that tail off; the environment opens again with every entry and
    /// grows again on the next writes.
    /// </summary>
    [Fact]
    public void ClosingTrimsTheDataFileToItsHighWaterMark()
    {
        var env = Open();
        void Load(StorageEnvironment e, int from, int to)
        {
            for (var i = from; i < to; i += 500)
            {
                using var tx = e.BeginWrite();
                var t = tx.CreateTree("t");
                for (var j = i; j < i + 500; j++)
                {
                    t.Put(BasicTests.BigEndian(j), new byte[1000]);
                }

                tx.Commit();

                // Flushed per transaction, the file grows step by step (not in one exact jump).
                e.Flush();
            }
        }

        Load(env, 0, 6000);
        env.Flush();
        var loaded = env.GetStats();
        Assert.True(loaded.DataFileSize > loaded.AllocatedPages * Jackdaw.Storage.Engine.Paging.Constants.PageSize, $"file {loaded.DataFileSize}, {loaded.AllocatedPages} pages");

        env = Reopen(env);
        var path = Path.Combine(Folder, "data.jdb");
        Assert.Equal(loaded.AllocatedPages * Jackdaw.Storage.Engine.Paging.Constants.PageSize, new FileInfo(path).Length);
        Assert.Equal(loaded.AllocatedPages * Jackdaw.Storage.Engine.Paging.Constants.PageSize, env.GetStats().DataFileSize);

        Load(env, 6000, 9000);
        env.Flush();
        using (var r = env.BeginRead())
        {
            var t = r.OpenTree("t")!;
            Assert.Equal(9000, t.Validate().Entries);
            for (var i = 0; i < 9000; i++)
            {
                Assert.True(t.TryGet(BasicTests.BigEndian(i), out var v));
                Assert.Equal(1000, v.Length);
            }
        }

        Assert.True(env.GetStats().DataFileSize >= env.GetStats().AllocatedPages * Jackdaw.Storage.Engine.Paging.Constants.PageSize);
    }
}
