using System.Buffers;
using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>
/// What a pooled <see cref="JsonOperationContext"/> costs: no allocation per document after warm-up
/// (long strings, streamed input), and nothing a large request grew is kept after its reset.
/// Not run in parallel with other tests: large buffers go back to <see cref="ArrayPool{T}.Shared"/>
/// at each reset, and a test on another thread could take them from its per-core stacks.
/// </summary>
[Collection(nameof(ContextMemoryTests))]
[CollectionDefinition(nameof(ContextMemoryTests), DisableParallelization = true)]
public class ContextMemoryTests
{
    /// <summary>After a reset a context holds its current chunk and small working arrays, whatever came before.</summary>
    private const long SmallContextBytes = 256 * 1024;

    [Fact]
    public void DiskModeDocumentsWithLongStringsAllocateNothingAfterWarmUp()
    {
        var random = new Random(17);
        byte[][] documents =
        [
            Json(("Title", "Five kilobytes of prose"), ("Body", Words(random, 5 * 1024))),
            Json(("Letters", Letters(random, 100 * 1024))),
            Json(("Log", Repeated("GET /orders/42 200 1.3 ms\\n", 100 * 1024))),
            Json(("Escaped", Escaped(random, 90 * 1024)), ("Short", Words(random, 6 * 1024))),
            Json(("A", Words(random, 5000)), ("B", Words(random, 4500)), ("C", Letters(random, 87 * 1024))),
        ];
        using var context = new JsonOperationContext();
        var output = new ArrayBufferWriter<byte>(1 << 20);

        void Run(int rounds)
        {
            for (var round = 0; round < rounds; round++)
            {
                foreach (var json in documents)
                {
                    var document = context.Parse(json, BlittableMode.Disk);
                    output.ResetWrittenCount();
                    document.WriteJsonTo(output);
                    // A reset per document: a scratch grown past the kept size goes back to the
                    // pool and is rented again by the next one.
                    context.Reset();
                }
            }
        }

        Run(3);
        var allocated = LeastAllocated(() => Run(10));
        Assert.True(allocated < 1024, $"{allocated} bytes allocated for {10 * documents.Length} documents");

        // The documents are right, not merely cheap: compressed strings read back as Memory mode keeps them.
        foreach (var json in documents)
        {
            Assert.Equal(TestSupport.RoundTrip(Encoding.UTF8.GetString(json)), TestSupport.ToJson(context.Parse(json, BlittableMode.Disk).Span));
        }
    }

    [Theory]
    [InlineData(BlittableMode.Memory)]
    [InlineData(BlittableMode.Disk)]
    public void StreamingFeedOverManySegmentsAllocatesNothingAfterWarmUp(BlittableMode mode)
    {
        var random = new Random(23);
        var json = Encoding.UTF8.GetBytes(
            "{\"Numbers\":[" + string.Join(",", Enumerable.Range(0, 400).Select(i => i % 3 == 0 ? (-98765432101234L * i).ToString() : (i * 1234.5678e-3).ToString("R"))) + "]," +
            "\"Words\":[" + string.Join(",", Enumerable.Range(0, 200).Select(_ => "\"" + Words(random, random.Next(1, 300)) + "\"")) + "]," +
            "\"Escaped\":\"" + Escaped(random, 3000) + "\"," +
            "\"Long\":\"" + Letters(random, 70 * 1024) + "\"," +
            "\"LongEscaped\":\"" + Escaped(random, 80 * 1024) + "\"," +
            "\"Tail\":12345678901234.5e-7}");
        // Segments cut every token somewhere (a 3-byte segment splits most numbers); the builder
        // is fed a window at a time, as a PipeReader would hand it over, and keeps the rest.
        int[] sizes = [3, 17, 250, 1000, 4093, 1];
        var next = 0;
        var sequence = TestSupport.Segmented(json, () => sizes[next++ % sizes.Length]);
        var windowEnds = new List<SequencePosition>();
        for (var offset = 2000L; offset < json.Length; offset += 2000)
        {
            windowEnds.Add(sequence.GetPosition(offset));
        }

        windowEnds.Add(sequence.End);
        var expected = TestSupport.RoundTrip(Encoding.UTF8.GetString(json), mode);
        using var context = new JsonOperationContext();
        var output = new ArrayBufferWriter<byte>(1 << 20);

        BlittableDocument Feed()
        {
            var builder = context.StartParse(mode);
            var consumed = sequence.Start;
            for (var i = 0; i < windowEnds.Count; i++)
            {
                consumed = builder.Feed(sequence.Slice(consumed, windowEnds[i]), isFinalBlock: i == windowEnds.Count - 1);
            }

            return builder.Complete();
        }

        void Run(int rounds)
        {
            for (var round = 0; round < rounds; round++)
            {
                output.ResetWrittenCount();
                Feed().WriteJsonTo(output);
                output.ResetWrittenCount();
                context.Parse(sequence, mode).WriteJsonTo(output);
                context.Reset();
            }
        }

        Run(3);
        var allocated = LeastAllocated(() => Run(20));
        Assert.True(allocated < 1024, $"{allocated} bytes allocated for 40 streamed documents");
        Assert.Equal(expected, TestSupport.ToJson(Feed().Span));
    }

    public static TheoryData<BlittableMode, bool> HugeDocumentCases => new()
    {
        { BlittableMode.Memory, false },
        { BlittableMode.Disk, false },
        { BlittableMode.Disk, true },
    };

    [Theory]
    [MemberData(nameof(HugeDocumentCases))]
    public void ResetAfterAHugeDocumentKeepsNoneOfItsBuffers(BlittableMode mode, bool segmented)
    {
        // Each part grows one buffer: a million values (the entry stack, 24 bytes a value), an
        // object of 40,000 names (name table, sort order, names area), a megabyte string with an
        // escape every few bytes (escape list; in Disk mode the unescaping scratch), a 100 KB name.
        var random = new Random(5);
        var json = new StringBuilder(8 << 20);
        json.Append("{\"Zeros\":[0");
        json.Insert(json.Length, ",0", 1_000_000);
        json.Append("],\"Keyed\":{");
        for (var i = 0; i < 40_000; i++)
        {
            json.Append(i == 0 ? "" : ",").Append("\"orders/").Append(i).Append("-A\":").Append(i);
        }

        json.Append("},\"Text\":\"").Append(Escaped(random, 1 << 20)).Append("\",\"")
            .Append(Letters(random, 100 * 1024)).Append("\":true}");
        var bytes = Encoding.UTF8.GetBytes(json.ToString());
        var small = Corpus.Load("users").Take(50).ToArray();

        using var context = new JsonOperationContext();
        ParseAll(context, small, mode);
        context.Reset();
        Assert.True(context.RetainedBytes < SmallContextBytes, $"{context.RetainedBytes} bytes held after small documents");

        var huge = segmented
            ? context.Parse(TestSupport.Segmented(bytes, () => 64 * 1024), mode)
            : context.Parse(bytes, mode);
        Assert.Equal(1_000_001, huge.Root.TryGet("Zeros", out var zeros) ? zeros.GetArray().Length : -1);
        var whileHuge = context.RetainedBytes;
        Assert.True(whileHuge > 20 << 20, $"only {whileHuge} bytes held while building the huge document");

        context.Reset();
        Assert.True(context.RetainedBytes < SmallContextBytes, $"{context.RetainedBytes} bytes held after a reset (before: {whileHuge})");
        Assert.Equal(0, context.LearnedNames);

        // The trimmed context still builds the same documents as a fresh one.
        using var fresh = new JsonOperationContext();
        for (var round = 0; round < 2; round++)
        {
            foreach (var line in small)
            {
                Assert.True(BlittableComparer.Equals(fresh.Parse(line, mode).Span, context.Parse(line, mode).Span));
                Assert.Equal(TestSupport.ToJson(fresh.Parse(line, mode).Span), TestSupport.ToJson(context.Parse(line, mode).Span));
            }

            context.Reset();
        }
    }

    [Fact]
    public void ChunksOfALargeBatchAreKeptOnlyWhileBatchesStayLarge()
    {
        var lines = Corpus.Load("users");
        using var context = new JsonOperationContext();
        void Batch(long bytes)
        {
            for (var i = 0; context.AllocatedBytes < bytes; i++)
            {
                context.Parse(lines[i % lines.Length], BlittableMode.Disk);
            }

            context.Reset();
        }

        // 3 MB of documents fill about 48 chunks: the next batch of the same size reuses them.
        Batch(3 << 20);
        Assert.True(context.RetainedBytes > 2 << 20, $"{context.RetainedBytes} bytes held after a large batch");
        Batch(3 << 20);
        Assert.True(context.RetainedBytes > 2 << 20, $"{context.RetainedBytes} bytes held after a second large batch");

        // Smaller requests after it: the spare chunks halve with each, back to the shared pool.
        var held = context.RetainedBytes;
        for (var i = 0; i < 8; i++)
        {
            Batch(1);
            Assert.True(context.RetainedBytes < held || context.RetainedBytes < SmallContextBytes, $"{context.RetainedBytes} bytes held after small request {i}, {held} before it");
            held = context.RetainedBytes;
        }

        Assert.True(held < SmallContextBytes, $"{held} bytes held after 8 small requests");
    }

    [Fact]
    public void ResetKeepsTheNamesOfSmallDocuments()
    {
        var lines = Corpus.Load("users").Take(100).ToArray();
        using var context = new JsonOperationContext();
        ParseAll(context, lines, BlittableMode.Disk);
        var learned = context.LearnedNames;
        context.Reset();
        Assert.True(learned > 0);
        Assert.Equal(learned, context.LearnedNames);
    }

    [Theory]
    [InlineData(BlittableMode.Memory)]
    [InlineData(BlittableMode.Disk)]
    public void ADocumentWhoseNamesAreaOutgrewTheKeptSizeIsRebuiltRightAfterReset(BlittableMode mode)
    {
        // 1,000 names of 70 bytes: a 70 KB names area (its buffer is handed back at the reset)
        // while the name table stays small enough to be kept. The next document of the same
        // shape must write its names again, not assume they are still where the last one put them.
        var json = Encoding.UTF8.GetBytes("{" + string.Join(",", Enumerable.Range(0, 1000).Select(i => $"\"{i:D4}{new string('n', 66)}\":{i}")) + "}");
        var expected = TestSupport.RoundTrip(Encoding.UTF8.GetString(json), mode);
        using var context = new JsonOperationContext();
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(expected, TestSupport.ToJson(context.Parse(json, mode).Span));
            Assert.Equal(expected, TestSupport.ToJson(context.Parse(json, mode).Span));
            context.Reset();
            Assert.Equal(1000, context.LearnedNames);
        }
    }

    /// <summary>
    /// Bytes this thread allocated in the least of three runs of <paramref name="run"/>: an
    /// allocation per document shows in every run; a pooled array the pool let go of (a trim on a
    /// full garbage collection) only in one.
    /// </summary>
    private static long LeastAllocated(Action run)
    {
        var least = long.MaxValue;
        for (var i = 0; i < 3; i++)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();
            run();
            least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        return least;
    }

    private static void ParseAll(JsonOperationContext context, byte[][] lines, BlittableMode mode)
    {
        foreach (var line in lines)
        {
            context.Parse(line, mode);
        }
    }

    private static byte[] Json(params (string Name, string EscapedValue)[] properties) =>
        Encoding.UTF8.GetBytes("{" + string.Join(",", properties.Select(p => $"\"{p.Name}\":\"{p.EscapedValue}\"")) + "}");

    /// <summary>Words of a small vocabulary: text the dictionary coder and LZ4 both get at.</summary>
    private static string Words(Random random, int length)
    {
        string[] vocabulary = ["order", "shipped", "customer", "the", "of", "invoice", "Lovelace", "Babbage", "engine", "numbers", "and", "é"];
        var text = new StringBuilder(length + 16);
        while (text.Length < length)
        {
            text.Append(vocabulary[random.Next(vocabulary.Length)]).Append(' ');
        }

        return text.ToString(0, length);
    }

    /// <summary>Random letters: LZ4 gains little, so the dictionary coder is tried on the whole string too.</summary>
    private static string Letters(Random random, int length)
    {
        var text = new char[length];
        for (var i = 0; i < text.Length; i++)
        {
            text[i] = (char)('a' + random.Next(26));
        }

        return new string(text);
    }

    /// <summary>JSON string content repeating <paramref name="escapedLine"/> to at least <paramref name="length"/> characters: LZ4 wins.</summary>
    private static string Repeated(string escapedLine, int length)
    {
        var text = new StringBuilder(length + escapedLine.Length);
        while (text.Length < length)
        {
            text.Append(escapedLine);
        }

        return text.ToString();
    }

    /// <summary>JSON string content (escaped) of about <paramref name="length"/> characters with an escape every few.</summary>
    private static string Escaped(Random random, int length)
    {
        string[] escapes = ["\\n", "\\\"", "\\\\", "\\u00e9", "\\t", "\\/"];
        var text = new StringBuilder(length + 16);
        while (text.Length < length)
        {
            text.Append((char)('a' + random.Next(26)), random.Next(1, 8)).Append(escapes[random.Next(escapes.Length)]);
        }

        return text.ToString();
    }
}
