using System.Runtime.InteropServices;
using System.Text;
using Jackdaw.Storage.Engine.Paging;
using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;

namespace Jackdaw.Storage.Tests.Engine;

public sealed class JournalTests : EngineTestBase
{
    [Fact]
    public void JournalRotatesAndFlushedFilesAreDeleted()
    {
        var options = new StorageEnvironmentOptions
        {
            Path = Folder,
            MaxJournalFileSize = 128 * 1024,
            FlushInterval = TimeSpan.FromHours(1),
        };
        var env = Open(options);
        var value = new byte[3000];
        new Random(4).NextBytes(value);
        for (var i = 0; i < 200; i++)
        {
            using var tx = env.BeginWrite();
            tx.CreateTree("t").Put(BitConverter.GetBytes(i), value);
            tx.Commit();
        }

        var rotated = JournalWriter.ListFiles(Folder).Count;
        Assert.True(rotated > 3, $"{rotated} journal files");
        Assert.True(new FileInfo(JournalWriter.ListFiles(Folder)[0].Path).Length >= 128 * 1024, "journal files are preallocated");

        // Two flushes: a file goes once both header slots are past it.
        env.Flush();
        using (var tx = env.BeginWrite())
        {
            tx.CreateTree("t").Put([1], [1]);
            tx.Commit();
        }

        env.Flush();
        Assert.True(JournalWriter.ListFiles(Folder).Count <= 2, $"{JournalWriter.ListFiles(Folder).Count} journal files left after flushing");

        env = Reopen(env);
        using var r = env.BeginRead();
        Assert.Equal(201, r.OpenTree("t")!.Count);
    }

    [Fact]
    public void RecordsOfCompressiblePagesAreCompressed()
    {
        var env = Open(new StorageEnvironmentOptions { Path = Folder, FlushInterval = TimeSpan.FromHours(1) });
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("t");
            for (var i = 0; i < 2000; i++)
            {
                t.Put(BitConverter.GetBytes(i), new byte[500]);
            }

            tx.Commit();
        }

        var stats = env.GetStats();
        var journal = File.ReadAllBytes(JournalWriter.ListFiles(Folder)[0].Path);
        var header = System.Runtime.InteropServices.MemoryMarshal.Read<JournalRecordHeader>(journal);
        Assert.Equal(JournalRecordHeader.Lz4Flag, header.Flags & JournalRecordHeader.Lz4Flag);
        Assert.True(header.PayloadSize * 4 < header.UncompressedSize, $"{header.PayloadSize} of {header.UncompressedSize} bytes");
        Assert.True(stats.UsedPages > 100);
    }
}

public sealed class JournalDiffTests : EngineTestBase
{
    private StorageEnvironmentOptions NoFlushOptions() => new()
    {
        Path = Folder,
        FlushInterval = TimeSpan.FromHours(1),
        FlushThresholdPages = int.MaxValue,
    };

    private static byte[] Key(int i) => BitConverter.GetBytes(i);

    private static byte[] Value(int i, int version) => Encoding.UTF8.GetBytes($"value {i} version {version} " + new string((char)('a' + (i % 26)), 40 + (i % 200)));

    private List<JournalRecordHeader> Headers() =>
        JournalWriter.ListFiles(Folder).SelectMany(f => JournalFileReader.Records(File.ReadAllBytes(f.Path)).Select(r => r.Header)).ToList();

    [Fact]
    public void ChangingOneValueJournalsTheChangedBytesNotTheWholePages()
    {
        var env = Open(NoFlushOptions());
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("t");
            for (var i = 0; i < 3000; i++)
            {
                t.Put(Key(i), Value(i, 0));
            }

            tx.Commit();
        }

        using (var tx = env.BeginWrite())
        {
            tx.OpenTree("t")!.Put(Key(1234), Value(1234, 1));
            tx.Commit();
        }

        var last = Headers()[^1];
        Assert.Equal(JournalRecordHeader.DiffFlag, last.Flags & JournalRecordHeader.DiffFlag);

        // A leaf, the tree's header in the root tree and the state page change: three 8 KiB pages whole,
        // a few hundred bytes as diffs.
        Assert.True(last.PageCount >= 2, $"{last.PageCount} pages");
        Assert.True(last.UncompressedSize < 1024, $"{last.UncompressedSize} bytes for {last.PageCount} pages");

        env.DisposeWithoutFlush();
        using var reopened = StorageEnvironment.Open(NoFlushOptions());
        Assert.True(reopened.RecoveredTransactions >= 2);
        using var r = reopened.BeginRead();
        var tree = r.OpenTree("t")!;
        tree.Validate();
        for (var i = 0; i < 3000; i++)
        {
            Assert.True(tree.TryGet(Key(i), out var v));
            Assert.True(v.SequenceEqual(Value(i, i == 1234 ? 1 : 0)), $"key {i}");
        }
    }

    /// <summary>
    /// Diffs replayed over a data file that a flush cut short left ahead of its header (newer versions
    /// of some pages than the header says), with updates, deletes, splits, merges and freed pages reused.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void DiffsReplayOverADataFileAheadOfItsHeader(int seed)
    {
        var random = new Random(seed);
        var model = new SortedDictionary<int, byte[]>();
        var env = StorageEnvironment.Open(NoFlushOptions());
        var version = 0;
        void Batch(int operations)
        {
            using var tx = env.BeginWrite();
            var t = tx.CreateTree("t");
            for (var k = 0; k < operations; k++)
            {
                var i = random.Next(4000);
                if (random.Next(4) == 0)
                {
                    t.Delete(Key(i));
                    model.Remove(i);
                }
                else
                {
                    var v = random.Next(10) == 0 ? new byte[random.Next(9000, 30000)] : Value(i, ++version);
                    random.NextBytes(v.AsSpan(0, Math.Min(v.Length, 16)));
                    t.Put(Key(i), v);
                    model[i] = v;
                }
            }

            tx.Commit();
        }

        for (var b = 0; b < 40; b++)
        {
            Batch(random.Next(1, 300));
        }

        env.Flush();
        for (var b = 0; b < 40; b++)
        {
            Batch(random.Next(1, 300));
        }

        env.FlushPagesWithoutHeader();
        for (var b = 0; b < 40; b++)
        {
            Batch(random.Next(1, 300));
        }

        var diffs = Headers().Count(h => (h.Flags & JournalRecordHeader.DiffFlag) != 0);
        Assert.True(diffs >= 80, $"{diffs} diff records");
        env.DisposeWithoutFlush();

        using var reopened = StorageEnvironment.Open(NoFlushOptions());
        Assert.True(reopened.RecoveredTransactions >= 80, $"{reopened.RecoveredTransactions} replayed");
        using var r = reopened.BeginRead();
        var tree = r.OpenTree("t")!;
        tree.Validate();
        Assert.Equal(model.Count, tree.Count);
        foreach (var (i, v) in model)
        {
            Assert.True(tree.TryGet(Key(i), out var stored), $"key {i} missing");
            Assert.True(stored.SequenceEqual(v), $"key {i} differs");
        }
    }

    /// <summary>A journal written by an earlier build (whole pages, no diff layout) is still replayed.</summary>
    [Fact]
    public void RecordsInTheEarlierWholePageLayoutAreReplayed()
    {
        var env = StorageEnvironment.Open(NoFlushOptions());
        using (var tx = env.BeginWrite())
        {
            var t = tx.CreateTree("t");
            for (var i = 0; i < 500; i++)
            {
                t.Put(Key(i), Value(i, 0));
            }

            tx.Commit();
        }

        env.DisposeWithoutFlush();

        // Rewrite the record as the earlier layout has it: every entry whole (a diff applied to the page as
        // the data file has it, since nothing was flushed after the environment was created), no Stored
        // field, no flags; then checksum again.
        var dataFile = File.ReadAllBytes(Path.Combine(Folder, Jackdaw.Storage.Engine.Paging.DataFile.FileName));
        var path = Assert.Single(JournalWriter.ListFiles(Folder)).Path;
        var file = File.ReadAllBytes(path);
        var (h, _) = Assert.Single(JournalFileReader.Records(file));
        Assert.Equal(JournalRecordHeader.DiffFlag, h.Flags & JournalRecordHeader.DiffFlag);
        var payload = JournalFileReader.Payload(file, 0, h);

        var old = new List<byte>();
        for (var pos = 0; pos < payload.Length;)
        {
            var number = BitConverter.ToInt64(payload, pos);
            var length = BitConverter.ToInt32(payload, pos + 8);
            var storedLength = BitConverter.ToInt32(payload, pos + 12);
            var page = payload.AsSpan(pos + 16, storedLength).ToArray();
            if (storedLength != length)
            {
                var whole = dataFile.AsSpan((int)number * 8192, length).ToArray();
                Assert.True(PageDiff.ForEachRun(page, length, whole, static (w, offset, bytes) => bytes.CopyTo(w.AsSpan(offset))));
                page = whole;
            }

            old.AddRange(payload.AsSpan(pos, 12).ToArray());
            old.AddRange(page);
            pos += 16 + storedLength;
        }

        h.Flags = 0;
        JournalFileReader.Rewrite(path, file, 0, h, old.ToArray());

        using var reopened = StorageEnvironment.Open(NoFlushOptions());
        Assert.Equal(1, reopened.RecoveredTransactions);
        using var r = reopened.BeginRead();
        var tree = r.OpenTree("t")!;
        tree.Validate();
        Assert.Equal(500, tree.Count);
        for (var i = 0; i < 500; i++)
        {
            Assert.True(tree.TryGet(Key(i), out var v));
            Assert.True(v.SequenceEqual(Value(i, 0)));
        }
    }
}

public sealed class JournalFormatTests : EngineTestBase
{
    private StorageEnvironmentOptions NoFlushOptions() => new()
    {
        Path = Folder,
        FlushInterval = TimeSpan.FromHours(1),
        FlushThresholdPages = int.MaxValue,
    };

    private string DataPath => Path.Combine(Folder, DataFile.FileName);

    private (int VersionA, int VersionB) HeaderVersions()
    {
        var bytes = File.ReadAllBytes(DataPath);
        return (BitConverter.ToInt32(bytes, 8), BitConverter.ToInt32(bytes, Constants.PageSize + 8));
    }

    private void SetHeaderVersion(int slot, int version)
    {
        using var f = new FileStream(DataPath, FileMode.Open);
        var header = new byte[FileHeader.Size];
        f.Position = slot * Constants.PageSize;
        f.ReadExactly(header);
        BitConverter.GetBytes(version).CopyTo(header, 8);
        BitConverter.GetBytes(System.IO.Hashing.XxHash64.HashToUInt64(header.AsSpan(0, 24))).CopyTo(header, 24);
        f.Position = slot * Constants.PageSize;
        f.Write(header);
    }

    private void CommitThenCrash(int from, int count)
    {
        var env = StorageEnvironment.Open(NoFlushOptions());
        for (var i = from; i < from + count; i++)
        {
            using var tx = env.BeginWrite();
            tx.CreateTree("t").Put(BitConverter.GetBytes(i), BasicTests.Pattern(200 + i));
            tx.Commit();
        }

        env.DisposeWithoutFlush();
    }

    private void AssertKeys(int count)
    {
        using var env = StorageEnvironment.Open(NoFlushOptions());
        using var r = env.BeginRead();
        var t = r.OpenTree("t")!;
        t.Validate();
        Assert.Equal(count, t.Count);
        for (var i = 0; i < count; i++)
        {
            Assert.True(t.TryGet(BitConverter.GetBytes(i), out var v) && v.SequenceEqual(BasicTests.Pattern(200 + i)), $"key {i}");
        }
    }

    /// <summary>
    /// Headers of format version 1 (written by builds that replay journal records as whole pages) are
    /// raised to the current version when the folder is opened, before this build writes a record that
    /// such a build would misread; a version this build does not know is refused.
    /// </summary>
    [Fact]
    public void OlderHeadersAreUpgradedOnOpenAndNewerOnesRefused()
    {
        CommitThenCrash(0, 5);
        using (var env = StorageEnvironment.Open(NoFlushOptions()))
        {
            env.Flush();
        }

        Assert.Equal((FileHeader.CurrentFormatVersion, FileHeader.CurrentFormatVersion), HeaderVersions());
        SetHeaderVersion(0, 1);
        SetHeaderVersion(1, 1);
        using (var env = StorageEnvironment.Open(NoFlushOptions()))
        {
            Assert.Equal((FileHeader.CurrentFormatVersion, FileHeader.CurrentFormatVersion), HeaderVersions());
        }

        AssertKeys(5);
        SetHeaderVersion(0, FileHeader.CurrentFormatVersion + 1);
        var e = Assert.Throws<StorageCorruptedException>(() => StorageEnvironment.Open(NoFlushOptions()));
        Assert.Contains($"format version {FileHeader.CurrentFormatVersion + 1}", e.Message);
    }

    private (string Path, byte[] File, JournalRecordHeader Header, int Offset) LastRecord()
    {
        var path = Assert.Single(JournalWriter.ListFiles(Folder)).Path;
        var file = File.ReadAllBytes(path);
        var (header, offset) = JournalFileReader.Records(file)[^1];
        return (path, file, header, offset);
    }

    [Fact]
    public void AValidRecordWithFlagsThisBuildDoesNotKnowIsRefusedNotDropped()
    {
        CommitThenCrash(0, 3);
        var (path, file, h, offset) = LastRecord();
        var payload = JournalFileReader.Payload(file, offset, h);
        h.Flags |= 0x100;
        JournalFileReader.Rewrite(path, file, offset, h, payload);
        var e = Assert.Throws<StorageCorruptedException>(() => StorageEnvironment.Open(NoFlushOptions()));
        Assert.Contains("newer build", e.Message);
    }

    /// <summary>A record whose checksum holds but whose diff runs do not fit their page changes nothing in the data file.</summary>
    [Fact]
    public void AMalformedDiffRecordIsRefusedBeforeAnyOfItIsWritten()
    {
        CommitThenCrash(0, 40);
        using (var env = StorageEnvironment.Open(NoFlushOptions()))
        {
            env.Flush();
        }

        CommitThenCrash(40, 1);
        var (path, file, h, offset) = LastRecord();
        Assert.Equal(JournalRecordHeader.DiffFlag, h.Flags & JournalRecordHeader.DiffFlag);
        var payload = JournalFileReader.Payload(file, offset, h);

        // The last entry's first run gets an offset past its page; the entries before it stay valid.
        var pos = 0;
        var lastDiff = -1;
        while (pos < payload.Length)
        {
            var length = BitConverter.ToInt32(payload, pos + 8);
            var stored = BitConverter.ToInt32(payload, pos + 12);
            if (stored > 0 && stored < length)
            {
                lastDiff = pos;
            }

            pos += 16 + stored;
        }

        Assert.True(lastDiff >= 0, "no diff entry in the record");
        Assert.True(lastDiff > 0, "the diff entry should not be the first");
        BitConverter.GetBytes(Constants.PageSize * 4).CopyTo(payload, lastDiff + 16);
        JournalFileReader.Rewrite(path, file, offset, h, payload);
        var before = File.ReadAllBytes(DataPath);
        var e = Assert.Throws<StorageCorruptedException>(() => StorageEnvironment.Open(NoFlushOptions()));
        Assert.Contains("malformed", e.Message);
        Assert.True(before.AsSpan().SequenceEqual(File.ReadAllBytes(DataPath)), "the data file changed");
    }
}
