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
