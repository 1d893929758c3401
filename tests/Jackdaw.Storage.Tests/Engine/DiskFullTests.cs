using Jackdaw.Storage.Engine;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>A file system that fills up: clear errors, nothing acknowledged lost, read-only recovery.</summary>
public sealed class DiskFullTests : EngineTestBase
{
    private readonly FaultInjectingStorageIo _io = new();

    private StorageEnvironmentOptions FaultyOptions(TimeSpan? flushInterval = null) => new()
    {
        Path = Folder,
        FlushInterval = flushInterval ?? TimeSpan.FromMilliseconds(200),
        Io = _io,
    };

    private static void Put(StorageEnvironment env, string key, string value)
    {
        using var tx = env.BeginWrite();
        tx.CreateTree("t").Put(Bytes(key), Bytes(value));
        tx.Commit();
    }

    private static string? Get(StorageEnvironment env, string key)
    {
        using var tx = env.BeginRead();
        return tx.OpenTree("t") is { } tree && tree.TryGet(Bytes(key), out var value) ? Text(value) : null;
    }

    [Fact]
    public void ENoSpcIsRecognizedAsDiskFull()
    {
        Assert.True(StorageIo.IsDiskFull(new IOException("No space left on device", 28)));
        Assert.True(StorageIo.IsDiskFull(new InvalidOperationException("wrapped", new IOException("x", 28))));
        Assert.True(StorageIo.IsDiskFull(new DiskFullException("/x")));
        Assert.False(StorageIo.IsDiskFull(new IOException("Input/output error", 5)));
        Assert.False(StorageIo.IsDiskFull(null));
    }

    [Fact]
    public async Task AJournalWriteOnAFullDiskFailsWithDiskFullAndLosesNothingAcknowledged()
    {
        var env = StorageEnvironment.Open(FaultyOptions());
        for (var i = 0; i < 50; i++)
        {
            Put(env, $"k{i}", $"v{i}");
        }

        _io.DiskFull = true;
        var tx = env.BeginWrite();
        tx.CreateTree("t").Put(Bytes("lost"), Bytes("never acknowledged"));
        var failed = await Assert.ThrowsAsync<DiskFullException>(() => tx.CommitPipelined().Durable);
        Assert.Contains(Folder, failed.Message, StringComparison.Ordinal);
        Assert.IsType<DiskFullException>(env.Failure);
        // Every later write is refused with the same clear error, not a generic failure.
        Assert.Throws<DiskFullException>(() => env.BeginWrite());
        // Reads keep working, without the failed transaction.
        Assert.Equal("v49", Get(env, "k49"));
        Assert.Null(Get(env, "lost"));
        env.Dispose();

        _io.DiskFull = false;
        using var reopened = StorageEnvironment.Open(FaultyOptions());
        Assert.Null(reopened.Failure);
        for (var i = 0; i < 50; i++)
        {
            Assert.Equal($"v{i}", Get(reopened, $"k{i}"));
        }

        Assert.Null(Get(reopened, "lost"));
        Put(reopened, "after", "space was freed");
        Assert.Equal("space was freed", Get(reopened, "after"));
    }

    [Fact]
    public void ANewJournalFileThatCannotBePreallocatedIsRemovedAgain()
    {
        var env = StorageEnvironment.Open(FaultyOptions());
        Put(env, "a", "1");
        env.Dispose();
        var journalsBefore = Directory.GetFiles(Folder, "journal.*").Length;

        _io.DiskFull = true;
        _io.Affects = path => Path.GetFileName(path).StartsWith("journal.", StringComparison.Ordinal);
        env = StorageEnvironment.Open(FaultyOptions());
        using (var tx = env.BeginWrite())
        {
            tx.CreateTree("t").Put(Bytes("b"), Bytes("2"));
            Assert.Throws<DiskFullException>(() => tx.Commit());
        }

        env.Dispose();
        Assert.True(Directory.GetFiles(Folder, "journal.*").Length <= journalsBefore);
    }

    [Fact]
    public async Task EveryCommitReportedDurableSurvivesAndEveryCommitReportedFailedIsAbsent()
    {
        // Small journal files, so a group commit runs into the second file, which cannot be made.
        _io.Affects = path => Path.GetFileName(path) == "journal.0000000002";
        _io.DiskFull = true;
        var options = new StorageEnvironmentOptions { Path = Folder, FlushInterval = TimeSpan.FromMilliseconds(200), Io = _io, MaxJournalFileSize = 64 * 1024 };
        var env = StorageEnvironment.Open(options);
        // Random letters: LZ4 cannot shrink them much, so the records really fill the file.
        var random = new Random(5);
        var value = new string(Enumerable.Range(0, 4000).Select(_ => (char)('a' + random.Next(26))).ToArray());
        var commits = new List<(string Key, Task Durable)>();
        for (var i = 0; i < 60; i++)
        {
            WriteTransaction tx;
            try
            {
                tx = env.BeginWrite();
            }
            catch (DiskFullException)
            {
                break;
            }

            tx.CreateTree("t").Put(Bytes($"k{i:D3}"), Bytes(value + i));
            commits.Add(($"k{i:D3}", tx.CommitPipelined().Durable));
            if (env.Failure is not null)
            {
                break;
            }
        }

        var acknowledged = new List<string>();
        var failed = new List<string>();
        foreach (var (key, durable) in commits)
        {
            try
            {
                await durable;
                acknowledged.Add(key);
            }
            catch (DiskFullException)
            {
                failed.Add(key);
            }
        }

        Assert.NotEmpty(acknowledged);
        Assert.NotEmpty(failed);
        env.Dispose();

        _io.DiskFull = false;
        using var reopened = StorageEnvironment.Open(options);
        Assert.All(acknowledged, key => Assert.StartsWith(value, Get(reopened, key)));
        Assert.All(failed, key => Assert.Null(Get(reopened, key)));
    }

    [Theory]
    [InlineData("sync fails after the write")]
    [InlineData("write stops part-way")]
    public async Task ACommitReportedFailedAfterPartOfItReachedTheFileIsAbsentAfterReopen(string failure)
    {
        var random = new Random(3);
        var value = new string(Enumerable.Range(0, 3000).Select(_ => (char)('a' + random.Next(26))).ToArray());
        var env = StorageEnvironment.Open(FaultyOptions());
        Put(env, "before", "acknowledged");
        _io.Affects = path => Path.GetFileName(path).StartsWith("journal.", StringComparison.Ordinal);
        if (failure.StartsWith("sync", StringComparison.Ordinal))
        {
            _io.FailNextSync = true;
        }
        else
        {
            // Past the record's header and part of its payload: a torn record, or with the whole
            // record written when the cut falls after it.
            _io.ShortenNextWriteTo = 2000;
        }

        var tx = env.BeginWrite();
        tx.CreateTree("t").Put(Bytes("failed"), Bytes(value));
        var error = await Assert.ThrowsAnyAsync<StorageException>(() => tx.CommitPipelined().Durable);
        Assert.DoesNotContain("may or may not", error.Message, StringComparison.Ordinal);
        env.Dispose();

        using var reopened = StorageEnvironment.Open(FaultyOptions());
        Assert.Equal("acknowledged", Get(reopened, "before"));
        Assert.Null(Get(reopened, "failed"));
    }

    [Fact]
    public async Task ASyncFailureThatCannotBeUndoneSaysTheOutcomeIsUnknown()
    {
        var env = StorageEnvironment.Open(FaultyOptions());
        Put(env, "before", "acknowledged");
        _io.Affects = path => Path.GetFileName(path).StartsWith("journal.", StringComparison.Ordinal);
        _io.FailSyncs = true;
        var tx = env.BeginWrite();
        tx.CreateTree("t").Put(Bytes("unknown"), Bytes("x"));
        var error = await Assert.ThrowsAnyAsync<StorageException>(() => tx.CommitPipelined().Durable);
        Assert.Contains("may or may not be there", error.Message, StringComparison.Ordinal);
        _io.FailSyncs = false;
        env.Dispose();
    }

    [Fact]
    public void RecoveryOnAFullDiskOpensReadOnlyWithEveryAcknowledgedTransaction()
    {
        var env = StorageEnvironment.Open(FaultyOptions());
        // Whole pages, then many small updates of the same pages (journaled as diffs).
        for (var i = 0; i < 300; i++)
        {
            Put(env, $"k{i:D4}", new string((char)('a' + (i % 26)), 200));
        }

        for (var round = 0; round < 5; round++)
        {
            for (var i = 0; i < 300; i += 7)
            {
                Put(env, $"k{i:D4}", $"round {round} of {i}");
            }
        }

        env.DisposeWithoutFlush();

        _io.DiskFull = true;
        var readOnly = StorageEnvironment.Open(FaultyOptions());
        Assert.NotNull(readOnly.ReadOnlyReason);
        Assert.IsType<DiskFullException>(readOnly.Failure);
        for (var i = 0; i < 300; i++)
        {
            var expected = i % 7 == 0 ? $"round 4 of {i}" : new string((char)('a' + (i % 26)), 200);
            Assert.Equal(expected, Get(readOnly, $"k{i:D4}"));
        }

        Assert.Throws<DiskFullException>(() => readOnly.BeginWrite());
        readOnly.Dispose();
        Assert.NotEmpty(Directory.GetFiles(Folder, "journal.*"));

        // Space freed: a normal open replays the same journal into the data file.
        _io.DiskFull = false;
        using var writable = StorageEnvironment.Open(FaultyOptions());
        Assert.Null(writable.Failure);
        Assert.Equal("round 4 of 0", Get(writable, "k0000"));
        Assert.Equal(new string('b', 200), Get(writable, "k0001"));
        Put(writable, "k0001", "writable again");
        Assert.Equal("writable again", Get(writable, "k0001"));
    }

    [Fact]
    public void ARecoveryCutShortByAFullDiskLeavesAReplayableFolder()
    {
        // No background flush while writing: on a busy machine the 200 puts can outlast a short
        // flush interval, and a flushed data file leaves recovery too little to write for the disk
        // to fill (the test then saw no read-only open at all).
        var env = StorageEnvironment.Open(FaultyOptions(flushInterval: TimeSpan.FromHours(1)));
        for (var i = 0; i < 200; i++)
        {
            Put(env, $"k{i:D4}", new string('x', 500) + i);
        }

        env.DisposeWithoutFlush();

        // The data file takes a few pages, then the disk is full: recovery falls back to memory.
        var writes = 0;
        _io.Affects = path => path.EndsWith(".jdb", StringComparison.Ordinal) && ++writes > 3;
        _io.DiskFull = true;
        using (var readOnly = StorageEnvironment.Open(FaultyOptions()))
        {
            Assert.NotNull(readOnly.ReadOnlyReason);
            Assert.Equal(new string('x', 500) + 199, Get(readOnly, "k0199"));
        }

        _io.DiskFull = false;
        using var writable = StorageEnvironment.Open(FaultyOptions());
        for (var i = 0; i < 200; i++)
        {
            Assert.Equal(new string('x', 500) + i, Get(writable, $"k{i:D4}"));
        }
    }
}
