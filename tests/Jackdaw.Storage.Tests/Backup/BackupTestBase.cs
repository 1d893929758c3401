using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Tests.Engine;

namespace Jackdaw.Storage.Tests.Backup;

/// <summary>A source environment, a workload for it, restores of backup chains, and a full comparison of two states.</summary>
public abstract class BackupTestBase : EngineTestBase
{
    protected string SourceFolder => Path.Combine(Folder, "source");

    protected StorageEnvironmentOptions SourceOptions(long maxJournalFileSize = 64L * 1024 * 1024, TimeSpan? flushInterval = null) => new()
    {
        Path = SourceFolder,
        MaxJournalFileSize = maxJournalFileSize,
        FlushInterval = flushInterval ?? TimeSpan.FromMilliseconds(50),
    };

    /// <summary>
    /// Commits <paramref name="transactions"/> transactions of puts (small values and overflow runs)
    /// and deletes over three trees, now and then dropping and recreating one.
    /// </summary>
    protected static void Mutate(StorageEnvironment env, Random random, int transactions)
    {
        string[] names = ["a", "b", "c"];
        for (var t = 0; t < transactions; t++)
        {
            using var tx = env.BeginWrite();
            var name = names[random.Next(names.Length)];
            if (random.Next(200) == 0)
            {
                tx.DeleteTree(name);
            }

            var tree = tx.CreateTree(name);
            var operations = random.Next(1, 12);
            for (var i = 0; i < operations; i++)
            {
                var key = Bytes($"key/{random.Next(3000):D5}");
                if (random.Next(5) == 0)
                {
                    tree.Delete(key);
                    continue;
                }

                var value = new byte[random.Next(8) == 0 ? random.Next(3000, 30000) : random.Next(10, 600)];
                random.NextBytes(value);
                tree.Put(key, value);
            }

            tx.Commit();
        }
    }

    /// <summary>Every tree (listed by the root tree) and its entries, as <paramref name="tx"/> sees them; each tree validated.</summary>
    internal static SortedDictionary<string, List<(byte[] Key, byte[] Value)>> Contents(ReadTransaction tx)
    {
        var names = new List<string>();
        using (var it = tx.RootTree.Iterate())
        {
            if (it.SeekFirst())
            {
                do
                {
                    names.Add(Text(it.Key));
                }
                while (it.MoveNext());
            }
        }

        var result = new SortedDictionary<string, List<(byte[], byte[])>>(StringComparer.Ordinal);
        foreach (var name in names)
        {
            var tree = tx.OpenTree(name)!;
            tree.Validate();
            var entries = new List<(byte[], byte[])>();
            using var it = tree.Iterate();
            if (it.SeekFirst())
            {
                do
                {
                    entries.Add((it.Key.ToArray(), it.Value.ToArray()));
                }
                while (it.MoveNext());
            }

            result[name] = entries;
        }

        return result;
    }

    internal static void AssertSameContents(SortedDictionary<string, List<(byte[] Key, byte[] Value)>> expected, StorageEnvironment actual)
    {
        using var tx = actual.BeginRead();
        var restored = Contents(tx);
        Assert.Equal(expected.Keys, restored.Keys);
        foreach (var (name, entries) in expected)
        {
            var other = restored[name];
            Assert.True(entries.Count == other.Count, $"tree {name}: {entries.Count} entries expected, {other.Count} restored");
            for (var i = 0; i < entries.Count; i++)
            {
                Assert.True(entries[i].Key.AsSpan().SequenceEqual(other[i].Key), $"tree {name}, entry {i}: key {Text(entries[i].Key)} expected, {Text(other[i].Key)} restored");
                Assert.True(entries[i].Value.AsSpan().SequenceEqual(other[i].Value), $"tree {name}, key {Text(entries[i].Key)}: the restored value differs");
            }
        }
    }

    /// <summary>Restores <paramref name="streams"/> (a full backup, then incrementals) into a new folder and opens it.</summary>
    protected StorageEnvironment Restore(string name, params byte[][] streams)
    {
        var folder = Path.Combine(Folder, name);
        using (var restore = EnvironmentRestore.Create(folder))
        {
            restore.ApplyFull(new MemoryStream(streams[0]), CancellationToken.None);
            foreach (var stream in streams.Skip(1))
            {
                restore.ApplyIncremental(new MemoryStream(stream), CancellationToken.None);
            }

            restore.Complete();
        }

        return Open(Options(folder));
    }

    /// <summary>A backup written to memory, with what its transaction saw.</summary>
    internal sealed record Taken(byte[] Stream, long TransactionId, SortedDictionary<string, List<(byte[] Key, byte[] Value)>> Contents, BackupProgress Progress);

    internal static Taken Full(StorageEnvironment env, Stream? destination = null, bool retain = true) =>
        Take(env, (b, d, p) => b.WriteFull(d, p, CancellationToken.None), destination, retain);

    internal static Taken Incremental(StorageEnvironment env, long after, bool minimal = false, bool retain = true) =>
        Take(env, minimal ? (b, d, p) => b.WriteMinimalIncremental(after, d, p, CancellationToken.None) : (b, d, p) => b.WriteIncremental(after, d, p, CancellationToken.None), retain: retain);

    /// <summary>Takes a backup and (with <paramref name="retain"/>) moves journal retention to its transaction, as a chain's periodic task does.</summary>
    internal static Taken Take(StorageEnvironment env, Action<EnvironmentBackup, Stream, BackupProgress> write, Stream? destination = null, bool retain = true)
    {
        destination ??= new MemoryStream();
        var progress = new BackupProgress();
        using var backup = env.BeginBackup();
        write(backup, destination, progress);
        if (retain)
        {
            backup.RetainJournals();
        }

        var bytes = destination is MemoryStream memory ? memory.ToArray() : [];
        return new Taken(bytes, backup.TransactionId, Contents(backup.Transaction), progress);
    }
}
