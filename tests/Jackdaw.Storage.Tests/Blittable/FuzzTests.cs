using System.Buffers;
using System.Text;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>
/// Generated and mutated inputs (seeded, bounded by count): each must either round-trip and agree
/// with System.Text.Json value by value, or fail with a BlittableParseException whose error is
/// consistent with what System.Text.Json says about the same bytes. CI runs the fixed seeds below;
/// a longer campaign sets JACKDAW_FUZZ_SEED (a number, or "random") and JACKDAW_FUZZ_COUNT (inputs
/// per test); a failure names the seed that reproduces it.
/// </summary>
public class FuzzTests
{
    private static readonly int GeneratedInputs = InputCount(60_000);
    private static readonly int MutatedInputs = InputCount(60_000);

    private const string MutationChars = "{}[]\",:\\0123456789.eE-+ tfn";

    private static readonly string[] Names = ["a", "b", "Name", "@metadata", "é", "k\"q", "line\nbreak", "😀", "", "x"];

    [Fact]
    public void GeneratedDocumentsRoundTripOrFailCleanly()
    {
        var seed = Seed(20261123);
        var random = new Random(seed);
        var checker = new Checker(seed);
        for (var i = 0; i < GeneratedInputs; i++)
        {
            var text = new StringBuilder();
            WriteObject(text, random, 0);
            checker.Check(Encoding.UTF8.GetBytes(text.ToString()), random, i);
        }

        Assert.True(checker.Accepted > GeneratedInputs / 3, $"only {checker.Accepted} of {GeneratedInputs} accepted");
    }

    [Fact]
    public void MutatedDocumentsRoundTripOrFailCleanly()
    {
        var seed = Seed(424242);
        var random = new Random(seed);
        var checker = new Checker(seed);
        var corpus = Corpus.Load("companies").Take(300).Concat(Corpus.Load("users").Take(300)).ToArray();
        for (var i = 0; i < MutatedInputs; i++)
        {
            byte[] input;
            if (i % 3 == 0)
            {
                var text = new StringBuilder();
                WriteObject(text, random, 0);
                input = Encoding.UTF8.GetBytes(text.ToString());
            }
            else
            {
                input = corpus[random.Next(corpus.Length)];
            }

            checker.Check(Mutate(input, random), random, i);
        }
    }

    private static byte[] Mutate(byte[] input, Random random)
    {
        var bytes = new List<byte>(input);
        var mutations = random.Next(1, 4);
        for (var m = 0; m < mutations && bytes.Count > 0; m++)
        {
            var at = random.Next(bytes.Count);
            switch (random.Next(7))
            {
                case 0:
                    bytes[at] = (byte)random.Next(256);
                    break;
                case 1:
                    bytes[at] = (byte)MutationChars[random.Next(MutationChars.Length)];
                    break;
                case 2:
                    bytes.RemoveRange(at, Math.Min(random.Next(1, 8), bytes.Count - at));
                    break;
                case 3:
                    bytes.Insert(at, (byte)random.Next(256));
                    break;
                case 4:
                    var length = Math.Min(random.Next(1, 40), bytes.Count - at);
                    bytes.InsertRange(random.Next(bytes.Count), bytes.GetRange(at, length));
                    break;
                case 5:
                    bytes.RemoveRange(at, bytes.Count - at);
                    break;
                default:
                    bytes.InsertRange(at, "\\u00"u8.ToArray());
                    break;
            }
        }

        return bytes.ToArray();
    }

    private static void WriteObject(StringBuilder text, Random random, int depth)
    {
        text.Append('{');
        var count = random.Next(depth == 0 ? 1 : 0, 7);
        for (var i = 0; i < count; i++)
        {
            if (i > 0)
            {
                text.Append(',');
            }

            Space(text, random);
            WriteString(text, random, random.Next(10) < 7 ? Names[random.Next(Names.Length)] + (random.Next(3) == 0 ? "" : i.ToString()) : RandomText(random));
            Space(text, random);
            text.Append(':');
            Space(text, random);
            WriteValue(text, random, depth);
        }

        text.Append('}');
    }

    private static void WriteValue(StringBuilder text, Random random, int depth)
    {
        switch (random.Next(depth > 5 ? 6 : 9))
        {
            case 0:
                text.Append(random.Next(3) switch { 0 => "true", 1 => "false", _ => "null" });
                break;
            case 1:
                text.Append(random.Next(6) switch
                {
                    0 => long.MaxValue.ToString(),
                    1 => long.MinValue.ToString(),
                    2 => "-0",
                    3 => "18446744073709551616",
                    _ => random.NextInt64(long.MinValue, long.MaxValue).ToString(),
                });
                break;
            case 2:
                text.Append(random.Next(7) switch
                {
                    0 => "1e308",
                    1 => "1e999",
                    2 => "-2.5E-10",
                    3 => "0.0",
                    4 => "123456789.123456789e+5",
                    5 => "5e-324",
                    _ => (random.NextDouble() * 1e6).ToString("R", System.Globalization.CultureInfo.InvariantCulture),
                });
                break;
            case 3:
            case 4:
            case 5:
                WriteString(text, random, RandomText(random));
                break;
            case 6:
            case 7:
                WriteObject(text, random, depth + 1);
                break;
            default:
                text.Append('[');
                var count = random.Next(0, 5);
                for (var i = 0; i < count; i++)
                {
                    if (i > 0)
                    {
                        text.Append(',');
                    }

                    WriteValue(text, random, depth + 1);
                }

                text.Append(']');
                break;
        }
    }

    private static string RandomText(Random random)
    {
        var length = random.Next(10) == 0 ? random.Next(100, 400) : random.Next(0, 30);
        var text = new StringBuilder();
        for (var i = 0; i < length; i++)
        {
            text.Append(random.Next(20) switch
            {
                0 => (char)random.Next(0, 0x20),
                1 => "é",
                2 => "中",
                3 => "😀",
                4 => '"',
                5 => '\\',
                6 when random.Next(10) == 0 => "\ud800",
                _ => " the products companies amplus lorem"[random.Next(36)],
            });
        }

        return text.ToString();
    }

    private static void WriteString(StringBuilder text, Random random, string value)
    {
        text.Append('"');
        foreach (var c in value)
        {
            if (c < 0x20 || c == '"' || c == '\\' || random.Next(40) == 0)
            {
                text.Append(c switch
                {
                    '"' => "\\\"",
                    '\\' => random.Next(2) == 0 ? "\\\\" : "\\u005C",
                    '\n' => "\\n",
                    _ => $"\\u{(int)c:X4}",
                });
            }
            else
            {
                text.Append(c);
            }
        }

        text.Append('"');
    }

    private static void Space(StringBuilder text, Random random)
    {
        if (random.Next(8) == 0)
        {
            text.Append(" \n\t\r"[random.Next(4)]);
        }
    }

    private static int InputCount(int standard) =>
        int.TryParse(Environment.GetEnvironmentVariable("JACKDAW_FUZZ_COUNT"), out var count) && count > 0 ? count : standard;

    private static int Seed(int standard) => Environment.GetEnvironmentVariable("JACKDAW_FUZZ_SEED") switch
    {
        "random" => Random.Shared.Next(),
        { } text when int.TryParse(text, out var seed) => seed,
        _ => standard,
    };

    private sealed class Checker
    {
        private static readonly JsonDocumentOptions ReferenceOptions = new() { MaxDepth = 1000 };
        private readonly JsonOperationContext _context = new();
        private readonly JsonOperationContext _streaming = new();
        private readonly ArrayBufferWriter<byte> _output = new();
        private readonly byte[] _scratch = new byte[1 << 16];

        private readonly int _seed;

        public Checker(int seed)
        {
            _seed = seed;
        }

        public int Accepted { get; private set; }

        public void Check(byte[] input, Random random, int iteration)
        {
            try
            {
                CheckOne(input, random, iteration);
            }
            catch (Exception e)
            {
                throw new InvalidOperationException($"Fuzz seed {_seed} (rerun with JACKDAW_FUZZ_SEED={_seed}), input {iteration}: {e.Message}", e);
            }
        }

        private void CheckOne(byte[] input, Random random, int iteration)
        {
            var mode = (iteration & 1) == 0 ? BlittableMode.Memory : BlittableMode.Disk;
            JsonDocument? reference = null;
            try
            {
                reference = JsonDocument.Parse(input, ReferenceOptions);
            }
            catch (JsonException)
            {
            }

            using (reference)
            {
                BlittableDocument doc;
                try
                {
                    doc = _context.Parse(input, mode);
                }
                catch (BlittableParseException e)
                {
                    if (reference is not null)
                    {
                        Assert.True(
                            e.Error is BlittableParseError.DuplicateProperty or BlittableParseError.NotAnObject or BlittableParseError.TooDeep
                                or BlittableParseError.InvalidUtf8 or BlittableParseError.NumberOutOfRange,
                            $"input {iteration}: System.Text.Json accepts what we reject as {e.Error}: {Encoding.UTF8.GetString(input)}");
                    }

                    Assert.InRange(e.Position, 0, input.Length);
                    CheckStreaming(input, mode, random, iteration, e.Error, null);
                    return;
                }

                Assert.True(reference is not null, $"input {iteration}: we accept what System.Text.Json rejects: {Encoding.UTF8.GetString(input)}");
                Accepted++;
                BlittableAssert.Equal(reference!.RootElement, doc.Root, _scratch, $"input {iteration}");
                _output.ResetWrittenCount();
                doc.WriteJsonTo(_output);
                var again = _context.Parse(_output.WrittenSpan, mode);
                Assert.True(BlittableComparer.Equals(doc.Span, again.Span), $"input {iteration}: written JSON does not parse back equal");
                Assert.True(again.Span.SequenceEqual(doc.Span), $"input {iteration}: building is not canonical");
                CheckStreaming(input, mode, random, iteration, null, doc.Span.ToArray());
            }

            if ((iteration & 63) == 63)
            {
                _context.Reset();
                _streaming.Reset();
            }
        }

        private void CheckStreaming(byte[] input, BlittableMode mode, Random random, int iteration, BlittableParseError? error, byte[]? expected)
        {
            if (iteration % 16 != 0)
            {
                return;
            }

            try
            {
                var streamed = TestSupport.ParseStreaming(_streaming, input, mode, random, random.Next(1, 64));
                Assert.True(expected is not null && streamed.Span.SequenceEqual(expected), $"input {iteration}: streaming differs ({error})");
            }
            catch (BlittableParseException e)
            {
                Assert.True(error is not null, $"input {iteration}: streaming fails ({e.Error}) where a whole parse succeeds");
                if (error is not (BlittableParseError.InvalidUtf8 or BlittableParseError.InvalidJson))
                {
                    // The whole-input UTF-8 check runs first, so only those two may trade places.
                    Assert.Equal(error, e.Error);
                }
            }
        }
    }
}
