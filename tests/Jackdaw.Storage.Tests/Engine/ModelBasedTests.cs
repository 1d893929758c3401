using Jackdaw.Storage.Engine;
using Xunit.Abstractions;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>
/// Random operations mirrored in a <see cref="SortedDictionary{TKey,TValue}"/>: after every commit
/// the tree must hold exactly the model and pass <see cref="Tree.Validate"/>; the same after reopening.
/// </summary>
public sealed class ModelBasedTests(ITestOutputHelper output) : EngineTestBase
{
    [Theory]
    [InlineData(1, 100_000)]
    [InlineData(2, 50_000)]
    [InlineData(3, 50_000)]
    public void RandomOperationsMatchSortedDictionary(int seed, int operations)
    {
        var random = new Random(seed);
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var keys = new SortedSet<byte[]>(ByteArrayComparer.Instance);
        var pool = new List<byte[]>();
        var env = Open();
        var done = 0;
        var commits = 0;
        var ranges = 0;
        while (done < operations)
        {
            var rollback = random.Next(10) == 0;
            var batch = random.Next(1, 400);
            using (var tx = env.BeginWrite())
            {
                var tree = tx.CreateTree("model");
                for (var i = 0; i < batch; i++, done++)
                {
                    var op = random.Next(100);
                    if (op < 45)
                    {
                        var key = PickKey(random, pool, allowNew: true);
                        var value = RandomValue(random);
                        tree.Put(key, value);
                        if (!rollback)
                        {
                            model[key] = value;
                            keys.Add(key);
                        }
                    }
                    else if (op < 70)
                    {
                        var key = PickKey(random, pool, allowNew: false);
                        var existed = tree.Delete(key);
                        if (!rollback)
                        {
                            Assert.Equal(model.Remove(key), existed);
                            keys.Remove(key);
                        }
                    }
                    else if (op < 85)
                    {
                        if (rollback)
                        {
                            continue;
                        }

                        var key = PickKey(random, pool, allowNew: false);
                        var found = tree.TryGet(key, out var v);
                        Assert.Equal(model.TryGetValue(key, out var expected), found);
                        if (found)
                        {
                            Assert.True(v.SequenceEqual(expected));
                        }
                    }
                    else if (!rollback)
                    {
                        ranges++;
                        CheckRange(random, tree, keys, model);
                    }
                }

                if (!rollback)
                {
                    tx.Commit();
                    commits++;
                }
            }

            using (var r = env.BeginRead())
            {
                CheckEqual(r.OpenTree("model"), model);
            }

            if (random.Next(40) == 0)
            {
                env = Reopen(env);
            }
        }

        env = Reopen(env);
        using (var r = env.BeginRead())
        {
            CheckEqual(r.OpenTree("model"), model);
        }

        output.WriteLine($"seed {seed}: {operations} operations, {commits} commits, {ranges} range scans, {model.Count} keys at the end, stats {env.GetStats()}");
    }

    private static byte[] PickKey(Random random, List<byte[]> pool, bool allowNew)
    {
        if (pool.Count > 0 && (!allowNew || random.Next(3) > 0))
        {
            return pool[random.Next(pool.Count)];
        }

        var length = random.Next(100) switch
        {
            < 60 => random.Next(1, 16),
            < 90 => random.Next(16, 200),
            < 98 => random.Next(200, 700),
            _ => random.Next(700, Tree.MaxKeySize + 1),
        };
        var key = new byte[length];
        random.NextBytes(key);

        // A shared first byte makes prefixes and neighbours collide often.
        key[0] = (byte)random.Next(4);
        pool.Add(key);
        if (pool.Count > 6000)
        {
            pool.RemoveAt(random.Next(pool.Count));
        }

        return key;
    }

    private static byte[] RandomValue(Random random)
    {
        var length = random.Next(100) switch
        {
            < 50 => random.Next(1, 100),
            < 80 => random.Next(100, 2100),
            < 95 => random.Next(2100, 9000),
            _ => random.Next(9000, (64 * 1024) + 1),
        };
        var value = new byte[length];
        random.NextBytes(value);
        return value;
    }

    private static void CheckRange(Random random, Tree tree, SortedSet<byte[]> keys, SortedDictionary<byte[], byte[]> model)
    {
        var start = new byte[random.Next(1, 4)];
        random.NextBytes(start);
        start[0] = (byte)random.Next(5);
        using var it = tree.Iterate();
        var steps = random.Next(1, 50);
        if (random.Next(2) == 0)
        {
            var expected = keys.GetViewBetween(start, MaxKey).Take(steps).ToList();
            var ok = it.Seek(start);
            foreach (var key in expected)
            {
                Assert.True(ok);
                Assert.True(it.Key.SequenceEqual(key));
                Assert.True(it.Value.SequenceEqual(model[key]));
                ok = it.MoveNext();
            }

            if (expected.Count < steps)
            {
                Assert.False(ok);
            }
        }
        else
        {
            var expected = keys.GetViewBetween(MinKey, start).Reverse().Take(steps).ToList();
            var ok = it.SeekLastLessOrEqual(start);
            foreach (var key in expected)
            {
                Assert.True(ok);
                Assert.True(it.Key.SequenceEqual(key));
                ok = it.MovePrev();
            }

            if (expected.Count < steps)
            {
                Assert.False(ok);
            }
        }
    }

    private static readonly byte[] MinKey = [];
    private static readonly byte[] MaxKey = Enumerable.Repeat((byte)0xFF, Tree.MaxKeySize + 1).ToArray();

    internal static void CheckEqual(Tree? tree, SortedDictionary<byte[], byte[]> model)
    {
        if (tree is null)
        {
            Assert.Empty(model);
            return;
        }

        Assert.Equal(model.Count, tree.Count);
        tree.Validate();
        using var it = tree.Iterate();
        var ok = it.SeekFirst();
        foreach (var (key, value) in model)
        {
            Assert.True(ok);
            Assert.True(it.Key.SequenceEqual(key));
            Assert.True(it.Value.SequenceEqual(value));
            ok = it.MoveNext();
        }

        Assert.False(ok);
    }
}
