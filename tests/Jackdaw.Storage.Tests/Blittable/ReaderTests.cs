using System.Buffers;
using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

public class ReaderTests
{
    private static readonly byte[] Sample = Encoding.UTF8.GetBytes(
        "{\"Name\":\"Ada\",\"Age\":36,\"Score\":77.5,\"Active\":true,\"Nothing\":null,\"Tags\":[\"a\",\"b\"]," +
        "\"Lines\":[{\"Product\":\"p/1\",\"Qty\":2},{\"Product\":\"p/2\",\"Qty\":3}],\"Empty\":{},\"EmptyArray\":[],\"EmptyString\":\"\"," +
        "\"Max\":9223372036854775807,\"Min\":-9223372036854775808,\"Big\":1e308,\"Price\":12.345678901234567890,\"@metadata\":{\"@id\":\"users/1\",\"@collection\":\"Users\"}}");

    [Theory]
    [InlineData(BlittableMode.Memory)]
    [InlineData(BlittableMode.Disk)]
    public void TypedAccessorsReadEachValue(BlittableMode mode)
    {
        using var context = new JsonOperationContext();
        var root = context.Parse(Sample, mode).Root;
        Assert.Equal(15, root.Count);
        Assert.True(root.TryGet("Name", out var name));
        Assert.Equal("Ada", name.GetString());
        Assert.True(name.TryGetRawUtf8(out var raw));
        Assert.Equal("Ada"u8.ToArray(), raw.ToArray());
        Assert.True(root.TryGet("Age"u8, out var age));
        Assert.Equal(BlittableToken.Integer, age.Type);
        Assert.True(age.TryGetInt64(out var years));
        Assert.Equal(36, years);
        Assert.True(age.TryGetDouble(out var yearsDouble));
        Assert.Equal(36.0, yearsDouble);
        Assert.True(root.TryGet("Score", out var score));
        Assert.Equal(BlittableToken.Double, score.Type);
        Assert.True(score.TryGetDouble(out var scoreValue));
        Assert.Equal(77.5, scoreValue);
        Assert.False(score.TryGetInt64(out _));
        Assert.True(score.TryGetDecimal(out var scoreDecimal));
        Assert.Equal(77.5m, scoreDecimal);
        Assert.True(root.TryGet("Active", out var active));
        Assert.True(active.GetBoolean());
        Assert.True(root.TryGet("Nothing", out var nothing));
        Assert.Equal(BlittableToken.Null, nothing.Type);
        Assert.Null(nothing.GetString());
        Assert.True(root.TryGet("Max", out var max));
        Assert.True(max.TryGetInt64(out var maxValue));
        Assert.Equal(long.MaxValue, maxValue);
        Assert.True(root.TryGet("Min", out var min));
        Assert.True(min.TryGetInt64(out var minValue));
        Assert.Equal(long.MinValue, minValue);
        Assert.True(root.TryGet("Big", out var big));
        Assert.True(big.TryGetDouble(out var bigValue));
        Assert.Equal(1e308, bigValue);
        Assert.True(root.TryGet("Price", out var price));
        Assert.True(price.TryGetDecimal(out var priceValue));
        Assert.Equal(12.345678901234567890m, priceValue);
        Assert.True(root.TryGet("EmptyString", out var empty));
        Assert.Equal(string.Empty, empty.GetString());
        Assert.Equal(0, empty.GetUtf8Length());
        Assert.True(root.TryGet("Empty", out var emptyObject));
        Assert.Equal(0, emptyObject.GetObject().Count);
        Assert.False(emptyObject.GetObject().TryGet("x", out _));
        Assert.True(root.TryGet("EmptyArray", out var emptyArray));
        Assert.Equal(0, emptyArray.GetArray().Length);
        Assert.Throws<InvalidOperationException>(() => TryGetString(context, "Age"));
    }

    private static string? TryGetString(JsonOperationContext context, string name)
    {
        context.Parse(Sample, BlittableMode.Memory).Root.TryGet(name, out var value);
        return value.GetString();
    }

    [Fact]
    public void NestedArraysOfObjectsNavigate()
    {
        using var context = new JsonOperationContext();
        var root = context.Parse(Sample, BlittableMode.Disk).Root;
        Assert.True(root.TryGet("Lines", out var lines));
        var array = lines.GetArray();
        Assert.Equal(2, array.Length);
        var total = 0L;
        foreach (var line in array)
        {
            Assert.True(line.GetObject().TryGet("Qty", out var qty));
            qty.TryGetInt64(out var n);
            total += n;
        }

        Assert.Equal(5, total);
        Assert.True(array[1].GetObject().TryGet("Product", out var product));
        Assert.Equal("p/2", product.GetString());
        Assert.Throws<ArgumentOutOfRangeException>(() => ReadArray(context, 2));
        Assert.True(root.TryGet("Tags", out var tags));
        Assert.Equal("b", tags.GetArray()[1].GetString());
    }

    private static void ReadArray(JsonOperationContext context, int index)
    {
        context.Parse(Sample, BlittableMode.Memory).Root.TryGet("Lines", out var lines);
        _ = lines.GetArray()[index];
    }

    [Fact]
    public void MissingPropertiesAreNotFoundWithOrWithoutHint()
    {
        using var context = new JsonOperationContext();
        var root = context.Parse(Sample, BlittableMode.Memory).Root;
        Assert.False(root.TryGet("name", out _));
        Assert.False(root.TryGet("", out _));
        Assert.False(root.TryGet("Zzz", out _));
        Assert.False(root.TryGet("AAA", out _));
        var missing = new BlittablePropertyName("Missing");
        Assert.False(root.TryGet(ref missing, out _));
        Assert.Equal(-1, missing.Hint);
    }

    [Fact]
    public void HintIsRememberedAndReusedAcrossDocumentsOfTheSameShape()
    {
        using var context = new JsonOperationContext();
        var collection = new BlittablePropertyName("@collection");
        var metadata = new BlittablePropertyName("@metadata");
        var age = new BlittablePropertyName("Age");
        foreach (var line in Corpus.Load("users").Take(200))
        {
            var root = context.Parse(line, BlittableMode.Disk).Root;
            Assert.True(root.TryGet(ref metadata, out var meta));
            Assert.True(meta.GetObject().TryGet(ref collection, out var value));
            Assert.True(value.ValueEquals("Users"u8));
            Assert.True(root.TryGet(ref age, out var ageValue));
            Assert.Equal(BlittableToken.Integer, ageValue.Type);
        }

        Assert.Equal(5, age.Hint);
        Assert.Equal(1, collection.Hint);

        // A wrong hint (another shape) still finds the property and is corrected.
        var stale = new BlittablePropertyName("Age") { Hint = 0 };
        Assert.True(context.Parse("{\"x\":1,\"Age\":7}"u8, BlittableMode.Memory).Root.TryGet(ref stale, out var seven));
        Assert.True(seven.TryGetInt64(out var v));
        Assert.Equal(7, v);
        Assert.Equal(1, stale.Hint);
        var outOfRange = new BlittablePropertyName("Age") { Hint = 1000 };
        Assert.True(context.Parse("{\"Age\":7}"u8, BlittableMode.Memory).Root.TryGet(ref outOfRange, out _));
    }

    [Fact]
    public void EnumerationFollowsInsertionOrder()
    {
        using var context = new JsonOperationContext();
        var root = context.Parse("{\"b\":1,\"a\":2,\"c\":{\"z\":0,\"y\":1}}"u8, BlittableMode.Memory).Root;
        var names = new List<string>();
        foreach (var (name, value) in root)
        {
            names.Add(Encoding.UTF8.GetString(name));
            if (value.Type == BlittableToken.Object)
            {
                foreach (var inner in value.GetObject())
                {
                    names.Add(Encoding.UTF8.GetString(inner.Name));
                }
            }
        }

        Assert.Equal(["b", "a", "c", "z", "y"], names);
    }

    [Fact]
    public void ManyPropertiesUseWideTablesAndStillBinarySearch()
    {
        var json = new StringBuilder("{");
        for (var i = 0; i < 70_000; i++)
        {
            json.Append(i == 0 ? "" : ",").Append("\"p").Append(69_999 - i).Append("\":\"").Append('v', i % 300).Append('"');
        }

        json.Append('}');
        using var context = new JsonOperationContext();
        var doc = context.Parse(Encoding.UTF8.GetBytes(json.ToString()), BlittableMode.Memory);
        var root = doc.Root;
        Assert.Equal(70_000, root.Count);
        for (var i = 0; i < 70_000; i += 997)
        {
            Assert.True(root.TryGet("p" + i, out var value));
            Assert.Equal((69_999 - i) % 300, value.GetUtf8Length());
        }

        Assert.Equal(json.ToString(), TestSupport.ToJson(doc.Span));
    }

    [Fact]
    public void TryGetUtf8DecompressesIntoTheCallersBuffer()
    {
        using var context = new JsonOperationContext();
        var text = "Managed disintermediate implementation of the regional markets analyst";
        var root = context.Parse(Encoding.UTF8.GetBytes("{\"a\":\"" + text + "\"}"), BlittableMode.Disk).Root;
        Assert.True(root.TryGet("a", out var value));
        Assert.True(value.IsCompressed);
        Assert.Equal(text.Length, value.GetUtf8Length());
        var small = new byte[10];
        Assert.False(value.TryGetUtf8(small, out _));
        var buffer = new byte[200];
        Assert.True(value.TryGetUtf8(buffer, out var written));
        Assert.Equal(text, Encoding.UTF8.GetString(buffer, 0, written));
        Assert.True(value.ValueEquals(Encoding.UTF8.GetBytes(text)));
        Assert.False(value.ValueEquals("Managed"u8));
    }

    [Fact]
    public void NestedObjectsWriteOnTheirOwn()
    {
        using var context = new JsonOperationContext();
        var root = context.Parse(Sample, BlittableMode.Disk).Root;
        Assert.True(root.TryGet("@metadata", out var metadata));
        var output = new ArrayBufferWriter<byte>();
        BlittableJsonWriter.WriteTo(metadata.GetObject(), output);
        Assert.Equal("{\"@id\":\"users/1\",\"@collection\":\"Users\"}", Encoding.UTF8.GetString(output.WrittenSpan));
    }

    [Fact]
    public void HeaderFieldsSitAtTheirDocumentedOffsets()
    {
        using var context = new JsonOperationContext();
        var doc = context.Parse("{\"a\":1}"u8, BlittableMode.Disk);
        var span = doc.Span;
        Assert.Equal(0xB7, span[0]);
        Assert.Equal(BlittableHeader.CurrentVersion, span[1]);
        Assert.Equal(1, span[2]);
        Assert.Equal(0, span[3]);
        Assert.Equal(doc.Length, BitConverter.ToInt32(span.Slice(4)));
        var root = BitConverter.ToInt32(span.Slice(8));
        var names = BitConverter.ToInt32(span.Slice(12));
        Assert.Equal(0x40, span[root] & 0xC0);
        Assert.Equal(1, span[root + 1]);
        Assert.True(names > root && names < doc.Length);
        Assert.Equal(2, span[names]);
        Assert.Equal((byte)'a', span[names + 1]);
        Assert.True(BlittableReader.IsDiskMode(span));
        Assert.Equal(BlittableHeader.Size, System.Runtime.InteropServices.Marshal.SizeOf<BlittableHeader>());
    }

    [Fact]
    public void GarbageIsRejectedByOpenWithAFormatException()
    {
        Assert.Throws<BlittableFormatException>(() => BlittableReader.Open([]));
        Assert.Throws<BlittableFormatException>(() => BlittableReader.Open(new byte[40]));
        Assert.Throws<BlittableFormatException>(() => BlittableReader.Open("{\"a\":1} this is JSON, not blittable"u8));
        using var context = new JsonOperationContext();
        var doc = context.Parse("{\"a\":1}"u8, BlittableMode.Memory).ToArray();
        doc[1] = BlittableHeader.CurrentVersion + 1;
        Assert.Contains($"version {BlittableHeader.CurrentVersion + 1}", Assert.Throws<BlittableFormatException>(() => BlittableReader.Open(doc)).Message);
    }
}
