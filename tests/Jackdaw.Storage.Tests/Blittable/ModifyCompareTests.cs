using System.Buffers;
using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

public class ModifyCompareTests
{
    [Theory]
    [InlineData(BlittableMode.Memory)]
    [InlineData(BlittableMode.Disk)]
    public void ModifyStampsMetadataKeepingOrderAndAppendingNewProperties(BlittableMode mode)
    {
        using var context = new JsonOperationContext();
        var original = context.Parse("{\"Name\":\"Ada Lovelace wrote the first program\",\"Age\":36,\"@metadata\":{\"@collection\":\"Users\"}}"u8, mode);
        var patch = new BlittablePatch();
        patch.Object("@metadata")
            .Set("@id", "users/1")
            .Set("@change-vector", "A:1-abc")
            .Set("@last-modified", "2026-11-23T10:00:00.0000000Z");
        patch.Set("Age", 37L);
        var modified = context.Modify(original.Span, patch, mode);
        Assert.Equal(
            "{\"Name\":\"Ada Lovelace wrote the first program\",\"Age\":37,\"@metadata\":{\"@collection\":\"Users\",\"@id\":\"users/1\",\"@change-vector\":\"A:1-abc\",\"@last-modified\":\"2026-11-23T10:00:00.0000000Z\"}}",
            TestSupport.ToJson(modified.Span));
        Assert.True(modified.Root.TryGet("@metadata", out var metadata));
        Assert.True(metadata.GetObject().TryGet("@id", out var id));
        Assert.Equal("users/1", id.GetString());
    }

    [Fact]
    public void ModifyCreatesMissingObjectsRemovesAndSetsEveryKind()
    {
        using var context = new JsonOperationContext();
        var original = context.Parse("{\"a\":1,\"b\":\"x\",\"c\":[1,2],\"d\":5,\"n\":{\"keep\":true,\"drop\":0}}"u8, BlittableMode.Disk);
        var patch = new BlittablePatch()
            .Remove("a")
            .Set("b", true)
            .SetNull("c")
            .Set("d", 1.5)
            .Set("e", 12.50m)
            .SetRawJson("f", "{\"x\":[1,{\"y\":\"z\"}]}"u8)
            .Set("g", "line\nbreak \"quoted\"");
        patch.Object("n").Remove("drop").Object("deep").Set("k", -7L);
        patch.Object("new").Set("v", false);
        var other = context.Parse("{\"inner\":\"doc\"}"u8, BlittableMode.Memory);
        patch.SetDocument("h", other.Span);
        var modified = context.Modify(original.Span, patch, BlittableMode.Disk);
        Assert.Equal(
            "{\"b\":true,\"c\":null,\"d\":1.5,\"n\":{\"keep\":true,\"deep\":{\"k\":-7}},\"e\":12.50,\"f\":{\"x\":[1,{\"y\":\"z\"}]},\"g\":\"line\\nbreak \\\"quoted\\\"\",\"new\":{\"v\":false},\"h\":{\"inner\":\"doc\"}}",
            TestSupport.ToJson(modified.Span));
    }

    [Fact]
    public void ModifyRejectsInvalidRawJson()
    {
        using var context = new JsonOperationContext();
        var original = context.Parse("{\"a\":1}"u8, BlittableMode.Memory);
        Assert.Throws<BlittableParseException>(() => context.Modify(original.Span, new BlittablePatch().SetRawJson("x", "{\"a\":"u8), BlittableMode.Memory));
        Assert.Throws<BlittableParseException>(() => context.Modify(original.Span, new BlittablePatch().SetRawJson("x", "1 2"u8), BlittableMode.Memory));
        var surrogate = Assert.Throws<BlittableParseException>(() => context.Modify(original.Span, new BlittablePatch().SetRawJson("x", "\"\\ud800\""u8), BlittableMode.Memory));
        Assert.Equal(BlittableParseError.InvalidUtf8, surrogate.Error);
        var multiLine = Assert.Throws<BlittableParseException>(() => context.Modify(original.Span, new BlittablePatch().SetRawJson("x", "{\n  \"b\":\n  1x\n}"u8), BlittableMode.Memory));
        Assert.Equal(BlittableParseError.InvalidJson, multiLine.Error);
        Assert.Equal(12, multiLine.Position);
        Assert.Equal("{\"a\":1}", TestSupport.ToJson(context.Parse("{\"a\":1}"u8, BlittableMode.Memory).Span));
    }

    [Fact]
    public void ModifyWithAnEmptyPatchRebuildsAnEqualDocumentForEveryCorpusSample()
    {
        using var context = new JsonOperationContext();
        var empty = new BlittablePatch();
        foreach (var file in Corpus.Files)
        {
            var lines = Corpus.Load(file);
            for (var i = 0; i < lines.Length; i += 211)
            {
                var disk = context.Parse(lines[i], BlittableMode.Disk);
                var memory = context.Parse(lines[i], BlittableMode.Memory);
                Assert.True(BlittableComparer.Equals(disk.Span, memory.Span));
                var rebuilt = context.Modify(disk.Span, empty, BlittableMode.Disk);
                Assert.True(rebuilt.Span.SequenceEqual(disk.Span));
                var toMemory = context.Modify(disk.Span, empty, BlittableMode.Memory);
                Assert.True(toMemory.Span.SequenceEqual(memory.Span));
                context.Reset();
            }
        }
    }

    [Fact]
    public void CompareTakesTheSameTextCompressedToOtherBytesAsEqual()
    {
        // A stored string compressed by another version of a coder (here LZ4 at its highest level
        // instead of the fastest) is other bytes for the same text: no change.
        var text = string.Concat(Enumerable.Range(0, 200).Select(i => $"row {i % 17} of the report; "));
        var utf8 = Encoding.UTF8.GetBytes(text);
        using var context = new JsonOperationContext();
        var stored = context.Parse(TestSupport.Utf8("{\"s\":\"" + text + "\"}"), BlittableMode.Disk);
        Assert.True(stored.Root.TryGet("s", out var value));
        Assert.Equal(BlittableType.StringLz4, value.StoredType);

        var payload = new byte[K4os.Compression.LZ4.LZ4Codec.MaximumOutputSize(utf8.Length)];
        var written = K4os.Compression.LZ4.LZ4Codec.Encode(utf8, payload, K4os.Compression.LZ4.LZ4Level.L12_MAX);
        var encoded = new byte[10 + written];
        var end = BlittableFormat.WriteVarInt(encoded, 0, (uint)written << 1);
        end = BlittableFormat.WriteVarInt(encoded, end, (uint)utf8.Length);
        payload.AsSpan(0, written).CopyTo(encoded.AsSpan(end));
        var builder = context.StartParse(BlittableMode.Disk);
        builder.BeginObject(0);
        builder.PropertyName("s"u8, mayNeedEscapes: false, 0);
        builder.WriteEncodedString(BlittableType.StringLz4, encoded.AsSpan(0, end + written));
        builder.EndObject();
        var recompressed = builder.CompleteBuilt();

        Assert.False(stored.Span.SequenceEqual(recompressed.Span));
        Assert.Equal(TestSupport.ToJson(stored.Span), TestSupport.ToJson(recompressed.Span));
        Assert.True(BlittableComparer.Equals(stored.Span, recompressed.Span));
        var other = context.Parse(TestSupport.Utf8("{\"s\":\"" + text.Replace("row 5 ", "row 6 ") + "\"}"), BlittableMode.Disk);
        Assert.False(BlittableComparer.Equals(other.Span, recompressed.Span));
    }

    [Fact]
    public void CompareFindsEveryDifference()
    {
        using var context = new JsonOperationContext();
        var baseJson = "{\"a\":1,\"b\":\"text that is long enough to be compressed in disk mode\",\"c\":[1,{\"d\":null}],\"e\":1.5}";
        string[] different =
        [
            "{\"a\":2,\"b\":\"text that is long enough to be compressed in disk mode\",\"c\":[1,{\"d\":null}],\"e\":1.5}",
            "{\"a\":1,\"b\":\"text that is long enough to be compressed in disk modE\",\"c\":[1,{\"d\":null}],\"e\":1.5}",
            "{\"a\":1,\"b\":\"text that is long enough to be compressed in disk mode\",\"c\":[1,{\"d\":false}],\"e\":1.5}",
            "{\"a\":1,\"b\":\"text that is long enough to be compressed in disk mode\",\"c\":[1,{\"d\":null},2],\"e\":1.5}",
            "{\"a\":1,\"b\":\"text that is long enough to be compressed in disk mode\",\"c\":[1,{\"d\":null}],\"e\":1.50}",
            "{\"b\":\"text that is long enough to be compressed in disk mode\",\"a\":1,\"c\":[1,{\"d\":null}],\"e\":1.5}",
            "{\"a\":1,\"b\":\"text that is long enough to be compressed in disk mode\",\"c\":[1,{\"d\":null}]}",
            "{\"a\":\"1\",\"b\":\"text that is long enough to be compressed in disk mode\",\"c\":[1,{\"d\":null}],\"e\":1.5}",
        ];
        foreach (var modeA in new[] { BlittableMode.Memory, BlittableMode.Disk })
        {
            foreach (var modeB in new[] { BlittableMode.Memory, BlittableMode.Disk })
            {
                var a = context.Parse(Encoding.UTF8.GetBytes(baseJson), modeA);
                Assert.True(BlittableComparer.Equals(a.Span, context.Parse(Encoding.UTF8.GetBytes(baseJson), modeB).Span));
                foreach (var json in different)
                {
                    var b = context.Parse(Encoding.UTF8.GetBytes(json), modeB);
                    Assert.False(BlittableComparer.Equals(a.Span, b.Span), json);
                    Assert.False(BlittableComparer.Equals(b.Span, a.Span), json);
                }
            }
        }
    }

    [Fact]
    public void BuildingReadingAndWritingAllocateNothingAfterWarmUp()
    {
        var lines = Corpus.Load("users");
        using var context = new JsonOperationContext();
        var output = new ArrayBufferWriter<byte>(1 << 16);
        var id = new BlittablePropertyName("@id");
        var metadata = new BlittablePropertyName("@metadata");
        var patch = new BlittablePatch();
        patch.Object("@metadata").Set("@change-vector", "A:1");

        void Run(int count)
        {
            for (var i = 0; i < count; i++)
            {
                var memory = context.Parse(lines[i], BlittableMode.Memory);
                var disk = context.Parse(lines[i], BlittableMode.Disk);
                var builder = context.StartParse(BlittableMode.Disk);
                builder.Feed(new ReadOnlySequence<byte>(lines[i]), isFinalBlock: true);
                var streamed = builder.Complete();
                output.ResetWrittenCount();
                disk.WriteJsonTo(output);
                memory.WriteJsonTo(output);
                var root = BlittableReader.Open(streamed.Span);
                root.TryGet(ref metadata, out var meta);
                meta.GetObject().TryGet(ref id, out _);
                BlittableComparer.Equals(disk.Span, streamed.Span);
                patch.Clear();
                patch.Object("@metadata").Set("@change-vector", "A:1").Set("@last-modified", "2026-11-23T10:00:00.0000000Z").Set("@flags", 3L);
                context.Modify(disk.Span, patch, BlittableMode.Disk);
                if ((i & 31) == 31)
                {
                    context.Reset();
                }
            }

            context.Reset();
        }

        Run(2000);
        var before = GC.GetAllocatedBytesForCurrentThread();
        Run(2000);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(allocated < 2000, $"{allocated} bytes allocated for 2000 documents");
    }
}
