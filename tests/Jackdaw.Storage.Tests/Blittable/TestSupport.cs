using System.Buffers;
using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>Helpers shared by the blittable tests.</summary>
internal static class TestSupport
{
    public static byte[] Utf8(string text) => Encoding.UTF8.GetBytes(text);

    public static string ToJson(ReadOnlySpan<byte> blittable)
    {
        var output = new ArrayBufferWriter<byte>();
        BlittableJsonWriter.WriteTo(blittable, output);
        return Encoding.UTF8.GetString(output.WrittenSpan);
    }

    public static string RoundTrip(string json, BlittableMode mode = BlittableMode.Memory)
    {
        using var context = new JsonOperationContext();
        return ToJson(context.Parse(Utf8(json), mode).Span);
    }

    /// <summary>A multi-segment sequence cutting <paramref name="data"/> at the given sizes.</summary>
    /// <summary>A sequence of exactly these segments, empty ones included.</summary>
    public static ReadOnlySequence<byte> Sequence(params byte[][] parts)
    {
        var first = new Segment(parts[0]);
        var last = first;
        foreach (var part in parts.Skip(1))
        {
            var next = new Segment(part);
            last.Append(next);
            last = next;
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    public static ReadOnlySequence<byte> Segmented(ReadOnlyMemory<byte> data, Func<int> nextSize)
    {
        if (data.Length == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        Segment? first = null;
        Segment? last = null;
        var offset = 0;
        while (offset < data.Length)
        {
            var size = Math.Min(Math.Max(1, nextSize()), data.Length - offset);
            var segment = new Segment(data.Slice(offset, size));
            if (first is null)
            {
                first = segment;
            }
            else
            {
                last!.Append(segment);
            }

            last = segment;
            offset += size;
        }

        return new ReadOnlySequence<byte>(first!, 0, last!, last!.Memory.Length);
    }

    /// <summary>Feeds <paramref name="json"/> in chunks, keeping the unconsumed tail like a PipeReader would.</summary>
    public static BlittableDocument ParseStreaming(JsonOperationContext context, byte[] json, BlittableMode mode, Random random, int maxChunk)
    {
        var builder = context.StartParse(mode);
        var pending = new List<byte>();
        var offset = 0;
        while (true)
        {
            var size = Math.Min(random.Next(1, maxChunk + 1), json.Length - offset);
            pending.AddRange(json.AsSpan(offset, size).ToArray());
            offset += size;
            var isFinal = offset == json.Length;
            var buffer = pending.ToArray();
            var sequence = Segmented(buffer, () => random.Next(1, 16));
            var consumed = builder.Feed(sequence, isFinal);
            var consumedBytes = (int)sequence.Slice(0, consumed).Length;
            pending.RemoveRange(0, consumedBytes);
            if (isFinal)
            {
                return builder.Complete();
            }
        }
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory)
        {
            Memory = memory;
        }

        public void Append(Segment next)
        {
            next.RunningIndex = RunningIndex + Memory.Length;
            Next = next;
        }
    }
}
