using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Tests.Infrastructure;
using Lucene.Net.Store;

namespace Jackdaw.Server.Tests.Indexing;

// Alone: HeldBytes is the process's; an index opened or closed by a parallel test moves it.
/// <summary>
/// Small files opened for searching are read from memory (<see cref="ArrayIndexInput"/>); what
/// they read is checked against the same file read with pread (a read-once context).
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class PreadDirectoryTests : IDisposable
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jackdaw-pread-" + Guid.NewGuid().ToString("N"));
    private readonly PreadDirectory _directory;

    public PreadDirectoryTests()
    {
        System.IO.Directory.CreateDirectory(_folder);
        _directory = new PreadDirectory(new DirectoryInfo(_folder));
        using var output = _directory.CreateOutput("f", IOContext.DEFAULT);
        output.WriteByte(7);
        output.WriteInt16(-2);
        output.WriteInt32(int.MinValue + 5);
        output.WriteInt64(long.MaxValue - 9);
        foreach (var value in new[] { 0, 1, 127, 128, 16_383, 16_384, int.MaxValue, -1 })
        {
            output.WriteVInt32(value);
        }

        foreach (var value in new[] { 0L, 127L, 128L, 1L << 35, long.MaxValue })
        {
            output.WriteVInt64(value);
        }

        output.WriteString("héllo");
        output.WriteBytes([1, 2, 3, 4, 5], 5);
    }

    public void Dispose()
    {
        _directory.Dispose();
        System.IO.Directory.Delete(_folder, recursive: true);
    }

    [Fact]
    public void AFileForSearchingIsReadFromMemoryAsPreadReadsIt()
    {
        using var held = _directory.OpenInput("f", IOContext.READ);
        using var pread = _directory.OpenInput("f", IOContext.READ_ONCE);

        Assert.StartsWith("ArrayIndexInput", held.ToString());
        Assert.StartsWith("PreadIndexInput", pread.ToString());
        Assert.Equal(pread.Length, held.Length);
        Assert.Equal(ReadAll(pread), ReadAll(held));

        held.Seek(1);
        var clone = (IndexInput)held.Clone();
        Assert.Equal(-2, clone.ReadInt16());
        Assert.Equal(1, held.Position);
        clone.SkipBytes(12);
        Assert.Equal(15, clone.Position);
        clone.Seek(clone.Length);
        Assert.Throws<EndOfStreamException>(() => clone.ReadByte());
        Assert.Throws<EndOfStreamException>(() => clone.Seek(clone.Length + 1));
        clone.Seek(clone.Length - 2);
        Assert.Throws<EndOfStreamException>(() => clone.ReadInt32());
    }

    [Fact]
    public void ACompoundFilesSlicesAreReadFromMemoryAndTheBudgetIsGivenBack()
    {
        var before = PreadDirectory.HeldBytes;
        var slicer = _directory.CreateSlicer("f", IOContext.READ);
        Assert.True(PreadDirectory.HeldBytes >= before + 1, "the file is held while its slicer is open");
        using (var slice = slicer.OpenSlice("part", 1, 14))
        using (var reference = _directory.OpenInput("f", IOContext.READ_ONCE))
        {
            Assert.StartsWith("ArrayIndexInput", slice.ToString());
            Assert.Equal(14, slice.Length);
            Assert.Equal(-2, slice.ReadInt16());
            reference.Seek(3);
            Assert.Equal(reference.ReadInt32(), slice.ReadInt32());
            Assert.Equal(reference.ReadInt64(), slice.ReadInt64());
            Assert.Throws<EndOfStreamException>(() => slice.ReadByte());
        }

        Assert.Throws<ArgumentException>(() => slicer.OpenSlice("past the end", 1, 1_000));
        slicer.Dispose();
        Assert.True(PreadDirectory.HeldBytes <= before, "the slicer gave its bytes back");
    }

    private static List<object> ReadAll(IndexInput input)
    {
        input.Seek(0);
        var values = new List<object> { input.ReadByte(), input.ReadInt16(), input.ReadInt32(), input.ReadInt64() };
        for (var i = 0; i < 8; i++)
        {
            values.Add(input.ReadVInt32());
        }

        for (var i = 0; i < 5; i++)
        {
            values.Add(input.ReadVInt64());
        }

        values.Add(input.ReadString());
        var bytes = new byte[5];
        input.ReadBytes(bytes, 0, 5);
        values.Add(Convert.ToHexString(bytes));
        values.Add(input.Position);
        return values;
    }
}
