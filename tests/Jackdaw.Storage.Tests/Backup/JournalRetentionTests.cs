using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;

namespace Jackdaw.Storage.Tests.Backup;

public sealed class JournalRetentionTests : BackupTestBase
{
    private List<(long Sequence, string Path)> Retained() => JournalWriter.ListFiles(SourceFolder, JournalWriter.RetainedPrefix);

    private StorageEnvironment Reopen(StorageEnvironment env, StorageEnvironmentOptions options)
    {
        env.Dispose();
        return Open(options);
    }

    private static long LastTransaction(StorageEnvironment env)
    {
        using var tx = env.BeginRead();
        return tx.Id;
    }

    [Fact]
    public void JournalsAreAvailableAfterARestartOnlyWhenRetained()
    {
        var options = SourceOptions();
        var env = Open(options);
        Mutate(env, new Random(21), 20);
        var mark = LastTransaction(env);
        Assert.True(env.JournalsAvailableAfter(mark - 5), "the current journal file still holds them");

        env = Reopen(env, options);
        Assert.Null(env.JournalRetention);
        Assert.False(env.JournalsAvailableAfter(mark - 5));
        Assert.True(env.JournalsAvailableAfter(mark));
        Assert.Throws<JournalsUnavailableException>(() => Incremental(env, mark - 5));
        Assert.Throws<JournalsUnavailableException>(() => env.RetainJournalsAfter(mark - 5));

        env.RetainJournalsAfter(mark);
        Assert.Equal(mark, env.JournalRetention);
        Mutate(env, new Random(22), 20);
        env = Reopen(env, options);
        Assert.Equal(mark, env.JournalRetention);
        Assert.True(env.JournalsAvailableAfter(mark));
        Assert.False(env.JournalsAvailableAfter(mark - 1));
        Assert.NotEmpty(Retained());
        var incremental = Incremental(env, mark, retain: false);
        Assert.Equal(LastTransaction(env) - mark, incremental.Progress.Records);
        Assert.True(incremental.Progress.Records > 10);

        env.StopRetainingJournals();
        Assert.Null(env.JournalRetention);
        Assert.Empty(Retained());
        env = Reopen(env, options);
        Assert.Null(env.JournalRetention);
        Assert.False(env.JournalsAvailableAfter(mark));
    }

    [Fact]
    public void MovingRetentionForwardDeletesWhatIsNoLongerNeededAndBackIsRefused()
    {
        var options = SourceOptions(maxJournalFileSize: 64 * 1024);
        var env = Open(options);
        env.RetainJournalsAfter(0);
        Mutate(env, new Random(23), 300);
        env.Flush();
        Mutate(env, new Random(24), 3);
        env.Flush();
        var retained = Retained();
        Assert.True(retained.Count > 3, $"{retained.Count} retained files");
        Assert.True(env.JournalsAvailableAfter(0));

        var mark = LastTransaction(env) - 10;
        env.RetainJournalsAfter(mark);
        Assert.True(Retained().Count < retained.Count, "files before the retention are deleted");
        Assert.True(env.JournalsAvailableAfter(mark));
        Assert.False(env.JournalsAvailableAfter(0));
        Assert.Throws<JournalsUnavailableException>(() => env.RetainJournalsAfter(0));
        Assert.Equal(mark, env.JournalRetention);
    }

    [Fact]
    public void RetentionSurvivesACrashWithATornJournalTailAndRecoveryStillReplaysNewerJournals()
    {
        var options = SourceOptions(maxJournalFileSize: 64 * 1024, flushInterval: TimeSpan.FromHours(1));
        var env = Open(options);
        var random = new Random(25);
        Mutate(env, random, 50);
        var full = Full(env);
        Mutate(env, random, 100);
        var beforeCrash = Snapshot(env);

        // A crash that leaves garbage after the last record (a torn tail).
        env.DisposeWithoutFlush();
        var newest = JournalWriter.ListFiles(SourceFolder)[^1].Path;
        AppendGarbageAfterRecords(newest);

        env = Open(options);
        Assert.True(env.RecoveredTransactions > 0);
        AssertSameContents(beforeCrash, env);
        Assert.Equal(full.TransactionId, env.JournalRetention);
        Assert.Empty(JournalWriter.ListFiles(SourceFolder));
        Assert.NotEmpty(Retained());
        Assert.True(env.JournalsAvailableAfter(full.TransactionId));

        // A kept file with garbage at its end, then newer journals and another crash: recovery must
        // replay the newer journals (it never reads retained files).
        AppendGarbageAfterRecords(Retained()[^1].Path);
        var recovered = LastTransaction(env);
        Mutate(env, random, 60);
        var beforeSecondCrash = Snapshot(env);
        env.DisposeWithoutFlush();
        env = Open(options);
        Assert.Equal(LastTransaction(env) - recovered, env.RecoveredTransactions);
        Assert.True(env.RecoveredTransactions > 50);
        AssertSameContents(beforeSecondCrash, env);

        var incremental = Incremental(env, full.TransactionId);
        Assert.Equal(incremental.TransactionId - full.TransactionId, incremental.Progress.Records);
        Assert.True(incremental.Progress.Records > 100, $"{incremental.Progress.Records} records");
        AssertSameContents(beforeSecondCrash, Restore("restored", full.Stream, incremental.Stream));
    }

    [Fact]
    public void ADamagedRetentionFileIsReportedByName()
    {
        var options = SourceOptions();
        var env = Open(options);
        env.RetainJournalsAfter(0);
        env.Dispose();
        var path = Path.Combine(SourceFolder, "journal-retention");
        Assert.False(File.Exists(path + ".new"));
        var bytes = File.ReadAllBytes(path);
        bytes[17] ^= 1;
        File.WriteAllBytes(path, bytes);
        var e = Assert.Throws<StorageCorruptedException>(() => StorageEnvironment.Open(options));
        Assert.Equal(path, e.FileName);
    }

    private static SortedDictionary<string, List<(byte[] Key, byte[] Value)>> Snapshot(StorageEnvironment env)
    {
        using var tx = env.BeginRead();
        return Contents(tx);
    }

    private static void AppendGarbageAfterRecords(string path)
    {
        var bytes = File.ReadAllBytes(path);
        var records = Engine.JournalFileReader.Records(bytes);
        var (h, offset) = records[^1];
        var end = offset + JournalRecordHeader.Size + h.PayloadSize;
        var garbage = new byte[300];
        new Random(26).NextBytes(garbage);
        if (bytes.Length < end + garbage.Length)
        {
            Array.Resize(ref bytes, end + garbage.Length);
        }

        garbage.CopyTo(bytes, end);
        File.WriteAllBytes(path, bytes);
    }
}
