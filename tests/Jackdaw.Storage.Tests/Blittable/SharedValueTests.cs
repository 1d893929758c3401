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

    [Fact]
    public void AFewLevelsOfFanOutReadAsTheTreeTheyStandFor()
    {
        // The hand-built layout is what the tests below think it is.
        Assert.Equal("{\"a\":[[[],[]],[[],[]]]}", TestSupport.ToJson(FanOut(2)));
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
