using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>
/// Modify copies unchanged values as whole blocks when source and target share a mode; the result
/// must be the document the value-by-value path builds.
/// </summary>
public class ModifyBlockCopyTests
{
    private static BlittablePatch Stamp(int i)
    {
        var patch = new BlittablePatch();
        patch.Object("@metadata")
            .Set("@id", $"docs/{i}")
            .Set("@change-vector", $"A:{i}-dbid")
            .Set("@last-modified", "2026-11-23T10:00:00.0000000Z");
        return patch;
    }

    private static void AssertBothPathsAgree(JsonOperationContext context, ReadOnlySpan<byte> source, BlittablePatch patch, BlittableMode mode)
    {
        var blocks = context.Modify(source, patch, mode, allowBlockCopies: true);
        var values = context.Modify(source, patch, mode, allowBlockCopies: false);
        Assert.Equal(TestSupport.ToJson(values.Span), TestSupport.ToJson(blocks.Span));
        Assert.True(BlittableComparer.Equals(values.Span, blocks.Span));
        // Every value reads back through the block-copied tables as it does in the rebuilt ones.
        using var expected = System.Text.Json.JsonDocument.Parse(TestSupport.ToJson(values.Span));
        BlittableAssert.Equal(expected.RootElement, BlittableReader.Open(blocks.Span), new byte[1 << 16], "block copy");
    }

    [Theory]
    [InlineData(BlittableMode.Disk)]
    [InlineData(BlittableMode.Memory)]
    public void StampingCorpusDocumentsGivesTheSameDocumentBothWays(BlittableMode mode)
    {
        using var context = new JsonOperationContext();
        foreach (var file in Corpus.Files)
        {
            var lines = Corpus.Load(file);
            for (var i = 0; i < lines.Length; i += 97)
            {
                var source = context.Parse(lines[i], mode);
                AssertBothPathsAgree(context, source.Span, Stamp(i), mode);

                // The block path is really taken: a fresh builder accepts the source's names area.
                var seeded = context.StartParse(mode);
                Assert.True(seeded.TrySeedNames(source.Span), $"{file} line {i}");

                // A modified document is modified again (the server stamps documents it stored).
                var once = context.Modify(source.Span, Stamp(i), mode);
                var twice = context.Modify(once.Span, Stamp(i + 1), mode);
                var expected = context.Modify(source.Span, Stamp(i + 1), mode, allowBlockCopies: false);
                Assert.Equal(TestSupport.ToJson(expected.Span), TestSupport.ToJson(twice.Span));
                context.Reset();
            }
        }
    }

    [Theory]
    [InlineData(BlittableMode.Disk)]
    [InlineData(BlittableMode.Memory)]
    public void AnEmptyPatchGivesTheSourceBytes(BlittableMode mode)
    {
        using var context = new JsonOperationContext();
        foreach (var file in Corpus.Files)
        {
            var lines = Corpus.Load(file);
            for (var i = 0; i < lines.Length; i += 389)
            {
                var source = context.Parse(lines[i], mode);
                var rebuilt = context.Modify(source.Span, new BlittablePatch(), mode);
                Assert.True(rebuilt.Span.SequenceEqual(source.Span), $"{file} line {i}");
                context.Reset();
            }
        }
    }

    [Theory]
    [InlineData("{\"n\":null,\"t\":true,\"f\":false,\"o\":{},\"a\":[],\"s\":\"\"}")]
    [InlineData("{\"o\":{\"n\":null,\"t\":true},\"a\":[null,false,[true],{}],\"x\":1}")]
    [InlineData("{\"we\\\"ird\\n\":{\"q\\\\\":\"v\\u0001\"},\"@metadata\":{\"@collection\":\"Odd\",\"keep\":[1,2.5,-3]}}")]
    [InlineData("{\"deep\":[[[[{\"a\":[[1]]}]]]],\"long\":\"the quick brown fox jumps over the lazy dog and keeps on running through the field while the farmer watches it go by, and a long text like this is compressed\"}")]
    [InlineData("{\"@metadata\":{\"@id\":\"old\",\"@change-vector\":\"A:0\"},\"after\":{\"x\":\"y\"}}")]
    public void EdgeShapesGiveTheSameDocumentBothWays(string json)
    {
        using var context = new JsonOperationContext();
        foreach (var mode in new[] { BlittableMode.Disk, BlittableMode.Memory })
        {
            var source = context.Parse(Encoding.UTF8.GetBytes(json), mode);
            AssertBothPathsAgree(context, source.Span, Stamp(7), mode);

            var nested = new BlittablePatch();
            nested.Object("o").Set("added", 1L);
            nested.Object("@metadata").Remove("keep").Set("@flags", "x");
            nested.Remove("x");
            AssertBothPathsAgree(context, source.Span, nested, mode);
        }
    }

    [Fact]
    public void AcrossModesValuesAreReEncoded()
    {
        using var context = new JsonOperationContext();
        var json = "{\"Text\":\"the quick brown fox jumps over the lazy dog and keeps on running through the field while the farmer watches it go by\",\"Name\":\"Ada\"}"u8;
        var disk = context.Parse(json, BlittableMode.Disk);
        var memory = context.Parse(json, BlittableMode.Memory);
        var toMemory = context.Modify(disk.Span, Stamp(1), BlittableMode.Memory);
        var toDisk = context.Modify(memory.Span, Stamp(1), BlittableMode.Disk);
        Assert.False(BlittableReader.IsDiskMode(toMemory.Span));
        Assert.True(BlittableReader.IsDiskMode(toDisk.Span));
        Assert.Equal(TestSupport.ToJson(toMemory.Span), TestSupport.ToJson(toDisk.Span));
        Assert.True(toDisk.Length < toMemory.Length);
    }
}
