using System.Buffers;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>
/// Table entries only have to point backwards, so a corrupt or hostile document can point many
/// entries at the same container. Nested, that makes a few hundred bytes stand for 2^levels values;
/// every walk over a whole document must stop with a format error instead of visiting them all.
/// </summary>
public class SharedValueTests
{
    // 2^30 empty arrays if walked naively, in 206 bytes.
    private const int Levels = 30;

    // Generous for two shared cores: the guarded walks give up after a few hundred values.
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(30);

    /// <summary>
    /// <c>{"a": A30}</c> where A0 is an empty array and each A(k) is an array of two entries that
    /// both point at A(k-1): 6 bytes a level. Otherwise valid: header, root table, sorted index and
    /// names area are what a builder writes.
    /// </summary>
    internal static byte[] FanOut(int levels, BlittableMode mode = BlittableMode.Memory)
    {
        var bytes = new List<byte>(new byte[BlittableHeader.Size]);
        var below = bytes.Count;
        bytes.AddRange([BlittableFormat.ArrayTag, 0]);
        for (var level = 1; level <= levels; level++)
        {
            var at = bytes.Count;
            var back = (byte)(at - below);
            bytes.AddRange([BlittableFormat.ArrayTag, 2, back, (byte)BlittableType.Array, back, (byte)BlittableType.Array]);
            below = at;
        }

        // Root object, all widths 1 byte: flags, count 1, entry (name offset 0, back, type), sorted index 0.
        var root = bytes.Count;
        bytes.AddRange([BlittableFormat.ObjectTag, 1, 0, (byte)(root - below), (byte)BlittableType.Array, 0]);
        var names = bytes.Count;
        bytes.AddRange([2, (byte)'a']);
        return WithHeader(bytes, root, names, mode);
    }

    /// <summary>
    /// <c>{"p0000": A, "p0001": A, ...}</c>: <paramref name="properties"/> entries of the root all
    /// point at the same array A of <paramref name="nulls"/> nulls. Names are distinct and sorted, so
    /// a same-mode Modify takes the block-copy path.
    /// </summary>
    internal static byte[] SharedArray(int properties, int nulls)
    {
        var bytes = new List<byte>(new byte[BlittableHeader.Size]);
        var array = bytes.Count;
        bytes.Add(BlittableFormat.ArrayTag);
        AddVarInt(bytes, nulls);
        for (var i = 0; i < nulls; i++)
        {
            bytes.AddRange([0, (byte)BlittableType.Null]);
        }

        // Root object: 4-byte back distances, 2-byte name offsets, 2-byte sorted indexes.
        var root = bytes.Count;
        bytes.Add((byte)(BlittableFormat.ObjectTag | (1 << 4) | (1 << 2) | 2));
        AddVarInt(bytes, properties);
        const int NameSize = 6;   // varint header and five ASCII bytes
        for (var i = 0; i < properties; i++)
        {
            AddLittleEndian(bytes, i * NameSize, 2);
            AddLittleEndian(bytes, root - array, 4);
            bytes.Add((byte)BlittableType.Array);
        }

        for (var i = 0; i < properties; i++)
        {
            AddLittleEndian(bytes, i, 2);
        }

        var names = bytes.Count;
        for (var i = 0; i < properties; i++)
        {
            bytes.Add(5 << 1);
            bytes.AddRange(TestSupport.Utf8($"p{i:D4}"));
        }

        return WithHeader(bytes, root, names, BlittableMode.Memory);
    }

    /// <summary>
    /// <c>{"a": [S, S, ...]}</c>: <paramref name="entries"/> entries of one array all point at the
    /// same raw string S of <paramref name="length"/> bytes; 4-byte back distances.
    /// </summary>
    internal static byte[] SharedString(int entries, int length)
    {
        var bytes = new List<byte>(new byte[BlittableHeader.Size]);
        var text = bytes.Count;
        AddVarInt(bytes, length << 1);
        bytes.AddRange(Enumerable.Repeat((byte)'s', length));
        var array = bytes.Count;
        bytes.Add(BlittableFormat.ArrayTag | 2);
        AddVarInt(bytes, entries);
        for (var i = 0; i < entries; i++)
        {
            AddLittleEndian(bytes, array - text, 4);
            bytes.Add((byte)BlittableType.String);
        }

        // Root object: 1-byte name offset and sorted index, 4-byte back distance.
        var root = bytes.Count;
        bytes.AddRange([BlittableFormat.ObjectTag | 2, 1, 0]);
        AddLittleEndian(bytes, root - array, 4);
        bytes.AddRange([(byte)BlittableType.Array, 0]);
        var names = bytes.Count;
        bytes.AddRange([2, (byte)'a']);
        return WithHeader(bytes, root, names, BlittableMode.Memory);
    }

    [Fact]
    public void AFewLevelsOfFanOutReadAsTheTreeTheyStandFor()
    {
        // The hand-built layout is what the tests below think it is.
        Assert.Equal("{\"a\":[[[],[]],[[],[]]]}", TestSupport.ToJson(FanOut(2)));
        Assert.Equal("{\"p0000\":[null,null],\"p0001\":[null,null]}", TestSupport.ToJson(SharedArray(2, 2)));
        Assert.Equal("{\"a\":[\"sssss\",\"sssss\",\"sssss\"]}", TestSupport.ToJson(SharedString(3, 5)));
    }

    [Fact]
    public void WriterStopsAtOneLongStringSharedByManyEntries()
    {
        // 20,000 entries of one 1,000-byte string: 100 KB that would write 20 MB, and 4 GB from a
        // document ten times the size. The writer charges long strings' bytes to the same budget.
        var document = SharedString(entries: 20_000, length: 1_000);
        var sink = new CappedSink();
        AssertFormatErrorWithin(() => BlittableJsonWriter.WriteTo(document, sink));
        Assert.True(sink.Written < 2 * document.Length, $"{sink.Written} bytes written before the error from {document.Length}");

        // The comparer and a value-by-value Modify charge long strings the same way.
        AssertFormatErrorWithin(() => BlittableComparer.Equals(BlittableReader.Open(document), BlittableReader.Open(SharedString(20_000, 1_000))));
        using (var copier = new JsonOperationContext())
        {
            AssertFormatErrorWithin(() => copier.Modify(document, new BlittablePatch().Set("x", 1), BlittableMode.Memory, allowBlockCopies: false));
        }

        // A well-formed document made of one long string is within its own budget.
        using var context = new JsonOperationContext();
        var text = new string('x', 1 << 20);
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var single = context.Parse(TestSupport.Utf8("{\"s\":\"" + text + "\",\"n\":" + new string('1', 40) + ".5}"), mode);
            Assert.Equal("{\"s\":\"" + text + "\",\"n\":" + new string('1', 40) + ".5}", TestSupport.ToJson(single.Span));
            Assert.True(BlittableComparer.Equals(BlittableReader.Open(single.Span), BlittableReader.Open(single.ToArray())));
            var copy = context.Modify(single.Span, new BlittablePatch().Set("x", 1), mode, allowBlockCopies: false);
            Assert.Equal("{\"s\":\"" + text + "\",\"n\":" + new string('1', 40) + ".5,\"x\":1}", TestSupport.ToJson(copy.Span));
        }
    }

    [Fact]
    public void WriterStopsAtAFanOut()
    {
        var document = FanOut(Levels);
        var sink = new CappedSink();
        AssertFormatErrorWithin(() => BlittableJsonWriter.WriteTo(document, sink));
        Assert.True(sink.Written < 4096, $"{sink.Written} bytes written before the error");

        AssertFormatErrorWithin(() =>
        {
            Assert.True(BlittableReader.Open(document).TryGet("a"u8, out var value));
            BlittableJsonWriter.WriteValue(value, new CappedSink());
        });
    }

    [Fact]
    public void ComparerStopsAtAFanOut()
    {
        var document = FanOut(Levels);
        var disk = FanOut(Levels, BlittableMode.Disk);   // other bytes, so the walk is not skipped
        AssertFormatErrorWithin(() => BlittableComparer.Equals(document, disk));
        AssertFormatErrorWithin(() => BlittableComparer.Equals(BlittableReader.Open(disk), BlittableReader.Open(document)));
    }

    [Theory]
    [InlineData(BlittableMode.Memory)]
    [InlineData(BlittableMode.Disk)]
    public void ModifyStopsAtAFanOutCopiedValueByValue(BlittableMode mode)
    {
        var document = FanOut(Levels);
        using var context = new JsonOperationContext();
        AssertFormatErrorWithin(() => context.Modify(document, new BlittablePatch().Set("x", 1), mode, allowBlockCopies: false));
    }

    [Fact]
    public void ModifyAcrossModesStopsAtAFanOut()
    {
        // A Memory-mode source made into a Disk-mode document is re-encoded value by value.
        var document = FanOut(Levels);
        using var context = new JsonOperationContext();
        AssertFormatErrorWithin(() => context.Modify(document, new BlittablePatch().Set("x", 1), BlittableMode.Disk));
    }

    [Theory]
    [InlineData(BlittableMode.Memory)]
    [InlineData(BlittableMode.Disk)]
    public void PatchWithAFanOutDocumentStopsWhenApplied(BlittableMode mode)
    {
        var inner = FanOut(Levels);
        using var context = new JsonOperationContext();
        var target = context.Parse("{\"Name\":\"Ada\"}"u8, mode).ToArray();
        var patch = new BlittablePatch().SetDocument("inner", inner);
        AssertFormatErrorWithin(() => context.Modify(target, patch, mode));
    }

    [Fact]
    public void ModifyBlockCopiesAFanOutVerbatimWithoutExpandingIt()
    {
        // A block copy takes the fan-out's bytes as they are: the result is as small as the source
        // (and as corrupt, which the next walk reports).
        var document = FanOut(Levels);
        using var context = new JsonOperationContext();
        Assert.True(context.StartParse(BlittableMode.Memory).TrySeedNames(document));
        var modified = context.Modify(document, new BlittablePatch().Set("x", 1), BlittableMode.Memory).ToArray();
        Assert.True(modified.Length < document.Length + 16, $"{modified.Length} bytes from {document.Length}");
        AssertFormatErrorWithin(() => BlittableJsonWriter.WriteTo(modified, new CappedSink()));
    }

    [Fact]
    public void ModifyStopsBlockCopyingOneArrayForManyProperties()
    {
        // Each property's block copy would scan and copy the whole shared array: 500 copies of
        // 10 KB from a document of 17.5 KB, growing with the square of the document's size.
        var document = SharedArray(properties: 500, nulls: 5000);
        using var context = new JsonOperationContext();
        Assert.True(context.StartParse(BlittableMode.Memory).TrySeedNames(document));
        AssertFormatErrorWithin(() => context.Modify(document, new BlittablePatch().Set("x", 1), BlittableMode.Memory));
    }

    private static void AssertFormatErrorWithin(Action action)
    {
        // On a thread of its own, so an unbounded walk fails the test instead of hanging the run.
        Exception? error = null;
        var thread = new Thread(() =>
        {
            try
            {
                action();
            }
            catch (Exception e)
            {
                error = e;
            }
        })
        { IsBackground = true };
        thread.Start();
        Assert.True(thread.Join(Limit), $"Still walking after {Limit.TotalSeconds} s.");
        var format = Assert.IsType<BlittableFormatException>(error);
        Assert.Contains("more values than", format.Message, StringComparison.Ordinal);
    }

    private static byte[] WithHeader(List<byte> bytes, int root, int names, BlittableMode mode)
    {
        var document = bytes.ToArray();
        var flags = mode == BlittableMode.Disk ? BlittableHeader.DiskModeFlag : (byte)0;
        BlittableHeader.Write(document, flags, document.Length, root, names);
        return document;
    }

    private static void AddVarInt(List<byte> bytes, int value)
    {
        var buffer = new byte[5];
        bytes.AddRange(buffer.AsSpan(0, BlittableFormat.WriteVarInt(buffer, 0, (uint)value)).ToArray());
    }

    private static void AddLittleEndian(List<byte> bytes, int value, int width)
    {
        for (var i = 0; i < width; i++)
        {
            bytes.Add((byte)(value >> (8 * i)));
        }
    }

    /// <summary>Counts what is written into one reused buffer and refuses more than 64 MB, so a runaway writer cannot fill memory.</summary>
    private sealed class CappedSink : IBufferWriter<byte>
    {
        private const long Cap = 64L << 20;
        private byte[] _buffer = new byte[1 << 16];

        public long Written { get; private set; }

        public void Advance(int count) => Written += count;

        public Memory<byte> GetMemory(int sizeHint = 0) => Buffer(sizeHint);

        public Span<byte> GetSpan(int sizeHint = 0) => Buffer(sizeHint);

        private byte[] Buffer(int sizeHint)
        {
            if (Written > Cap)
            {
                throw new InvalidOperationException($"More than {Cap} bytes written.");
            }

            if (_buffer.Length < sizeHint)
            {
                _buffer = new byte[sizeHint];
            }

            return _buffer;
        }
    }
}
