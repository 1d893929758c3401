using System.Buffers.Binary;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;
using Jackdaw.Storage.Engine.Paging;
using Xunit.Abstractions;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>
/// Random transactions on two trees (puts of inline and overflow values, deletes, tree deletion,
/// rollbacks, pipelined commits) with readers held open so flushes stop short, flushes cut before
/// their header, clean reopens, and crashes: before a crash, random 512-byte sectors of random page
/// versions newer than the flushed header are written to the data file in any order (whatever a flush
/// cut short could leave), and sometimes recovery itself is cut before its header and run again.
/// After every crash the trees must equal a model. Journal records hold page diffs, so this checks
/// that replaying them is right over any such data file.
/// </summary>
public sealed class JournalCrashModelTests(ITestOutputHelper output) : EngineTestBase
{
    private StorageEnvironmentOptions Quiet(long journal = 64 * 1024 * 1024) => new()
    {
        Path = Folder,
        FlushInterval = TimeSpan.FromHours(1),
        FlushThresholdPages = 1 << 26,
        MaxJournalFileSize = journal,
    };

    private static byte[] Key(int i)
    {
        var k = new byte[4 + (i % 7) * 3];
        BinaryPrimitives.WriteInt32BigEndian(k, i);
        return k;
    }

    private static byte[] RandomValue(Random random)
    {
        var length = random.Next(100) switch
        {
            < 55 => random.Next(1, 120),
            < 80 => random.Next(120, 2100),
            < 93 => random.Next(2100, 9000),
            _ => random.Next(9000, 40000),
        };
        var v = new byte[length];
        // Mostly-similar content so diffs are small and sometimes exactly equal bytes survive.
        if (random.Next(2) == 0)
        {
            random.NextBytes(v);
        }
        else
        {
            v.AsSpan().Fill((byte)random.Next(4));
            v[random.Next(v.Length)] = (byte)random.Next(256);
        }

        return v;
    }

    /// <summary>
    /// Writes random 512-byte sectors of random page versions with ids in (flushed, durable] into the data
    /// file in random order, without a header: any mixture a flush (or a recovery) cut short could leave, and more.
    /// </summary>
    private static void TornFlush(StorageEnvironment env, Random random)
    {
        var f = env.DataFile.FlushedTransactionId;
        var d = env.LastDurable;
        if (d <= f)
        {
            return;
        }

        var writes = new List<(long Page, byte[] Data)>();
        var cuts = random.Next(1, 4);
        for (var c = 0; c < cuts; c++)
        {
            var upTo = f + 1 + random.NextInt64(d - f);
            foreach (var (page, version) in env.PageTable.CollectFlushable(upTo))
            {
                if (version.TransactionId > f)
                {
                    writes.Add((page, version.Data));
                }
            }
        }

        // In transaction order (as a flush writes), or in any order.
        if (random.Next(2) == 0)
        {
            random.Shuffle(CollectionsMarshal.AsSpan(writes));
        }

        var density = random.NextDouble();
        foreach (var (page, data) in writes)
        {
            env.DataFile.EnsureSize(page + (data.Length / Constants.PageSize));
            for (var s = 0; s < data.Length; s += 512)
            {
                if (random.NextDouble() < density)
                {
                    env.DataFile.WriteAt(page, s, data.AsSpan(s, 512));
                }
            }
        }

        env.DataFile.Sync();
    }

    private static void Check(StorageEnvironment env, Dictionary<string, SortedDictionary<byte[], byte[]>> model, string where)
    {
        using var r = env.BeginRead();
        foreach (var (name, m) in model)
        {
            var tree = r.OpenTree(name);
            if (tree is null)
            {
                Assert.True(m.Count == 0, $"{where}: tree {name} missing, model has {m.Count}");
                continue;
            }

            tree.Validate();
            Assert.True(m.Count == tree.Count, $"{where}: tree {name} count {tree.Count} vs model {m.Count}");
            using var it = tree.Iterate();
            var ok = it.SeekFirst();
            foreach (var (key, value) in m)
            {
                Assert.True(ok, $"{where}: {name} ended early");
                Assert.True(it.Key.SequenceEqual(key), $"{where}: {name} key differs");
                Assert.True(it.Value.SequenceEqual(value), $"{where}: {name} value differs for key {Convert.ToHexString(key)}");
                ok = it.MoveNext();
            }

            Assert.False(ok, $"{where}: {name} has extra keys");
        }
    }

    private static Dictionary<string, SortedDictionary<byte[], byte[]>> Clone(Dictionary<string, SortedDictionary<byte[], byte[]>> m) =>
        m.ToDictionary(kv => kv.Key, kv => new SortedDictionary<byte[], byte[]>(kv.Value, ByteArrayComparer.Instance));

    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    [InlineData(13)]
    public void RandomCrashesWithTornFlushesMatchModel(int seed)
    {
        var random = new Random(seed);
        var model = new Dictionary<string, SortedDictionary<byte[], byte[]>>
        {
            ["a"] = new(ByteArrayComparer.Instance),
            ["b"] = new(ByteArrayComparer.Instance),
        };
        var journalSize = random.Next(2) == 0 ? 64 * 1024 : 64L * 1024 * 1024;
        var env = StorageEnvironment.Open(Quiet(journalSize));
        var readers = new List<ReadTransaction>();
        var crashes = 0;
        var replayed = 0;
        for (var step = 0; step < 600; step++)
        {
            var rollback = random.Next(12) == 0;
            var tentative = Clone(model);
            var pipelined = random.Next(3) == 0;
            CommitHandle? handle = null;
            using (var tx = env.BeginWrite())
            {
                var ops = random.Next(1, random.Next(2) == 0 ? 8 : 200);
                for (var i = 0; i < ops; i++)
                {
                    var name = random.Next(3) == 0 ? "b" : "a";
                    var tree = tx.CreateTree(name);
                    var m = tentative[name];
                    var op = random.Next(100);
                    if (op < 2 && name == "b")
                    {
                        tx.DeleteTree("b");
                        m.Clear();
                    }
                    else if (op < 60)
                    {
                        var k = Key(random.Next(name == "a" ? 3000 : 300));
                        var v = RandomValue(random);
                        tree.Put(k, v);
                        m[k] = v;
                    }
                    else
                    {
                        var k = Key(random.Next(name == "a" ? 3000 : 300));
                        Assert.Equal(m.Remove(k), tree.Delete(k));
                    }
                }

                if (!rollback)
                {
                    if (pipelined)
                    {
                        handle = tx.CommitPipelined();
                    }
                    else
                    {
                        tx.Commit();
                    }

                    model = tentative;
                }
            }

            handle?.Wait();

            switch (random.Next(40))
            {
                case 0:
                case 1:
                    // Hold a reader so the next flush is partial.
                    readers.Add(env.BeginRead());
                    break;
                case 2:
                case 3:
                    foreach (var r in readers)
                    {
                        r.Dispose();
                    }

                    readers.Clear();
                    break;
                case 4:
                case 5:
                case 6:
                    env.Flush();
                    break;
                case 7:
                    env.FlushPagesWithoutHeader();
                    break;
                case 8:
                case 9:
                case 10:
                    // Crash: maybe with a torn flush first.
                    if (random.Next(3) > 0)
                    {
                        TornFlush(env, random);
                    }

                    foreach (var r in readers)
                    {
                        r.Dispose();
                    }

                    readers.Clear();
                    env.DisposeWithoutFlush();

                    // Sometimes: recovery runs to the end and crashes before its header; run it again.
                    if (random.Next(3) == 0)
                    {
                        var backup = Path.Combine(Path.GetTempPath(), "jackdaw-engine-tests-backup-" + Guid.NewGuid().ToString("N"));
                        Directory.CreateDirectory(backup);
                        foreach (var file in Directory.GetFiles(Folder))
                        {
                            File.Copy(file, Path.Combine(backup, Path.GetFileName(file)));
                        }

                        var e1 = StorageEnvironment.Open(Quiet(journalSize));
                        Check(e1, model, $"seed {seed} step {step} first recovery");
                        e1.DisposeWithoutFlush();

                        // Restore the two header pages and the journals as they were before recovery.
                        var headers = new byte[2 * Constants.PageSize];
                        using (var s = File.OpenRead(Path.Combine(backup, DataFile.FileName)))
                        {
                            s.ReadExactly(headers);
                        }

                        using (var s = new FileStream(Path.Combine(Folder, DataFile.FileName), FileMode.Open, FileAccess.Write))
                        {
                            s.Write(headers);
                        }

                        foreach (var file in Directory.GetFiles(Folder, JournalWriter.FilePrefix + "*"))
                        {
                            File.Delete(file);
                        }

                        foreach (var file in Directory.GetFiles(backup, JournalWriter.FilePrefix + "*"))
                        {
                            File.Copy(file, Path.Combine(Folder, Path.GetFileName(file)));
                        }

                        Directory.Delete(backup, true);
                    }

                    env = StorageEnvironment.Open(Quiet(journalSize));
                    replayed += env.RecoveredTransactions;
                    crashes++;
                    Check(env, model, $"seed {seed} step {step} after crash");
                    break;
                case 11:
                    // Clean close (trims the data file) and reopen.
                    foreach (var r in readers)
                    {
                        r.Dispose();
                    }

                    readers.Clear();
                    env.Dispose();
                    env = StorageEnvironment.Open(Quiet(journalSize));
                    Check(env, model, $"seed {seed} step {step} after clean reopen");
                    break;
            }
        }

        foreach (var r in readers)
        {
            r.Dispose();
        }

        TornFlush(env, random);
        env.DisposeWithoutFlush();
        env = StorageEnvironment.Open(Quiet(journalSize));
        Check(env, model, $"seed {seed} end");
        env.Dispose();
        output.WriteLine($"seed {seed}: {crashes} crashes, {replayed} transactions replayed");
        Assert.True(crashes > 5 && replayed > 0, $"{crashes} crashes, {replayed} replayed");
    }
}
