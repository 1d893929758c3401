using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;

namespace Jackdaw.Storage.Tests.Backup;

/// <summary>A destination that fails, a cancelled backup, a restore on a full disk: the environment goes on.</summary>
public sealed class BackupFailureTests : BackupTestBase
{
    private static void Write(EnvironmentBackup backup, string kind, long after, Stream destination, BackupProgress progress, CancellationToken cancel)
    {
        switch (kind)
        {
            case "full":
                backup.WriteFull(destination, progress, cancel);
                break;
            case "incremental":
                backup.WriteIncremental(after, destination, progress, cancel);
                break;
            default:
                backup.WriteMinimalIncremental(after, destination, progress, cancel);
                break;
        }
    }

    /// <summary>Small journal files flushed twice: without retention or a pin left behind, none is kept.</summary>
    private void AssertNothingRetainedAfterFlushes(StorageEnvironment env, Random random)
    {
        Mutate(env, random, 200);
        env.Flush();
        Mutate(env, random, 3);
        env.Flush();
        Assert.Empty(JournalWriter.ListFiles(SourceFolder, JournalWriter.RetainedPrefix));
    }

    [Theory]
    [InlineData("full")]
    [InlineData("incremental")]
    [InlineData("minimal")]
    public void ADestinationThatFailsLeavesTheEnvironmentWritableAndTheNextBackupWorks(string kind)
    {
        var env = Open(SourceOptions(maxJournalFileSize: 64 * 1024));
        var random = new Random(41);
        Mutate(env, random, 150);
        var after = Full(env).TransactionId;
        Mutate(env, random, 150);

        var full = new IOException("No space left on device (test)", 28);
        var destination = new FailingStream(failAfterBytes: 5000, full);
        using (var backup = env.BeginBackup())
        {
            var e = Assert.Throws<IOException>(() => Write(backup, kind, after, destination, new BackupProgress(), CancellationToken.None));
            Assert.Same(full, e);
            Assert.Throws<InvalidOperationException>(() => backup.Transaction);
        }

        Assert.Null(env.Failure);
        Assert.Equal(after, env.JournalRetention);
        var second = Take(env, (b, d, p) => Write(b, kind, after, d, p, CancellationToken.None), retain: false);
        Assert.True(second.Progress.Bytes > 5000);
        env.StopRetainingJournals();
        AssertNothingRetainedAfterFlushes(env, random);
    }

    [Fact]
    public void ACancelledBackupStopsBetweenChunksAndReleasesWhatItHeld()
    {
        var env = Open(SourceOptions(maxJournalFileSize: 64 * 1024));
        var random = new Random(42);
        Mutate(env, random, 300);
        using var cancel = new CancellationTokenSource();
        var destination = new HookStream(writes =>
        {
            if (writes == 3)
            {
                cancel.Cancel();
            }
        });

        using (var backup = env.BeginBackup())
        {
            Assert.ThrowsAny<OperationCanceledException>(() => backup.WriteFull(destination, new BackupProgress(), cancel.Token));
        }

        AssertNothingRetainedAfterFlushes(env, random);
        var taken = Full(env, retain: false);
        AssertSameContents(taken.Contents, Restore("restored", taken.Stream));
    }

    [Fact]
    public void ABackupWritesOneStreamAndHasNoTransactionBefore()
    {
        var env = Open(SourceOptions());
        using var backup = env.BeginBackup();
        Assert.Throws<InvalidOperationException>(() => backup.TransactionId);
        backup.WriteFull(new MemoryStream(), new BackupProgress(), CancellationToken.None);
        Assert.Throws<InvalidOperationException>(() => backup.WriteIncremental(0, new MemoryStream(), new BackupProgress(), CancellationToken.None));
        Assert.Equal(0, backup.TransactionId);
    }

    [Fact]
    public void ARestoreOnAFullDiskFailsWithDiskFullAndLeavesNothing()
    {
        var env = Open(SourceOptions());
        Mutate(env, new Random(43), 100);
        var taken = Full(env, retain: false);
        var folder = Path.Combine(Folder, "restored");
        var io = new FaultInjectingStorageIo();
        using (var restore = EnvironmentRestore.Create(folder, io))
        {
            io.DiskFull = true;
            var e = Assert.Throws<DiskFullException>(() => restore.ApplyFull(new MemoryStream(taken.Stream), CancellationToken.None));
            Assert.Contains(folder, e.Path, StringComparison.Ordinal);
            Assert.Throws<InvalidOperationException>(restore.Complete);
        }

        Assert.False(Directory.Exists(folder));
        io.DiskFull = false;
        AssertSameContents(taken.Contents, Restore("restored", taken.Stream));
    }
}

/// <summary>A destination that throws <paramref name="failure"/> once more than <paramref name="failAfterBytes"/> bytes were written to it.</summary>
internal sealed class FailingStream(long failAfterBytes, Exception failure) : MemoryStream
{
    public override void Write(ReadOnlySpan<byte> buffer) => Write(buffer.ToArray(), 0, buffer.Length);

    public override void Write(byte[] buffer, int offset, int count)
    {
        if (Length + count > failAfterBytes)
        {
            throw failure;
        }

        base.Write(buffer, offset, count);
    }
}
