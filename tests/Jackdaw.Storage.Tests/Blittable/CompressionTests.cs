using System.Buffers;
using System.Text;
using Jackdaw.Storage.Blittable;
using Xunit.Abstractions;

namespace Jackdaw.Storage.Tests.Blittable;

public class CompressionTests
{
    private readonly ITestOutputHelper _output;

    public CompressionTests(ITestOutputHelper output)
    {
        _output = output;
    }

    [Theory]
    [InlineData("users", 0.95)]
    [InlineData("companies", 0.70)]
    [InlineData("orders", 0.75)]
    public void DiskModeIsSmallerThanTheJsonText(string file, double limit)
    {
        var lines = Corpus.Load(file);
        using var context = new JsonOperationContext();
        long json = 0, disk = 0, memory = 0;
        for (var i = 0; i < lines.Length; i++)
        {
            json += lines[i].Length;
            disk += context.Parse(lines[i], BlittableMode.Disk).Length;
            memory += context.Parse(lines[i], BlittableMode.Memory).Length;
            if ((i & 63) == 63)
            {
                context.Reset();
            }
        }

        _output.WriteLine($"{file}: disk {100.0 * disk / json:F1}% memory {100.0 * memory / json:F1}% of {json} JSON bytes");
        Assert.True(disk <= json * limit, $"{file}: disk mode is {100.0 * disk / json:F1}% of the JSON (limit {limit:P0})");
    }

    [Theory]
    [InlineData("שלום עולם, זהו טקסט בעברית שאמור להישאר כפי שהוא ללא דחיסה")]
    [InlineData("这是一段中文文本，它应该保持原样而不被压缩。这是一段中文文本")]
    [InlineData("emoji 😀😃😄😁😆😅😂🤣 only")]
    public void UnicodeTextStaysRaw(string text)
    {
        using var context = new JsonOperationContext();
        var json = Encoding.UTF8.GetBytes("{\"a\":\"" + text + "\"}");
        var doc = context.Parse(json, BlittableMode.Disk);
        Assert.True(doc.Root.TryGet("a", out var value));
        Assert.False(value.IsCompressed);
        Assert.Equal(text, value.GetString());
    }

    [Fact]
    public void LatinTextIsCompressedAndRoundTrips()
    {
        using var context = new JsonOperationContext();
        var text = "Deduco amplus textilis vociferor dolorum casus. Laborum admoneo caries solitudo tenax vae amissio deinde.";
        var json = Encoding.UTF8.GetBytes("{\"a\":\"" + text + "\",\"b\":\"" + text + text + text + "\"}");
        var doc = context.Parse(json, BlittableMode.Disk);
        Assert.True(doc.Root.TryGet("a", out var a));
        Assert.True(a.IsCompressed);
        Assert.False(a.TryGetRawUtf8(out _));
        Assert.Equal(text, a.GetString());
        Assert.True(doc.Root.TryGet("b", out var b));
        Assert.True(b.IsCompressed);
        Assert.Equal(text + text + text, b.GetString());
        Assert.True(doc.Length < json.Length * 0.7, $"{doc.Length} of {json.Length}");
    }

    [Fact]
    public void CompressedStringNeverGrowsAndRoundTripsForRandomInput()
    {
        var random = new Random(1234);
        var destination = new byte[20000];
        var decoded = new byte[20000];
        for (var i = 0; i < 20000; i++)
        {
            var length = random.Next(0, i % 100 == 0 ? 5000 : 300);
            var value = new byte[length];
            switch (i % 4)
            {
                case 0:
                    random.NextBytes(value);
                    break;
                case 1:
                    for (var j = 0; j < length; j++)
                    {
                        value[j] = (byte)random.Next(0x20, 0x7F);
                    }

                    break;
                case 2:
                    for (var j = 0; j < length; j++)
                    {
                        value[j] = (byte)"etaoin shrdlu,.products/companies"[random.Next(33)];
                    }

                    break;
                default:
                    for (var j = 0; j < length; j++)
                    {
                        value[j] = (byte)(j % 7 == 0 ? 0xC3 : 'a' + (j % 5));
                    }

                    break;
            }

            var size = ShortStringCodec.TryEncode(value, destination.AsSpan(0, length));
            if (size >= 0)
            {
                Assert.True(size < length);
                Assert.Equal(length, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded));
                Assert.True(decoded.AsSpan(0, length).SequenceEqual(value));
            }

            var type = StringCompression.TryCompress(value, destination.AsSpan(0, length), out var written);
            if (type != BlittableType.String)
            {
                Assert.True(written < length);
                AssertDecompresses(type, destination.AsSpan(0, written), value);
            }
        }
    }

    [Fact]
    public void CorruptCompressedDataIsAFormatErrorNotACrash()
    {
        var random = new Random(77);
        var payload = new byte[64];
        var destination = new byte[100];
        for (var i = 0; i < 5000; i++)
        {
            random.NextBytes(payload);
            var length = random.Next(1, 100);
            try
            {
                StringCompression.Decompress(i % 2 == 0 ? BlittableType.StringDictionary : BlittableType.StringLz4, payload.AsSpan(0, random.Next(1, 64)), destination.AsSpan(0, length));
            }
            catch (BlittableFormatException)
            {
            }
        }
    }

    [Fact]
    public void EveryDictionaryEntryIsFoundByTheEncoder()
    {
        // Each entry alone must encode to its own code (or something as small): a path missing
        // from the encoder's trie would leave the entry as literals. Entries whose code would save
        // fewer than MinGain bytes are declined.
        var destination = new byte[64];
        var decoded = new byte[64];
        for (var e = 0; e < ShortStringCodec.EntryCount; e++)
        {
            var entry = ShortStringCodec.Entry(e);
            var codeSize = e < ShortStringCodec.OneByteCodes ? 1 : 2;
            var size = ShortStringCodec.TryEncode(entry, destination.AsSpan(0, entry.Length));
            if (entry.Length - codeSize < ShortStringCodec.MinGain)
            {
                Assert.Equal(-1, size);
                continue;
            }

            Assert.InRange(size, 1, codeSize);
            Assert.Equal(entry.Length, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded));
            Assert.True(decoded.AsSpan(0, entry.Length).SequenceEqual(entry), Encoding.ASCII.GetString(entry));
        }
    }

    [Fact]
    public void EncoderLeavesTheSpaceToTheNextWordWhenThatSavesMore()
    {
        // Entries " W " and " W" both exist for many words; a plain greedy parse of " W V" takes
        // " W " and leaves "V" as literals. The look-ahead must give " W" + " V".
        var entries = new Dictionary<string, int>();
        for (var e = 0; e < ShortStringCodec.EntryCount; e++)
        {
            entries[Encoding.ASCII.GetString(ShortStringCodec.Entry(e))] = e;
        }

        static int CodeSize(int entry) => entry < ShortStringCodec.OneByteCodes ? 1 : 2;
        var words = entries.Keys.Where(k => k.Length > 4 && k[0] == ' ' && k[^1] != ' ' && k.Skip(1).All(char.IsAsciiLetterLower)).ToList();
        var checkedPairs = 0;
        var destination = new byte[64];
        var decoded = new byte[64];
        foreach (var w in words.Where(w => entries.ContainsKey(w + " ")).Take(50))
        {
            var v = words[(checkedPairs * 7) % words.Count];
            if (entries.ContainsKey(w + v) || entries.ContainsKey(w + v.TrimEnd()))
            {
                continue;
            }

            var text = Encoding.ASCII.GetBytes(w + v);
            var size = ShortStringCodec.TryEncode(text, destination.AsSpan(0, text.Length));
            Assert.InRange(size, 1, CodeSize(entries[w]) + CodeSize(entries[v]));
            Assert.Equal(text.Length, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded));
            Assert.True(decoded.AsSpan(0, text.Length).SequenceEqual(text));
            checkedPairs++;
        }

        Assert.True(checkedPairs >= 10, $"only {checkedPairs} word pairs with a \"W \" entry in the dictionary");
    }

    [Fact]
    public void Lz4IsTriedFromItsThresholdWhenTheDictionaryCannotHelp()
    {
        // "#~" repeats compress well with LZ4 but hold no dictionary entry.
        var destination = new byte[4096];
        foreach (var length in new[] { StringCompression.Lz4Threshold - 1, StringCompression.Lz4Threshold, StringCompression.Lz4Threshold + 1 })
        {
            var value = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("#~", length)).Substring(0, length));
            var type = StringCompression.TryCompress(value, destination.AsSpan(0, length), out var written);
            Assert.Equal(length >= StringCompression.Lz4Threshold ? BlittableType.StringLz4 : BlittableType.String, type);
            if (type != BlittableType.String)
            {
                AssertDecompresses(type, destination.AsSpan(0, written), value);
            }
        }
    }

    [Fact]
    public void LongTextIsTriedWithLz4EvenWhenTheDictionaryDoesWell()
    {
        // Latin text the dictionary shrinks by far more than a quarter, repeating every ~107 bytes. Below
        // Lz4FirstThreshold the dictionary's result stands. At it, LZ4 (~150 bytes) goes first, misses its
        // quarter, the dictionary does worse and LZ4's result is kept. Further on, LZ4 takes it at once.
        var sentence = "Deduco amplus textilis vociferor dolorum casus. Laborum admoneo caries solitudo tenax vae amissio deinde. ";
        var destination = new byte[8192];
        foreach (var length in new[] { StringCompression.Lz4FirstThreshold - 1, StringCompression.Lz4FirstThreshold, 2047, 2048 })
        {
            var value = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat(sentence, (length / sentence.Length) + 1)).Substring(0, length));
            var type = StringCompression.TryCompress(value, destination.AsSpan(0, length), out var written);
            Assert.Equal(length >= StringCompression.Lz4FirstThreshold ? BlittableType.StringLz4 : BlittableType.StringDictionary, type);
            AssertDecompresses(type, destination.AsSpan(0, written), value);
        }
    }

    [Fact]
    public void LongTextThatDoesNotRepeatKeepsTheDictionaryResult()
    {
        // Dictionary entries in random order: the dictionary codes each in a byte or two, LZ4 finds few
        // repeats. LZ4 goes first (the string is past Lz4FirstThreshold) and loses.
        var random = new Random(77);
        var destination = new byte[8192];
        foreach (var length in new[] { StringCompression.Lz4FirstThreshold, 1500, 2548 })
        {
            var text = new List<byte>();
            while (text.Count < length)
            {
                var entry = ShortStringCodec.Entry(random.Next(ShortStringCodec.OneByteCodes, ShortStringCodec.EntryCount)).ToArray();
                if (entry.All(b => b < 0x80))
                {
                    text.AddRange(entry);
                }
            }

            var value = text.Take(length).ToArray();
            var type = StringCompression.TryCompress(value, destination.AsSpan(0, length), out var written);
            Assert.Equal(BlittableType.StringDictionary, type);
            Assert.True(written < length / 2, $"{written} of {length} bytes");
            AssertDecompresses(type, destination.AsSpan(0, written), value);
        }
    }

    [Fact]
    public void DecodeGivesTheSameTextWhateverRoomTheDestinationHas()
    {
        // The decoder has a fast loop (32 bytes of room, whole-word literal runs) and an exact tail;
        // strings mixing entries, ASCII runs of every length and non-ASCII bytes must decode the same
        // through both, with the switch falling anywhere.
        var random = new Random(4242);
        var destination = new byte[4096];
        var decoded = new byte[4096];
        var encodedCount = 0;
        for (var round = 0; round < 3000; round++)
        {
            var text = new List<byte>();
            var parts = random.Next(1, 12);
            for (var p = 0; p < parts; p++)
            {
                switch (random.Next(4))
                {
                    case 0:
                    case 1:
                        text.AddRange(ShortStringCodec.Entry(random.Next(ShortStringCodec.EntryCount)).ToArray());
                        break;
                    case 2:
                        var run = random.Next(1, 20);
                        for (var k = 0; k < run; k++)
                        {
                            text.Add((byte)random.Next('a', 'z' + 1));
                        }

                        break;
                    default:
                        text.AddRange("é"u8.ToArray());
                        break;
                }
            }

            var value = text.ToArray();
            var size = ShortStringCodec.TryEncode(value, destination.AsSpan(0, value.Length));
            if (size < 0)
            {
                continue;
            }

            encodedCount++;
            foreach (var room in new[] { value.Length, value.Length + 1, value.Length + 31, value.Length + 32, decoded.Length })
            {
                Array.Clear(decoded);
                Assert.Equal(value.Length, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded.AsSpan(0, room)));
                Assert.True(decoded.AsSpan(0, value.Length).SequenceEqual(value));
            }

            if (value.Length > 0)
            {
                Assert.Equal(-1, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded.AsSpan(0, value.Length - 1)));
            }
        }

        Assert.True(encodedCount > 1000, $"only {encodedCount} of the generated strings were encoded");
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(ShortStringCodec.MaxInput)]
    [InlineData(ShortStringCodec.MaxInput + 1)]
    public void CoderLengthWindowEdgesEncodeOrDeclineAndAlwaysRoundTrip(int length)
    {
        // The dictionary coder takes 2..MaxInput bytes and declines outside; StringCompression keeps
        // the smallest result either way. Two bytes can save at most one, below MinGain: declined too.
        var sentence = "Deduco amplus textilis vociferor dolorum casus. Laborum admoneo caries solitudo tenax vae amissio deinde. ";
        var value = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat(sentence, (length / sentence.Length) + 1)).Substring(0, length));
        if (length == 2)
        {
            value = Encoding.ASCII.GetBytes(". ");   // a one-byte code of two bytes
        }

        var destination = new byte[length];
        var decoded = new byte[length];
        var size = ShortStringCodec.TryEncode(value, destination);
        if (length <= 2 || length > ShortStringCodec.MaxInput)
        {
            Assert.Equal(-1, size);
        }
        else
        {
            Assert.InRange(size, 1, length - 1);
            Assert.Equal(length, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded));
            Assert.True(decoded.AsSpan().SequenceEqual(value));
        }

        var type = StringCompression.TryCompress(value, destination, out var written);
        // Repeated text this long (2 KiB) is LZ4's (it goes first from Lz4FirstThreshold); short text the dictionary's.
        Assert.Equal(length >= 2048 ? BlittableType.StringLz4 : length > 2 ? BlittableType.StringDictionary : BlittableType.String, type);
        if (type != BlittableType.String)
        {
            Array.Clear(decoded);
            Assert.Equal(length, StringCompression.Decompress(type, destination.AsSpan(0, written), decoded));
            Assert.True(decoded.AsSpan().SequenceEqual(value));
        }
    }

    [Theory]
    [InlineData("2018-12-17T19:10:00.125Z")]
    [InlineData("0000-00-00T00:00:00.000Z")]
    [InlineData("9999-15-31T31:63:63.999Z")]
    public void TimestampsTakeOneNineByteTokenAndRoundTrip(string text)
    {
        var value = Encoding.ASCII.GetBytes(text);
        var destination = new byte[value.Length];
        var size = ShortStringCodec.TryEncode(value, destination);
        Assert.Equal(9, size);
        Assert.Equal(0xFF, destination[0]);
        Assert.Equal(0x00, destination[1]);
        Assert.Equal(value.Length, ShortStringCodec.DecodedLength(destination.AsSpan(0, size)));
        var decoded = new byte[value.Length];
        Assert.Equal(value.Length, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded));
        Assert.Equal(text, Encoding.ASCII.GetString(decoded));
    }

    [Fact]
    public void TimestampFieldsSitAtTheirDocumentedBits()
    {
        Assert.True(ShortStringCodec.TryPackTimestamp("2018-12-17T19:10:58.125Z"u8, out var packed));
        Assert.Equal(125UL, packed & 0x3FF);
        Assert.Equal(58UL, (packed >> 10) & 0x3F);
        Assert.Equal(10UL, (packed >> 16) & 0x3F);
        Assert.Equal(19UL, (packed >> 22) & 0x1F);
        Assert.Equal(17UL, (packed >> 27) & 0x1F);
        Assert.Equal(12UL, (packed >> 32) & 0xF);
        Assert.Equal(2018UL, (packed >> 36) & 0x3FFF);
        Assert.Equal(0UL, packed >> 50);
    }

    [Theory]
    [InlineData("2018-16-17T19:10:00.125Z")]   // month past its 4 bits
    [InlineData("2018-12-32T19:10:00.125Z")]   // day past its 5 bits
    [InlineData("2018-12-17T19:64:00.125Z")]   // minutes past their 6 bits
    [InlineData("2018-12-17 19:10:00.125Z")]
    [InlineData("2018-12-17T19:10:00.125+")]
    [InlineData("2018-12-17T19:1a:00.125Z")]
    public void OtherTwentyFourByteTextIsNotATimestampButStillRoundTrips(string text)
    {
        var value = Encoding.ASCII.GetBytes(text);
        Assert.False(ShortStringCodec.TryPackTimestamp(value, out _));
        var destination = new byte[value.Length];
        var size = ShortStringCodec.TryEncode(value, destination);
        if (size > 0)
        {
            Assert.NotEqual(0x00, size > 1 && destination[0] == 0xFF ? destination[1] : 0xFF);
            var decoded = new byte[value.Length + 64];
            Assert.Equal(value.Length, ShortStringCodec.Decode(destination.AsSpan(0, size), decoded));
            Assert.Equal(text, Encoding.ASCII.GetString(decoded, 0, value.Length));
        }
    }

    [Theory]
    [InlineData(new byte[] { 0xFF, 0x00, 0xE8, 0x03, 0, 0, 0, 0, 0 })]          // 1000 milliseconds
    [InlineData(new byte[] { 0xFF, 0x00, 0, 0, 0, 0, 0, 0, 0x04 })]             // a bit above the year set
    [InlineData(new byte[] { 0xFF, 0x00, 0, 0, 0, 0, 0, 0 })]                   // one packed byte short
    [InlineData(new byte[] { 0xFF, 0x01, 0, 0, 0, 0, 0, 0, 0 })]                // 0xFF then an ASCII byte other than the marker
    public void CorruptTimestampTokensAreRejected(byte[] payload)
    {
        var decoded = new byte[64];
        Assert.Equal(-1, ShortStringCodec.Decode(payload, decoded));
        Assert.Equal(-1, ShortStringCodec.Decode(payload, decoded.AsSpan(0, 24)));
    }

    [Fact]
    public void UncheckedDecoderAgreesWithTheCheckedOneOnValidAndCorruptPayloads()
    {
        // The writer's decoder checks its room once and reads up to 16 bytes past the payload; fed the
        // same payloads (valid encodings of mixed text, then random bytes, codes cut at the end,
        // timestamp tokens with bad fields) it must give the checked decoder's result, -1 included.
        var random = new Random(9090);
        var encoded = new byte[4096];
        var expected = new byte[8192];
        var checkedRejects = 0;
        for (var round = 0; round < 6000; round++)
        {
            byte[] payload;
            if (round % 2 == 0)
            {
                var text = new List<byte>();
                for (var p = random.Next(1, 10); p > 0; p--)
                {
                    text.AddRange(random.Next(3) switch
                    {
                        0 => ShortStringCodec.Entry(random.Next(ShortStringCodec.EntryCount)).ToArray(),
                        1 => Enumerable.Range(0, random.Next(1, 40)).Select(_ => (byte)random.Next(0x20, 0x7F)).ToArray(),
                        _ => "é 2018-12-17T19:10:00.125Z"u8.ToArray(),
                    });
                }

                var value = text.ToArray();
                var size = ShortStringCodec.TryEncode(value, encoded.AsSpan(0, value.Length));
                payload = size > 0 ? encoded.AsSpan(0, size).ToArray() : value;
            }
            else
            {
                payload = new byte[random.Next(1, 80)];
                random.NextBytes(payload);
                if (round % 6 == 1)
                {
                    payload[^1] = (byte)random.Next(0xF0, 0x100);   // a two-byte code (or 0xFF) cut at the end
                }
                else if (round % 6 == 3 && payload.Length >= 9)
                {
                    payload[0] = 0xFF;
                    payload[1] = 0x00;                               // a timestamp token, fields random
                }
            }

            // The payload inside a larger buffer, followed by the slack the writer guarantees.
            var offset = random.Next(0, 8);
            var source = new byte[offset + payload.Length + ShortStringCodec.UncheckedReadSlack];
            random.NextBytes(source);
            payload.CopyTo(source, offset);
            var output = new byte[(payload.Length * ShortStringCodec.MaxEntryLength) + 32];
            var want = ShortStringCodec.Decode(payload, expected);
            var got = ShortStringCodec.DecodeUnchecked(ref source[0], offset, offset + payload.Length, ref output[0]);
            Assert.Equal(want, got);
            if (want >= 0)
            {
                Assert.True(output.AsSpan(0, got).SequenceEqual(expected.AsSpan(0, want)));
            }
            else
            {
                checkedRejects++;
            }
        }

        Assert.True(checkedRejects > 1000, $"only {checkedRejects} payloads were corrupt");
    }

    [Fact]
    public void TwoDigitLanesWritesEveryValueInEveryLane()
    {
        for (var v = 0; v < 100; v++)
        {
            for (var lane = 0; lane < 4; lane++)
            {
                // The other lanes hold 99, the value most likely to spill into a neighbour.
                var lanes = 0x0063_0063_0063_0063UL & ~(0xFFFFUL << (16 * lane)) | ((ulong)v << (16 * lane));
                var digits = BitConverter.GetBytes(ShortStringCodec.TwoDigitLanes(lanes));
                for (var k = 0; k < 4; k++)
                {
                    Assert.Equal((k == lane ? v : 99).ToString("00"), Encoding.ASCII.GetString(digits, 2 * k, 2));
                }
            }
        }
    }

    [Fact]
    public void TimestampsOfEveryFieldValueRoundTrip()
    {
        var random = new Random(2024);
        var destination = new byte[9];
        var decoded = new byte[64];
        for (var i = 0; i < 20000; i++)
        {
            var text = $"{random.Next(10000):0000}-{random.Next(16):00}-{random.Next(32):00}T{random.Next(32):00}:{random.Next(64):00}:{random.Next(64):00}.{random.Next(1000):000}Z";
            var value = Encoding.ASCII.GetBytes(text);
            Assert.Equal(9, ShortStringCodec.TryEncode(value, destination));
            Assert.Equal(24, ShortStringCodec.Decode(destination, decoded));
            Assert.Equal(text, Encoding.ASCII.GetString(decoded, 0, 24));
        }
    }

    [Fact]
    public void DictionaryHasAllItsCodes()
    {
        Assert.Equal(ShortStringCodec.OneByteCodes + (15 * 256), ShortStringCodec.EntryCount);
    }

    [Theory]
    [InlineData(299, true)]
    [InlineData(309, true)]
    [InlineData(310, false)]
    [InlineData(400, false)]
    public void DiskModeJudgesLongNumbersWithoutAnExponentByTheirValue(int integerDigits, bool finite)
    {
        // The fast path skips parsing only below 300 characters; longer numbers are parsed:
        // 10^308 (309 digits) is still below double.MaxValue, 10^309 overflows.
        var number = "1" + new string('0', integerDigits - 1) + ".5";
        var json = Encoding.ASCII.GetBytes("{\"a\":" + number + "}");
        using var context = new JsonOperationContext();
        if (finite)
        {
            var doc = context.Parse(json, BlittableMode.Disk);
            Assert.True(doc.Root.TryGet("a", out var value));
            Assert.True(value.TryGetNumberText(out var text));
            Assert.Equal(number, Encoding.ASCII.GetString(text));
        }
        else
        {
            var e = Assert.Throws<BlittableParseException>(() => context.Parse(json, BlittableMode.Disk));
            Assert.Equal(BlittableParseError.NumberOutOfRange, e.Error);
        }
    }

    [Theory]
    [InlineData("1.5e308", true)]
    [InlineData("1.5e309", false)]
    [InlineData("-2E+400", false)]
    [InlineData("3.25", true)]
    [InlineData("-0.000001", true)]
    public void FiniteNumberCheckAgreesWithDoubleParsing(string number, bool finite)
    {
        Assert.Equal(finite, BlittableBuilder.IsFiniteNumber(Encoding.ASCII.GetBytes(number)));
    }

    [Fact]
    public void DiskModeRejectsNumbersThatAreNotFiniteDoubles()
    {
        using var context = new JsonOperationContext();
        var json = "{\"a\":1e999999}"u8.ToArray();
        var e = Assert.Throws<BlittableParseException>(() => context.Parse(json, BlittableMode.Disk));
        Assert.Equal(BlittableParseError.NumberOutOfRange, e.Error);
        Assert.Equal(5, e.Position);
        var doc = context.Parse(json, BlittableMode.Memory);
        var output = new ArrayBufferWriter<byte>();
        doc.WriteJsonTo(output);
        Assert.Equal("{\"a\":1e999999}", Encoding.UTF8.GetString(output.WrittenSpan));
    }

    private static void AssertDecompresses(BlittableType type, ReadOnlySpan<byte> compressed, ReadOnlySpan<byte> value)
    {
        var decoded = new byte[value.Length];
        Assert.Equal(value.Length, StringCompression.Decompress(type, compressed, decoded));
        Assert.True(decoded.AsSpan().SequenceEqual(value));
    }
}
