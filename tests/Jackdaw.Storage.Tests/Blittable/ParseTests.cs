using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

public class ParseTests
{
    [Theory]
    [InlineData("{}")]
    [InlineData("{\"a\":{}}")]
    [InlineData("{\"a\":[]}")]
    [InlineData("{\"a\":\"\"}")]
    [InlineData("{\"\":1}")]
    [InlineData("{\"a\":[{\"b\":[{\"c\":[1,2,{}]}]},[],[[]]]}")]
    [InlineData("{\"a\":9223372036854775807,\"b\":-9223372036854775808,\"c\":9223372036854775808,\"d\":-0,\"e\":0}")]
    [InlineData("{\"a\":1.7976931348623157e308,\"b\":-1.7976931348623157E+308,\"c\":5e-324,\"d\":0.1,\"e\":1.0,\"f\":1e2}")]
    [InlineData("{\"a\":true,\"b\":false,\"c\":null}")]
    [InlineData("{\"s\":\"😀 surrogate pair and 中文 and עברית\"}")]
    [InlineData("{\"quote\\\"d\":\"back\\\\slash \\\"quoted\\\"\"}")]
    public void CanonicalJsonRoundTripsExactlyInBothModes(string json)
    {
        Assert.Equal(json, TestSupport.RoundTrip(json, BlittableMode.Memory));
        Assert.Equal(json, TestSupport.RoundTrip(json, BlittableMode.Disk));
    }

    [Fact]
    public void EveryControlCharacterIsEscapedLikeJsonStringify()
    {
        var text = new StringBuilder();
        for (var c = 0; c < 0x20; c++)
        {
            text.Append((char)c).Append('x');
        }

        text.Append("\"\\/");
        var json = System.Text.Json.JsonSerializer.Serialize(new Dictionary<string, string> { ["k\n"] = text.ToString() });
        var expected = new StringBuilder("{\"k\\n\":\"");
        for (var c = 0; c < 0x20; c++)
        {
            expected.Append(c switch
            {
                '\b' => "\\b",
                '\f' => "\\f",
                '\n' => "\\n",
                '\r' => "\\r",
                '\t' => "\\t",
                _ => $"\\u{c:x4}",
            }).Append('x');
        }

        expected.Append("\\\"\\\\/\"}");
        Assert.Equal(expected.ToString(), TestSupport.RoundTrip(json));
        Assert.Equal(expected.ToString(), TestSupport.RoundTrip(json, BlittableMode.Disk));
    }

    [Fact]
    public void StringsAndNamesOfEveryLengthRoundTripWhereverTheyEnd()
    {
        // Covers the short-string (32 and 64 byte) and escaped-string paths of the parser, with the
        // string at the end of the input (no room to read past it) and followed by more input, and
        // escaped strings whose unescaped length needs a shorter length header than the escaped one.
        using var context = new JsonOperationContext();
        foreach (var length in Enumerable.Range(0, 140))
        {
            var plain = new string('a', length);
            var accented = length == 0 ? "" : "é" + new string('b', length - 1);
            var withNewline = length == 0 ? "\\n" : new string('c', length - 1) + "\\n";
            var decodedEscape = new string('d', length) + "\\u0041";
            foreach (var (text, expected) in new[] { (plain, plain), (accented, accented), (withNewline, withNewline), (decodedEscape, new string('d', length) + "A") })
            {
                foreach (var json in new[] { $"{{\"k\":\"{text}\"}}", $"{{\"{text}\":1,\"s\":\"{text}\",\"padding\":\"{new string('p', 80)}\"}}" })
                {
                    var canonical = text == expected ? json : json.Replace(text, expected);
                    foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
                    {
                        Assert.Equal(canonical, TestSupport.ToJson(context.Parse(TestSupport.Utf8(json), mode).Span));
                        var streamed = TestSupport.ParseStreaming(context, TestSupport.Utf8(json), mode, new Random(length), 7);
                        Assert.Equal(canonical, TestSupport.ToJson(streamed.Span));
                    }

                    context.Reset();
                }
            }
        }
    }

    [Fact]
    public void InvalidUtf8IsFoundInStringsOfEveryLength()
    {
        using var context = new JsonOperationContext();
        foreach (var length in Enumerable.Range(1, 100))
        {
            foreach (var escaped in new[] { false, true })
            {
                // {"k":"aaa<0xC3 0x28>aaa\n"} with the bad pair at a different place each time.
                var at = length / 2;
                var value = new List<byte>(TestSupport.Utf8(new string('a', length)));
                value[at] = 0xC3;
                if (at + 1 < value.Count)
                {
                    value[at + 1] = 0x28;
                }

                if (escaped)
                {
                    value.AddRange("\\n"u8.ToArray());
                }

                var json = new List<byte>(TestSupport.Utf8("{\"k\":\""));
                json.AddRange(value);
                json.AddRange(TestSupport.Utf8("\",\"padding\":\"" + new string('p', 80) + "\"}"));
                foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
                {
                    var e = Assert.Throws<BlittableParseException>(() => context.Parse(json.ToArray(), mode));
                    Assert.Equal(BlittableParseError.InvalidUtf8, e.Error);
                    Assert.Equal(6 + at, e.Position);
                }
            }
        }
    }

    [Fact]
    public void EscapesAreNormalizedAndUnicodeEscapesDecoded()
    {
        Assert.Equal("{\"a\":\"/é😀\\u001f\"}", TestSupport.RoundTrip("{\"a\":\"\\/\\u00e9\\ud83d\\ude00\\u001F\"}"));
    }

    [Fact]
    public void WhitespaceIsDroppedAndPropertyOrderKept()
    {
        Assert.Equal("{\"z\":1,\"a\":[1,2],\"m\":{\"y\":null,\"b\":true}}", TestSupport.RoundTrip(" {\n \"z\" : 1 ,\t\"a\":[ 1 , 2 ],\r\n\"m\":{\"y\":null,\"b\":true} } \n"));
    }

    [Theory]
    [InlineData("{\"a\":1,\"a\":2}", BlittableParseError.DuplicateProperty, 7)]
    [InlineData("{\"x\":{\"b\":1,\"c\":2,\"b\":3}}", BlittableParseError.DuplicateProperty, 18)]
    [InlineData("[1]", BlittableParseError.NotAnObject, 0)]
    [InlineData("  \"x\"", BlittableParseError.NotAnObject, 2)]
    [InlineData("123", BlittableParseError.NotAnObject, 0)]
    [InlineData("null", BlittableParseError.NotAnObject, 0)]
    [InlineData("{\"a\":1} x", BlittableParseError.TrailingData, 8)]
    [InlineData("{\"a\":1}{}", BlittableParseError.TrailingData, 7)]
    [InlineData("{\"a\":", BlittableParseError.Truncated, 5)]
    [InlineData("", BlittableParseError.Truncated, 0)]
    [InlineData("   ", BlittableParseError.Truncated, 3)]
    [InlineData("{\"a\":\"abc", BlittableParseError.Truncated, 9)]
    [InlineData("{\"a\":tru}", BlittableParseError.InvalidJson, 8)]
    [InlineData("{\"a\":1,}", BlittableParseError.InvalidJson, 7)]
    [InlineData("{'a':1}", BlittableParseError.InvalidJson, 1)]
    [InlineData("{\"a\":\"\\ud800\"}", BlittableParseError.InvalidUtf8, 5)]
    public void BadInputGivesTypedErrorWithPosition(string json, BlittableParseError error, long position)
    {
        using var context = new JsonOperationContext();
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var e = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Utf8(json), mode));
            Assert.Equal(error, e.Error);
            Assert.Equal(position, e.Position);

            var streamed = Assert.Throws<BlittableParseException>(() => TestSupport.ParseStreaming(context, TestSupport.Utf8(json), mode, new Random(1), 3));
            Assert.Equal(error, streamed.Error);
        }

        // The context stays usable after an error.
        Assert.Equal("{\"ok\":1}", TestSupport.ToJson(context.Parse("{\"ok\":1}"u8, BlittableMode.Memory).Span));
    }

    [Theory]
    [InlineData("{\n  \"a\": 1,\n  \"b\": 1x\n}", BlittableParseError.InvalidJson)]
    [InlineData("{\r\n  \"a\": [1,\r\n    2,,3]\r\n}", BlittableParseError.InvalidJson)]
    [InlineData("{\n\"a\":1,\n\n\"b\":{\n\"c\":'x'}}", BlittableParseError.InvalidJson)]
    [InlineData("{\n  \"a\": 1,\n  \"a\": 2\n}", BlittableParseError.DuplicateProperty)]
    [InlineData("{\n  \"a\": {\n    \"b\":\n", BlittableParseError.Truncated)]
    [InlineData("{\n  \"a\": 1\n}\n\n  x", BlittableParseError.TrailingData)]
    [InlineData("{\n  \"a\":\n 1\n}\n}", BlittableParseError.TrailingData)]
    public void ErrorPositionsInMultiLineInputAreByteOffsets(string json, BlittableParseError error)
    {
        // The reader reports (line, byte in line); the position must be the offset in the input, the
        // same as for the text with its line breaks turned into spaces (one line, same offsets).
        // (No literal: when segments split one, the reader's own byte in line for a later error on
        // that line varies with the split; see storage/Blittable/README.md.)
        using var context = new JsonOperationContext();
        var oneLine = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Utf8(json.Replace('\n', ' ')), BlittableMode.Memory));
        Assert.Equal(error, oneLine.Error);
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var e = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Utf8(json), mode));
            Assert.Equal(error, e.Error);
            Assert.Equal(oneLine.Position, e.Position);
            for (var seed = 0; seed < 20; seed++)
            {
                var streamed = Assert.Throws<BlittableParseException>(() => TestSupport.ParseStreaming(context, TestSupport.Utf8(json), mode, new Random(seed), 1 + (seed % 6)));
                Assert.Equal(error, streamed.Error);
                Assert.Equal(oneLine.Position, streamed.Position);
            }
        }
    }

    [Theory]
    [InlineData("{\n  \"a\": [1,\n    2,,3]\n}", 3, 7, true)]
    [InlineData("{\n\"a\":1,\n\n\"b\":{\n\"c\":'x'}}", 5, 5, true)]
    [InlineData("{\n  \"a\": {\n    \"b\":\n", 4, 1, true)]
    [InlineData("{\"é\": 1, \"b\": }", 1, 16, true)]
    [InlineData("{\n  \"a\": 1,\n  \"a\": 2\n}", 3, 3, false)]
    [InlineData("{\n  \"a\": 1\n}\n\n  x", 5, 3, false)]
    public void AnErrorIsLocatedByItsLineAndColumnWholeOrStreamed(string json, long line, long column, bool streamedInItsFeed)
    {
        // Both 1-based; the column counts bytes of UTF-8 ('é' is two), as the position does. A
        // streamed parse locates an error found in the data of the Feed that finds it; one found
        // later (a duplicate name when its object closes, data after the root in a later Feed) keeps
        // only its byte position (lines are not counted over what no error needs).
        using var context = new JsonOperationContext();
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var e = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Utf8(json), mode));
            Assert.Equal((line, column), (e.Line, e.Column));
            Assert.Contains($"(line {line}, column {column};", e.Message, StringComparison.Ordinal);
            for (var seed = 0; seed < 20; seed++)
            {
                var streamed = Assert.Throws<BlittableParseException>(() => TestSupport.ParseStreaming(context, TestSupport.Utf8(json), mode, new Random(seed), 1 + (seed % 6)));
                Assert.Equal(e.Position, streamed.Position);
                if (streamedInItsFeed || streamed.Line != 0)
                {
                    Assert.Equal((line, column), (streamed.Line, streamed.Column));
                }
            }
        }
    }

    [Fact]
    public void AReaderErrorSaysWhatIsWrongWithoutTheReadersOwnCountsOrOptions()
    {
        using var context = new JsonOperationContext();
        var e = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Utf8("{\"a\": [1,],}"), BlittableMode.Disk));
        Assert.Equal("The JSON array contains a trailing comma at the end, which JSON does not allow.", e.Description);
        Assert.DoesNotContain("LineNumber", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("reader options", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ADuplicateInALargeObjectIsReportedAtItsEarliestSecondOccurrence()
    {
        // Above 24 properties the sort is not stable: equal names may come out in any order.
        foreach (var (copies, other) in new[] { ((int[])[5, 20, 35], (int[])[30, 38]), ([3, 33, 36], [10, 12]), ([1, 2, 39], [0, 25]) })
        {
            var json = new StringBuilder("{");
            var offsets = new long[40];
            for (var i = 0; i < 40; i++)
            {
                json.Append(i == 0 ? "" : ",");
                offsets[i] = json.Length;
                var name = copies.Contains(i) ? "z" : other.Contains(i) ? "b" : "p" + i;
                json.Append('"').Append(name).Append("\":").Append(i);
            }

            json.Append('}');
            var expected = offsets[Math.Min(copies[1], other[1])];
            using var context = new JsonOperationContext();
            var e = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Utf8(json.ToString()), BlittableMode.Memory));
            Assert.Equal(BlittableParseError.DuplicateProperty, e.Error);
            Assert.Equal(expected, e.Position);
        }
    }

    [Fact]
    public void ALiteralCutByAnEmptyLastSegmentIsAParseError()
    {
        // Utf8JsonReader itself throws IndexOutOfRangeException on this segmentation.
        using var context = new JsonOperationContext();
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var whole = Assert.Throws<BlittableParseException>(() => context.Parse("{\"a\":t"u8, mode));
            var cut = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Sequence("{\"a\":t"u8.ToArray(), []), mode));
            Assert.Equal(whole.Error, cut.Error);
            Assert.Equal(whole.Position, cut.Position);
            Assert.Equal("{\"a\":true}", TestSupport.ToJson(context.Parse(TestSupport.Sequence("{\"a\":tr"u8.ToArray(), [], "ue}"u8.ToArray()), mode).Span));
        }
    }

    [Fact]
    public void InvalidUtf8InAStringIsRejectedWithItsPosition()
    {
        using var context = new JsonOperationContext();
        byte[] json = [(byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'"', (byte)'x', 0xC3, 0x28, (byte)'"', (byte)'}'];
        var e = Assert.Throws<BlittableParseException>(() => context.Parse(json, BlittableMode.Memory));
        Assert.Equal(BlittableParseError.InvalidUtf8, e.Error);
        Assert.Equal(7, e.Position);
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            for (var seed = 0; seed < 20; seed++)
            {
                var streamed = Assert.Throws<BlittableParseException>(() => TestSupport.ParseStreaming(context, json, mode, new Random(seed), 1 + (seed % 5)));
                Assert.Equal(BlittableParseError.InvalidUtf8, streamed.Error);
                Assert.Equal(7, streamed.Position);
            }
        }

        // A lone surrogate escape, with a character split by the end of the data fed after it: the
        // error is the surrogate, at its string, not the split character.
        var surrogate = Encoding.UTF8.GetBytes("{\"a\":\"\\uD800\",\"b\":\"été\"}");
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var builder = context.StartParse(mode);
            var lone = Assert.Throws<BlittableParseException>(() => builder.Feed(new System.Buffers.ReadOnlySequence<byte>(surrogate, 0, 20), isFinalBlock: false));
            Assert.Equal(BlittableParseError.InvalidUtf8, lone.Error);
            Assert.Equal(5, lone.Position);
            Assert.Contains("surrogate", lone.Message, StringComparison.Ordinal);
        }

        // In a name too.
        byte[] name = [(byte)'{', (byte)'"', (byte)'a', 0xE2, 0x82, (byte)'"', (byte)':', (byte)'1', (byte)'}'];
        Assert.Equal(3, Assert.Throws<BlittableParseException>(() => context.Parse(name, BlittableMode.Memory)).Position);
        Assert.Equal(3, Assert.Throws<BlittableParseException>(() => TestSupport.ParseStreaming(context, name, BlittableMode.Memory, new Random(3), 2)).Position);
    }

    [Theory]
    [InlineData(new byte[] { (byte)'{', (byte)'}', (byte)' ', 0xFF }, 3)]
    [InlineData(new byte[] { (byte)'[', 0xFF, (byte)']' }, 1)]
    [InlineData(new byte[] { (byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'t', 0xFF, (byte)'}' }, 6)]
    [InlineData(new byte[] { (byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'1', (byte)',', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'2', (byte)'}', 0xC3 }, 13)]
    [InlineData(new byte[] { (byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'"', (byte)'\\', (byte)'u', (byte)'d', (byte)'8', (byte)'0', (byte)'0', (byte)'"', (byte)',', (byte)'"', (byte)'b', (byte)'"', (byte)':', (byte)'"', 0xFF, (byte)'"', (byte)'}' }, 19)]
    public void InvalidUtf8OutsideStringsWinsWhenStreamedAsWhenWhole(byte[] json, int position)
    {
        // After the root, instead of a value, in a malformed literal, cut short after a duplicate, or
        // after an escaped lone surrogate: a whole parse reports the invalid byte before any other
        // error, and so does a streamed one once the byte has been fed.
        using var context = new JsonOperationContext();
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var whole = Assert.Throws<BlittableParseException>(() => context.Parse(json, mode));
            Assert.Equal((BlittableParseError.InvalidUtf8, position), (whole.Error, whole.Position));
            for (var seed = 0; seed < 8; seed++)
            {
                // All of it in one final call, in segments (so not the one-span path).
                var random = new Random(seed);
                var builder = context.StartParse(mode);
                var sequence = TestSupport.Segmented(json, () => random.Next(1, 3));
                var streamed = Assert.Throws<BlittableParseException>(() => builder.Feed(sequence, isFinalBlock: true));
                Assert.Equal((BlittableParseError.InvalidUtf8, position), (streamed.Error, streamed.Position));
            }
        }

        // Fed in pieces, the bytes after the root come in a later call than the root's end: still
        // the invalid byte, not TrailingData.
        var trailing = json[^1] == 0xFF && json[0] == (byte)'{' && json[1] == (byte)'}';
        if (trailing)
        {
            for (var seed = 0; seed < 8; seed++)
            {
                var pieces = Assert.Throws<BlittableParseException>(() => TestSupport.ParseStreaming(context, json, BlittableMode.Memory, new Random(seed), 2));
                Assert.Equal((BlittableParseError.InvalidUtf8, position), (pieces.Error, pieces.Position));
            }
        }
    }

    [Fact]
    public void ACharacterCutByTheEndOfDataThatIsNotFinalIsNotInvalid()
    {
        // "é" split across two calls, with an error (a duplicate) found in the first: the duplicate is
        // reported, since the cut character is not invalid UTF-8.
        using var context = new JsonOperationContext();
        var json = Encoding.UTF8.GetBytes("{\"a\":{\"b\":1,\"b\":2},\"c\":\"é\"}");
        var cut = Array.IndexOf(json, (byte)0xC3) + 1;
        var builder = context.StartParse(BlittableMode.Memory);
        var e = Assert.Throws<BlittableParseException>(() => builder.Feed(new System.Buffers.ReadOnlySequence<byte>(json, 0, cut), isFinalBlock: false));
        Assert.Equal(BlittableParseError.DuplicateProperty, e.Error);
    }

    [Fact]
    public void NestingUpToTheLimitIsAcceptedAndOneMoreIsTooDeep()
    {
        static string Nested(int depth) => "{\"a\":" + new string('[', depth - 1) + new string(']', depth - 1) + "}";
        Assert.Equal(Nested(256), TestSupport.RoundTrip(Nested(256)));
        using var context = new JsonOperationContext();
        var e = Assert.Throws<BlittableParseException>(() => context.Parse(TestSupport.Utf8(Nested(257)), BlittableMode.Memory));
        Assert.Equal(BlittableParseError.TooDeep, e.Error);
        Assert.Equal(5 + 255, e.Position);
    }

    [Fact]
    public void HostileDeepInputIsRejectedWithoutStackOverflow()
    {
        using var context = new JsonOperationContext();
        var json = TestSupport.Utf8("{\"a\":" + new string('[', 1_000_000));
        var e = Assert.Throws<BlittableParseException>(() => context.Parse(json, BlittableMode.Disk));
        Assert.Equal(BlittableParseError.TooDeep, e.Error);
        var objects = TestSupport.Utf8(string.Concat(Enumerable.Repeat("{\"a\":", 100_000)));
        Assert.Equal(BlittableParseError.TooDeep, Assert.Throws<BlittableParseException>(() => context.Parse(objects, BlittableMode.Memory)).Error);
    }

    [Fact]
    public void ManyDistinctLongNamesSharingTheirEndsParseQuickly()
    {
        // Names that agree in their first and last 8 bytes must not collide en masse in the name table.
        var json = new StringBuilder("{");
        for (var i = 0; i < 50_000; i++)
        {
            json.Append(i == 0 ? "" : ",").Append("\"aaaaaaaa").Append(i.ToString("x8")).Append("zzzzzzzz\":").Append(i);
        }

        json.Append('}');
        using var context = new JsonOperationContext();
        var started = System.Diagnostics.Stopwatch.StartNew();
        var doc = context.Parse(TestSupport.Utf8(json.ToString()), BlittableMode.Memory);
        Assert.Equal(50_000, doc.Root.Count);
        Assert.True(doc.Root.TryGet("aaaaaaaa0000abcdzzzzzzzz", out var value));
        Assert.True(value.TryGetInt64(out var n));
        Assert.Equal(0xabcd, n);
        Assert.True(started.Elapsed < TimeSpan.FromSeconds(10));
        Assert.Equal(json.ToString(), TestSupport.ToJson(doc.Span));
    }

    [Fact]
    public void CraftedShortNamesDoNotShareNameTableSlots()
    {
        // 16-byte names that differ only in the top bits of their two 8-byte halves: an unseeded
        // multiply-and-fold hash put all of these in one slot, so a 2 MB body of them cost about
        // 1e10 probes to parse.
        var names = CraftedSixteenByteNames(100_000);
        var slots = new HashSet<uint>();
        foreach (var name in names)
        {
            slots.Add(NameTable.HashOf(name) & ((1u << 18) - 1));
        }

        // Random hashes fill about 83,000 of the 262,144 slots.
        Assert.True(slots.Count > 75_000, $"{slots.Count} distinct slots");

        var json = new StringBuilder("{");
        for (var i = 0; i < names.Count; i++)
        {
            json.Append(i == 0 ? "\"" : ",\"").Append(Encoding.ASCII.GetString(names[i])).Append("\":").Append(i);
        }

        json.Append('}');
        using var context = new JsonOperationContext();
        var doc = context.Parse(TestSupport.Utf8(json.ToString()), BlittableMode.Memory);
        Assert.Equal(names.Count, doc.Root.Count);
        Assert.True(doc.Root.TryGet(Encoding.ASCII.GetString(names[^1]), out var last));
        Assert.True(last.TryGetInt64(out var n));
        Assert.Equal(names.Count - 1, n);
    }

    private static List<byte[]> CraftedSixteenByteNames(int count)
    {
        var printable = Enumerable.Range(0x20, 0x5f).Where(c => c is not '"' and not '\\').ToArray();
        var names = new List<byte[]>(count);
        foreach (var x6 in printable.Where(c => (c & 3) == ('a' & 3)))
        {
            foreach (var x7 in printable)
            {
                foreach (var y6 in printable.Where(c => (c & 7) == ('a' & 7)))
                {
                    foreach (var y7 in printable)
                    {
                        names.Add([.. "abcdef"u8, (byte)x6, (byte)x7, .. "ghijkl"u8, (byte)y6, (byte)y7]);
                        if (names.Count == count)
                        {
                            return names;
                        }
                    }
                }
            }
        }

        return names;
    }

    [Fact]
    public void EveryTruncatedPrefixOfADocumentIsTruncated()
    {
        var line = Corpus.Load("companies")[0];
        using var context = new JsonOperationContext();
        for (var length = 0; length < line.Length; length++)
        {
            var e = Assert.Throws<BlittableParseException>(() => context.Parse(line.AsSpan(0, length), BlittableMode.Disk));
            Assert.True(e.Error == BlittableParseError.Truncated, $"prefix {length}: {e.Error} {e.Message}");
        }
    }

    [Fact]
    public void StreamingInSmallChunksBuildsTheSameBytesAsAWholeParse()
    {
        var random = new Random(42);
        foreach (var file in Corpus.Files)
        {
            var lines = Corpus.Load(file);
            using var whole = new JsonOperationContext();
            using var streaming = new JsonOperationContext();
            for (var i = 0; i < lines.Length; i += 97)
            {
                foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
                {
                    var expected = whole.Parse(lines[i], mode);
                    var actual = TestSupport.ParseStreaming(streaming, lines[i], mode, random, random.Next(1, 300));
                    Assert.True(expected.Span.SequenceEqual(actual.Span), $"{file}:{i + 1} {mode}");
                    var sequence = TestSupport.Segmented(lines[i], () => random.Next(1, 50));
                    Assert.True(expected.Span.SequenceEqual(streaming.Parse(sequence, mode).Span), $"{file}:{i + 1} {mode} sequence");
                }

                whole.Reset();
                streaming.Reset();
            }
        }
    }

    [Fact]
    public void EscapesSplitAtEverySegmentBoundaryBuildTheSameBytesAsAWholeParse()
    {
        // Every escape form, in a name and in values long enough for the dictionary coder and LZ4,
        // with the input cut into two and three segments at every position.
        var text = "Deduco amplus textilis\\n\\\"quoted\\\" \\\\ back\\tslash \\u00e9t\\u00E9 \\ud83d\\ude00 and\\r\\n vociferor dolorum casus. ";
        var json = Encoding.UTF8.GetBytes("{\"na\\nme\":\"" + text + "\",\"long\":\"" + string.Concat(Enumerable.Repeat(text, 4)) + "\",\"n\":[\"\\\"\",\"a\\u0001b\"]}");
        using var whole = new JsonOperationContext();
        using var split = new JsonOperationContext();
        foreach (var mode in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            var expected = whole.Parse(json, mode).ToArray();
            for (var cut = 1; cut < json.Length; cut++)
            {
                var second = Math.Min(json.Length - 1, cut + 1 + (cut % 7));
                var sizes = new Queue<int>(new[] { cut, second - cut, json.Length });
                var sequence = TestSupport.Segmented(json, () => sizes.Dequeue());
                Assert.True(expected.AsSpan().SequenceEqual(split.Parse(sequence, mode).Span), $"{mode}, cut at {cut} and {second}");
                split.Reset();
            }
        }
    }

    [Fact]
    public void FeedReturnsHowFarItConsumedSoAPipeReaderCanKeepTheRest()
    {
        using var context = new JsonOperationContext();
        var builder = context.StartParse(BlittableMode.Memory);
        var first = TestSupport.Utf8("{\"name\":\"abc");
        var consumed = builder.Feed(new System.Buffers.ReadOnlySequence<byte>(first), isFinalBlock: false);
        Assert.Equal(8, new System.Buffers.ReadOnlySequence<byte>(first).Slice(0, consumed).Length);
        var rest = TestSupport.Utf8("\"abcdef\",\"n\":1}\n");
        builder.Feed(new System.Buffers.ReadOnlySequence<byte>(rest), isFinalBlock: true);
        Assert.Equal("{\"name\":\"abcdef\",\"n\":1}", TestSupport.ToJson(builder.Complete().Span));
    }

    [Fact]
    public void AWholeBodyFedAtOnceBuildsTheSameBytesAndReportsTheSameErrors()
    {
        using var context = new JsonOperationContext();
        foreach (var line in Corpus.Load("orders").Take(50))
        {
            var expected = context.Parse(line, BlittableMode.Disk).ToArray();
            var builder = context.StartParse(BlittableMode.Disk);
            Assert.Equal(line.Length, new System.Buffers.ReadOnlySequence<byte>(line).Slice(0, builder.Feed(new System.Buffers.ReadOnlySequence<byte>(line), isFinalBlock: true)).Length);
            Assert.Equal(expected, builder.Complete().ToArray());
        }

        var bad = context.StartParse(BlittableMode.Memory);
        var e = Assert.Throws<BlittableParseException>(() => bad.Feed(new System.Buffers.ReadOnlySequence<byte>("{\"a\":1,\"a\":2}"u8.ToArray()), isFinalBlock: true));
        Assert.Equal(BlittableParseError.DuplicateProperty, e.Error);
        Assert.Equal(7, e.Position);
    }

    [Fact]
    public void LargeDocumentsSpanSeveralBuffers()
    {
        var json = new StringBuilder("{\"items\":[");
        for (var i = 0; i < 20_000; i++)
        {
            json.Append(i == 0 ? "" : ",").Append("{\"id\":").Append(i).Append(",\"text\":\"item number ").Append(i).Append(" with some text\"}");
        }

        json.Append("],\"big\":\"").Append('x', 300_000).Append("\"}");
        var text = json.ToString();
        Assert.Equal(text, TestSupport.RoundTrip(text));
        Assert.Equal(text, TestSupport.RoundTrip(text, BlittableMode.Disk));
        using var context = new JsonOperationContext();
        var streamed = TestSupport.ParseStreaming(context, TestSupport.Utf8(text), BlittableMode.Disk, new Random(3), 5000);
        Assert.Equal(text, TestSupport.ToJson(streamed.Span));
    }
}
