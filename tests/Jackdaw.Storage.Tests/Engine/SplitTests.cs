using Jackdaw.Storage.Engine;

namespace Jackdaw.Storage.Tests.Engine;

public sealed class SplitTests : EngineTestBase
{
    /// <summary>
    /// 8 tiny entries then 8 entries with ~500-byte keys fill a leaf; a split by entry count would put
    /// all the big ones right, where the incoming 520-byte key does not fit.
    /// </summary>
    [Theory]
    [InlineData(0)]
    [InlineData(4)]
    [InlineData(8)]
    public void SplitByBytesMakesRoomForLargeKeyAfterSmallKeys(int position)
    {
        var env = Open();
        using var tx = env.BeginWrite();
        var tree = tx.CreateTree("t");
        var keys = new List<byte[]>();
        for (var i = 0; i < 8; i++)
        {
            keys.Add([(byte)'A', (byte)i]);
            tree.Put(keys[^1], []);
        }

        for (var i = 0; i < 8; i++)
        {
            var key = new byte[500];
            key.AsSpan().Fill((byte)'Z');
            key[1] = (byte)(10 * i);
            keys.Add(key);
            tree.Put(key, new byte[480]);
        }

        Assert.Equal(1, tree.Validate().Pages);

        var incoming = new byte[520];
        incoming.AsSpan().Fill((byte)'Z');
        incoming[1] = (byte)((10 * position) + 5);
        tree.Put(incoming, new byte[480]);
        keys.Add(incoming);

        var stats = tree.Validate();
        Assert.Equal(2, stats.Leaves);
        foreach (var key in keys)
        {
            Assert.True(tree.TryGet(key, out _));
        }

        tx.Commit();
    }

    /// <summary>
    /// 1000-byte keys make branches hold only a few entries, so the tree reaches three and four levels
    /// in a few hundred inserts; every insert (many of them split a leaf and its parents, sending the
    /// key to the other half) must land where a lookup finds it.
    /// </summary>
    [Fact]
    public void SplitPlacesNewKeyInRightPageAfterMultiLevelSplit()
    {
        var env = Open();
        using var tx = env.BeginWrite();
        var tree = tx.CreateTree("t");
        var random = new Random(7);
        var inserted = new List<byte[]>();
        var maxDepth = 0;
        for (var i = 0; i < 600; i++)
        {
            var key = new byte[1000];
            random.NextBytes(key);
            var depthBefore = tree.Header.Depth;
            tree.Put(key, BitConverter.GetBytes(i));
            inserted.Add(key);
            Assert.True(tree.TryGet(key, out var v), $"insert {i} at depth {depthBefore}");
            Assert.Equal(i, BitConverter.ToInt32(v));
            if (tree.Header.Depth != depthBefore || i % 50 == 0)
            {
                tree.Validate();
            }

            maxDepth = Math.Max(maxDepth, tree.Header.Depth);
        }

        Assert.True(maxDepth >= 4, $"depth {maxDepth}");
        tree.Validate();
        foreach (var key in inserted)
        {
            Assert.True(tree.TryGet(key, out _));
        }

        // Deleting everything merges pages back down to an empty root leaf.
        random.Shuffle(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(inserted));
        for (var i = 0; i < inserted.Count; i++)
        {
            Assert.True(tree.Delete(inserted[i]));
            if (i % 50 == 0)
            {
                tree.Validate();
            }
        }

        var end = tree.Validate();
        Assert.Equal(1, end.Pages);
        Assert.Equal(0, tree.Count);
        tx.Commit();
    }

    [Fact]
    public void DeletesMergePagesSoTheyDoNotStayMostlyEmpty()
    {
        var env = Open();
        using var tx = env.BeginWrite();
        var tree = tx.CreateTree("t");
        for (var i = 0; i < 20_000; i++)
        {
            tree.Put(BasicTests.BigEndian(i), new byte[100]);
        }

        var full = tree.Validate();

        // Keep every tenth key: without merges the leaf count would stay the same.
        for (var i = 0; i < 20_000; i++)
        {
            if (i % 10 != 0)
            {
                tree.Delete(BasicTests.BigEndian(i));
            }
        }

        var thinned = tree.Validate();
        Assert.Equal(2000, tree.Count);
        Assert.True(thinned.Leaves * 4 < full.Leaves, $"{full.Leaves} leaves before, {thinned.Leaves} after");
        Assert.True(thinned.UsedBytes > thinned.Pages * Jackdaw.Storage.Engine.Paging.Constants.UsablePageSpace / 4, "average fill under a quarter");
    }

    /// <summary>
    /// Random inserts of 1 KiB values: a page holds only seven, so splits alone leave pages ~60% full;
    /// shifting entries into a sibling with room before splitting keeps the leaves well over 70% full.
    /// </summary>
    [Fact]
    public void RandomInsertsOfOneKilobyteValuesFillLeavesWell()
    {
        var env = Open();
        var random = new Random(9);
        var key = new byte[8];
        var value = new byte[1024];
        for (var t = 0; t < 20; t++)
        {
            using var tx = env.BeginWrite();
            var tree = tx.CreateTree("t");
            for (var i = 0; i < 1000; i++)
            {
                random.NextBytes(key);
                tree.Put(key, value);
            }

            tx.Commit();
        }

        using var r = env.BeginRead();
        var stats = r.OpenTree("t")!.Validate();
        var fill = (double)stats.UsedBytes / (stats.Pages * Jackdaw.Storage.Engine.Paging.Constants.UsablePageSpace);
        Assert.True(fill > 0.7, $"leaves are {fill:P0} full on average");
    }
}
