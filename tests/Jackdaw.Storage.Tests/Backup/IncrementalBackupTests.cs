using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;

namespace Jackdaw.Storage.Tests.Backup;

public sealed class IncrementalBackupTests : BackupTestBase
{
    [Fact]
    public void ChainOfFullIncrementalMinimalAndIncrementalRestoresTheSource()
    {
        // Small journal files: flushes retire files between backups, so retained ones are read too.
        var options = SourceOptions(maxJournalFileSize: 128 * 1024);
        var env = Open(options);
        var random = new Random(11);
        Mutate(env, random, 200);
        var full = Full(env);

        Mutate(env, random, 150);
        env.Flush();
        Mutate(env, random, 5);
        env.Flush();
        Assert.NotEmpty(JournalWriter.ListFiles(SourceFolder, JournalWriter.RetainedPrefix));
        var first = Incremental(env, full.TransactionId);

        // A restart in the middle of the chain: the journals since the last backup stay retained.
        Mutate(env, random, 150);
        env = Reopen(env, options);
        var minimal = Incremental(env, first.TransactionId, minimal: true);

        Mutate(env, random, 150);
        var last = Incremental(env, minimal.TransactionId);

        Assert.Equal(first.TransactionId - full.TransactionId, first.Progress.Records);
        Assert.Equal(last.TransactionId - minimal.TransactionId, last.Progress.Records);
        AssertSameContents(last.Contents, Restore("all", full.Stream, first.Stream, minimal.Stream, last.Stream));
        AssertSameContents(first.Contents, Restore("second", full.Stream, first.Stream));
        AssertSameContents(minimal.Contents, Restore("third", full.Stream, first.Stream, minimal.Stream));
        AssertSameContents(full.Contents, Restore("first", full.Stream));
    }

    [Fact]
    public void ChainOfMinimalIncrementalsRestoresOverflowRunsAndDroppedTrees()
    {
        var env = Open(SourceOptions(maxJournalFileSize: 128 * 1024));
        var random = new Random(12);
        Mutate(env, random, 100);
        var chain = new List<Taken> { Full(env) };
        for (var i = 0; i < 4; i++)
        {
            Mutate(env, random, 120);
            using (var tx = env.BeginWrite())
            {
                // Freed and reused pages and runs between two backups.
                tx.DeleteTree(i % 2 == 0 ? "a" : "b");
                var tree = tx.CreateTree("runs");
                var value = new byte[random.Next(9000, 40000)];
                random.NextBytes(value);
                tree.Put(Bytes($"run/{i}"), value);
                tree.Delete(Bytes($"run/{i - 1}"));
                tx.Commit();
            }

            env.Flush();
            chain.Add(Incremental(env, chain[^1].TransactionId, minimal: true));
        }

        AssertSameContents(chain[^1].Contents, Restore("restored", [.. chain.Select(t => t.Stream)]));
    }

    [Fact]
    public void MinimalIncrementalOfOnePageUpdatedAThousandTimesHoldsAFewPages()
    {
        var env = Open(SourceOptions());
        using (var tx = env.BeginWrite())
        {
            var tree = tx.CreateTree("hot");
            for (var i = 0; i < 20; i++)
            {
                tree.Put(Bytes($"key/{i}"), new byte[100]);
            }

            tx.Commit();
        }

        var full = Full(env);
        var random = new Random(13);
        for (var i = 0; i < 1000; i++)
        {
            using var tx = env.BeginWrite();
            var value = new byte[100];
            random.NextBytes(value);
            tx.CreateTree("hot").Put(Bytes("key/7"), value);
            tx.Commit();
        }

        var journal = Incremental(env, full.TransactionId, retain: false);
        var minimal = Incremental(env, full.TransactionId, minimal: true, retain: false);
        Assert.Equal(1000, journal.Progress.Records);
        Assert.Equal(1, minimal.Progress.Records);
        // The state page, the tree's leaf (also its root): a page or two, not a thousand records.
        Assert.InRange(minimal.Progress.Pages, 1, 3);
        Assert.True(minimal.Stream.Length * 5 < journal.Stream.Length, $"minimal {minimal.Stream.Length} bytes, journal {journal.Stream.Length} bytes");
        AssertSameContents(journal.Contents, Restore("journal", full.Stream, journal.Stream));
        AssertSameContents(minimal.Contents, Restore("minimal", full.Stream, minimal.Stream));
    }

    [Fact]
    public void MergedRecordsAreCappedAndRestoredAsOneUnit()
    {
        var env = Open(SourceOptions());
        var full = Full(env);
        Mutate(env, new Random(14), 300);
        var progress = new BackupProgress();
        var stream = new MemoryStream();
        long transactionId;
        SortedDictionary<string, List<(byte[] Key, byte[] Value)>> contents;
        using (var backup = env.BeginBackup())
        {
            backup.MaxMergedBytes = 1024 * 1024 + 12;
            backup.WriteMinimalIncremental(full.TransactionId, stream, progress, CancellationToken.None);
            transactionId = backup.TransactionId;
            contents = Contents(backup.Transaction);
        }

        Assert.True(progress.Pages > 200, $"{progress.Pages} pages");
        Assert.True(progress.Records * (1024 * 1024 + 12) >= progress.Pages * 8192, $"{progress.Records} merged records for {progress.Pages} pages under a 1 MiB cap");
        AssertSameContents(contents, Restore("restored", full.Stream, stream.ToArray()));
        Assert.Throws<ArgumentOutOfRangeException>(() => env.BeginBackup().MaxMergedBytes = 4096);
        Assert.True(transactionId > full.TransactionId);
    }

    [Fact]
    public void AnEmptyIncrementalKeepsTheChainWhereItWas()
    {
        var env = Open(SourceOptions());
        Mutate(env, new Random(15), 30);
        var full = Full(env);
        var empty = Incremental(env, full.TransactionId);
        var emptyMinimal = Incremental(env, full.TransactionId, minimal: true);
        Assert.Equal(full.TransactionId, empty.TransactionId);
        Assert.Equal(0, empty.Progress.Records);
        AssertSameContents(full.Contents, Restore("restored", full.Stream, empty.Stream, emptyMinimal.Stream));
    }

    private StorageEnvironment Reopen(StorageEnvironment env, StorageEnvironmentOptions options)
    {
        env.Dispose();
        return Open(options);
    }
}
