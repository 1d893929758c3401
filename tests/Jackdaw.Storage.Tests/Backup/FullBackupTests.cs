using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;

namespace Jackdaw.Storage.Tests.Backup;

public sealed class FullBackupTests : BackupTestBase
{
    [Theory]
    [InlineData(64L * 1024 * 1024)]
    [InlineData(64L * 1024)] // journal files flushed during the copy are kept by its pin, as retained files
    public void FullBackupWhileAWriterCommitsRestoresTheStateAtItsTransaction(long maxJournalFileSize)
    {
        var env = Open(SourceOptions(maxJournalFileSize));
        Mutate(env, new Random(1), 400);
        env.Flush();

        using var stop = new CancellationTokenSource();
        var writer = new Thread(() =>
        {
            var random = new Random(2);
            while (!stop.IsCancellationRequested)
            {
                Mutate(env, random, 1);
            }
        });
        writer.Start();

        // The data file must change under the copy: once the first pages are written, more
        // transactions commit and are flushed into pages not copied yet.
        var changed = 0;
        var destination = new HookStream(writes =>
        {
            if (writes == 3)
            {
                // Two flushes: journal files are deleted once both header slots are past them.
                Mutate(env, new Random(3), 40);
                env.Flush();
                Mutate(env, new Random(4), 5);
                env.Flush();
                if (maxJournalFileSize < 1024 * 1024)
                {
                    Assert.NotEmpty(JournalWriter.ListFiles(SourceFolder, JournalWriter.RetainedPrefix));
                }

                changed++;
            }
        });

        Taken taken;
        try
        {
            taken = Full(env, destination);
        }
        finally
        {
            stop.Cancel();
            writer.Join();
        }

        Assert.Equal(1, changed);
        Assert.True(taken.Progress.Pages > 100, $"{taken.Progress.Pages} pages copied");
        Assert.True(taken.Progress.Records >= 40, $"{taken.Progress.Records} journal records after the copied pages");
        Assert.Equal(destination.Length, taken.Progress.Bytes);

        var restored = Restore("restored", destination.ToArray());
        AssertSameContents(taken.Contents, restored);
        using var tx = restored.BeginRead();
        Assert.Equal(taken.TransactionId, tx.Id);
    }

    [Fact]
    public void RestoredEnvironmentTakesWritesAndRecoversThem()
    {
        var env = Open(SourceOptions());
        Mutate(env, new Random(4), 200);
        var taken = Full(env);
        var restored = Restore("restored", taken.Stream);
        Mutate(restored, new Random(5), 50);
        SortedDictionary<string, List<(byte[] Key, byte[] Value)>> expected;
        using (var tx = restored.BeginRead())
        {
            expected = Contents(tx);
        }

        restored = Reopen(restored, Options(Path.Combine(Folder, "restored")));
        AssertSameContents(expected, restored);
    }

    [Fact]
    public void FullBackupOfAnEmptyEnvironmentRestores()
    {
        var env = Open(SourceOptions());
        var taken = Full(env);
        var restored = Restore("restored", taken.Stream);
        AssertSameContents(taken.Contents, restored);
        Assert.Equal(0, taken.TransactionId);
    }

    private StorageEnvironment Reopen(StorageEnvironment env, StorageEnvironmentOptions options)
    {
        env.Dispose();
        return Open(options);
    }
}

/// <summary>A memory stream that calls back on each write with the count of writes so far.</summary>
internal sealed class HookStream(Action<int> onWrite) : MemoryStream
{
    private int _writes;

    public override void Write(ReadOnlySpan<byte> buffer) => Write(buffer.ToArray(), 0, buffer.Length);

    public override void Write(byte[] buffer, int offset, int count)
    {
        onWrite(++_writes);
        base.Write(buffer, offset, count);
    }
}
