using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Mapping;
using System.Text;
using Jackdaw.Server.Indexing;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>The values an auto-index field holds, as the path walk reads them.</summary>
public sealed class AutoIndexMapperTests
{
    private static object? Field(byte[] document, string path)
    {
        var mapper = new AutoIndexMapper(IndexDefinition.CreateAuto("Docs", [new AutoIndexField(path, FieldIndexing.Default)]));
        var output = new MapOutput();
        mapper.Map(new MapInput("docs/1", "Docs", document), null, output);
        var entry = Assert.Single(output.Entries);
        return entry.Length == 0 ? "missing" : Assert.Single(entry).Value;
    }

    private static byte[] Blittable(string json)
    {
        using var context = new JsonOperationContext();
        return context.Parse(Encoding.UTF8.GetBytes(json), BlittableMode.Disk).ToArray();
    }

    [Fact]
    public void EachKindOfValueBecomesTheFieldValueItIs()
    {
        Assert.Null(Field(Blittable("""{"A":null}"""), "A"));
        Assert.Equal(true, Field(Blittable("""{"A":true}"""), "A"));
        Assert.Equal(42.0, Field(Blittable("""{"A":42}"""), "A"));
        Assert.Equal("MiXed", Field(Blittable("""{"A":"MiXed"}"""), "A"));
        Assert.Same(AutoIndexMapper.Present, Field(Blittable("""{"A":{"B":1}}"""), "A"));
        Assert.Equal("missing", Field(Blittable("""{"A":[]}"""), "A"));
        Assert.Equal("missing", Field(Blittable("""{"B":1}"""), "A"));
        Assert.Equal(new object?[] { 1.0, "x", null, 2.0 }, Field(Blittable("""{"A":[{"B":1},{"B":"x"},{"B":null},{"C":0},[{"B":[2]}]]}"""), "A[].B"));

        // -0 is indexed as 0, so that "= 0" finds it.
        var zero = Assert.IsType<double>(Field(Blittable("""{"A":-0.0}"""), "A"));
        Assert.True(double.IsPositive(zero) && zero == 0);

        // A number that does not read as a double (a text overwritten in place: JSON never gives
        // one) is present and equal to nothing.
        var bad = Blittable("""{"A":1.5}""");
        "1x5"u8.CopyTo(bad.AsSpan(bad.AsSpan().IndexOf("\u00031.5"u8) + 1));
        Assert.Same(AutoIndexMapper.Present, Field(bad, "A"));
    }
}
