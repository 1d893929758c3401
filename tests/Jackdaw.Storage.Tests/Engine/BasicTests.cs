using Jackdaw.Storage.Engine;

namespace Jackdaw.Storage.Tests.Engine;

public sealed class BasicTests : EngineTestBase
{
    [Fact]
    public void PutGetDeleteSurviveReopen()
    {
        var env = Open();
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("users");
            t.Put(Bytes("a"), Bytes("1"));
            t.Put(Bytes("b"), Bytes("2"));
            t.Put(Bytes("c"), Bytes("3"));
            Assert.True(t.Delete(Bytes("b")));
            Assert.False(t.Delete(Bytes("zz")));
            tx.Commit();
        }

        env = Reopen(env);
        using var rtx = env.BeginRead();
        var tree = rtx.OpenTree("users");
        Assert.NotNull(tree);
        Assert.Equal(2, tree.Count);
        Assert.True(tree.TryGet(Bytes("a"), out var v));
        Assert.Equal("1", Text(v));
        Assert.False(tree.TryGet(Bytes("b"), out _));
        Assert.True(tree.TryGet(Bytes("c"), out v));
        Assert.Equal("3", Text(v));
        Assert.Null(rtx.OpenTree("missing"));
    }

    [Fact]
    public void DisposeWithoutCommitLeavesNoTrace()
    {
        var env = Open();
        using (var tx = env.BeginWrite())
        {
            tx.CreateTree("t").Put(Bytes("k"), Bytes("v"));
            tx.Commit();
        }

        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("t");
            t.Put(Bytes("k"), Bytes("changed"));
            t.Put(Bytes("k2"), Bytes("v2"));
            tx.CreateTree("other");
        }

        using (var rtx = env.BeginRead())
        {
            var t = rtx.OpenTree("t")!;
            Assert.Equal(1, t.Count);
            Assert.True(t.TryGet(Bytes("k"), out var v));
            Assert.Equal("v", Text(v));
            Assert.Null(rtx.OpenTree("other"));
        }

        env = Reopen(env);
        using var r2 = env.BeginRead();
        Assert.Null(r2.OpenTree("other"));
        Assert.Equal(1, r2.OpenTree("t")!.Count);
    }

    [Fact]
    public void SecondOpenOfTheSameFolderIsRefused()
    {
        using var env = StorageEnvironment.Open(Options());
        var e = Assert.Throws<EnvironmentLockedException>(() => StorageEnvironment.Open(Options()));
        Assert.Contains(Folder, e.Message);
    }

    [Fact]
    public void BeginWriteTimesOutWhileAnotherWriterIsOpen()
    {
        var env = Open();
        using var tx = env.BeginWrite();
        Assert.Throws<TimeoutException>(() => env.BeginWrite(TimeSpan.FromMilliseconds(50)));
    }

    [Fact]
    public void DeleteTreeRemovesItAndFreesItsPages()
    {
        var env = Open();
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("big");
            var value = new byte[3000];
            for (var i = 0; i < 2000; i++)
            {
                t.Put(BitConverter.GetBytes(i), i % 2 == 0 ? value : value.AsSpan(0, 100));
            }

            tx.Commit();
        }

        var before = env.GetStats();
        using (var tx = env.BeginWrite())
        {
            Assert.True(tx.DeleteTree("big"));
            Assert.False(tx.DeleteTree("big"));
            Assert.Null(tx.OpenTree("big"));
            tx.Commit();
        }

        var after = env.GetStats();
        Assert.True(after.FreePages > before.FreePages + 1000, $"free pages {before.FreePages} -> {after.FreePages}");
        using var r = env.BeginRead();
        Assert.Null(r.OpenTree("big"));
    }

    [Fact]
    public void ValuesOfEverySizeRoundTrip()
    {
        var env = Open();
        int[] sizes = [0, 1, 100, 1100, 2048, 2049, 8000, 8192, 70_000, 1_000_000];
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("v");
            foreach (var size in sizes)
            {
                t.Put(BitConverter.GetBytes(size), Pattern(size));
            }

            tx.Commit();
        }

        for (var round = 0; round < 2; round++)
        {
            using (var r = env.BeginRead())
            {
                var t = r.OpenTree("v")!;
                foreach (var size in sizes)
                {
                    Assert.True(t.TryGet(BitConverter.GetBytes(size), out var v));
                    Assert.True(v.SequenceEqual(Pattern(size)), $"size {size}");
                }
            }

            env = Reopen(env);
        }
    }

    [Fact]
    public void HundredMegabyteValueRoundTrips()
    {
        var env = Open();
        const int size = 100 * 1024 * 1024;
        using (var tx = env.BeginWrite())
        {
            var span = tx.CreateTree("huge").Reserve(Bytes("one"), size);
            for (var i = 0; i < size; i += 4096)
            {
                span[i] = (byte)(i / 4096);
            }

            tx.Commit();
        }

        env = Reopen(env);
        using var r = env.BeginRead();
        Assert.True(r.OpenTree("huge")!.TryGet(Bytes("one"), out var v));
        Assert.Equal(size, v.Length);
        for (var i = 0; i < size; i += 4096)
        {
            Assert.Equal((byte)(i / 4096), v[i]);
        }
    }

    [Fact]
    public void SmallOverflowValueDoesNotCostAWholePage()
    {
        var env = Open();
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("docs");
            var value = new byte[1126];
            for (var i = 0; i < 700; i++)
            {
                t.Put(BigEndian(i), value);
            }

            tx.Commit();
        }

        using var rtx = env.BeginRead();
        var tree = rtx.OpenTree("docs")!;
        var stats = tree.Validate();

        // 700 values of 1.1 KiB inline, appended in key order: 7 per page, so ~100 leaves, not 700 pages.
        Assert.True(stats.Pages < 110, $"{stats.Pages} pages");
    }

    [Fact]
    public void KeysLongerThanTheLimitAreRefused()
    {
        var env = Open();
        using var tx = env.BeginWrite();
        var t = tx.CreateTree("k");
        t.Put(new byte[Tree.MaxKeySize], [1]);
        Assert.Throws<StorageLimitException>(() => t.Put(new byte[Tree.MaxKeySize + 1], [1]));
    }

    internal static byte[] BigEndian(int i)
    {
        var b = new byte[4];
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(b, i);
        return b;
    }

    internal static byte[] Pattern(int size)
    {
        var b = new byte[size];
        for (var i = 0; i < size; i++)
        {
            b[i] = (byte)((i * 31) + (size * 7));
        }

        return b;
    }
}
