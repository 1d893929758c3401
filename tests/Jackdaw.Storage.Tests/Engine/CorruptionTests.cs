using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Journal;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Tests.Engine;

public sealed class CorruptionTests : EngineTestBase
{
    private StorageEnvironmentOptions NoFlushOptions() => new()
    {
        Path = Folder,
        FlushInterval = TimeSpan.FromHours(1),
        FlushThresholdPages = int.MaxValue,
        MaxJournalFileSize = 256 * 1024,
    };

    /// <summary>Commits keys 0..count-1, one per transaction, then stops without flushing (as if killed).</summary>
    private void CommitThenCrash(int count, int firstKey = 0, bool flushFirst = false)
    {
        var env = StorageEnvironment.Open(NoFlushOptions());
        for (var i = firstKey; i < firstKey + count; i++)
        {
            using var tx = env.BeginWrite();
            tx.CreateTree("t").Put(BitConverter.GetBytes(i), BasicTests.Pattern(100 + (i * 50)));
            tx.Commit();
        }

        if (flushFirst)
        {
            env.Flush();
        }

        env.DisposeWithoutFlush();
    }

    private (string Path, List<(long Offset, int Length)> Records) ReadJournal()
    {
        var files = JournalWriter.ListFiles(Folder);
        Assert.Single(files);
        var records = JournalFileReader.Records(File.ReadAllBytes(files[0].Path))
            .Select(r => ((long)r.Offset, JournalRecordHeader.Size + r.Header.PayloadSize)).ToList();
        return (files[0].Path, records);
    }

    private void AssertKeys(int present, int absentFrom)
    {
        using var env = StorageEnvironment.Open(NoFlushOptions());
        using var r = env.BeginRead();
        var t = r.OpenTree("t");
        Assert.NotNull(t);
        t.Validate();
        for (var i = 0; i < present; i++)
        {
            Assert.True(t.TryGet(BitConverter.GetBytes(i), out var v), $"key {i} missing");
            Assert.True(v.SequenceEqual(BasicTests.Pattern(100 + (i * 50))));
        }

        Assert.False(t.TryGet(BitConverter.GetBytes(absentFrom), out _), $"key {absentFrom} should have been discarded");
        Assert.Equal(present, t.Count);
    }

    [Fact]
    public void RecoveryReplaysJournalAfterCrash()
    {
        CommitThenCrash(10);
        Assert.Equal(10, ReadJournal().Records.Count);
        AssertKeys(10, 10);
    }

    [Fact]
    public void CorruptByteAnywhereInLastRecordDiscardsOnlyThatTransaction()
    {
        CommitThenCrash(10);
        var (path, records) = ReadJournal();
        var (offset, length) = records[^1];
        var pristine = File.ReadAllBytes(path);
        var positions = Enumerable.Range(0, JournalRecordHeader.Size).Concat(Enumerable.Range(JournalRecordHeader.Size, length - JournalRecordHeader.Size).Where(p => p % 37 == 0)).Append(length - 1);
        var snapshot = Directory.GetFiles(Folder).ToDictionary(f => f, File.ReadAllBytes);
        foreach (var p in positions)
        {
            foreach (var (file, content) in snapshot)
            {
                File.WriteAllBytes(file, content);
            }

            var corrupt = (byte[])pristine.Clone();
            corrupt[offset + p] ^= 0x5A;
            File.WriteAllBytes(path, corrupt);
            AssertKeys(9, 9);
        }
    }

    [Fact]
    public void TruncatedJournalTailIsDiscardedOnRecovery()
    {
        CommitThenCrash(10);
        var (path, records) = ReadJournal();
        var (offset, length) = records[^1];
        var snapshot = Directory.GetFiles(Folder).ToDictionary(f => f, File.ReadAllBytes);
        foreach (var cut in new[] { 0, 1, 20, JournalRecordHeader.Size - 1, JournalRecordHeader.Size, JournalRecordHeader.Size + 1, length / 2, length - 1 })
        {
            foreach (var (file, content) in snapshot)
            {
                File.WriteAllBytes(file, content);
            }

            using (var f = new FileStream(path, FileMode.Open))
            {
                f.SetLength(offset + cut);
            }

            AssertKeys(9, 9);
        }
    }

    [Fact]
    public void GarbageAfterTheLastRecordIsIgnored()
    {
        CommitThenCrash(10);
        var (path, records) = ReadJournal();
        var end = records[^1].Offset + records[^1].Length;
        var bytes = File.ReadAllBytes(path);
        new Random(1).NextBytes(bytes.AsSpan((int)end, 5000));
        File.WriteAllBytes(path, bytes);
        AssertKeys(10, 10);
    }

    [Fact]
    public void CorruptionInTheMiddleKeepsEverythingBeforeIt()
    {
        CommitThenCrash(10);
        var (path, records) = ReadJournal();
        var bytes = File.ReadAllBytes(path);
        bytes[records[5].Offset + JournalRecordHeader.Size + 3] ^= 1;
        File.WriteAllBytes(path, bytes);
        AssertKeys(5, 5);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public void CorruptHeaderPageFallsBackToTheOther(int slot)
    {
        CommitThenCrash(5, flushFirst: true);
        CommitThenCrash(5, firstKey: 5);
        using (var f = new FileStream(Path.Combine(Folder, DataFile.FileName), FileMode.Open))
        {
            f.Position = (slot * Constants.PageSize) + 17;
            f.WriteByte(0xEE);
        }

        AssertKeys(10, 10);
    }

    [Fact]
    public void BothHeadersCorruptIsAClearErrorNamingTheFile()
    {
        CommitThenCrash(3, flushFirst: true);
        var path = Path.Combine(Folder, DataFile.FileName);
        using (var f = new FileStream(path, FileMode.Open))
        {
            f.Position = 3;
            f.WriteByte(0xEE);
            f.Position = Constants.PageSize + 3;
            f.WriteByte(0xEE);
        }

        var e = Assert.Throws<StorageCorruptedException>(() => StorageEnvironment.Open(NoFlushOptions()));
        Assert.Equal(path, e.FileName);
        Assert.Contains(path, e.Message);
        Assert.True(new FileInfo(path).Length > 0, "the data file must not be emptied");
    }
}
