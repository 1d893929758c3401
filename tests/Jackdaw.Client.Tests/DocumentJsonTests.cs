using System.Buffers;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Tests;

public class DocumentJsonTests
{
    public sealed class Sample
    {
        public string? Id { get; set; }
    }

    [Theory]
    [InlineData("""{"Id":"a","B":1}""", """{"B":1,"@metadata":M}""")]
    [InlineData("""{"B":1,"Id":"a"}""", """{"B":1,"@metadata":M}""")]
    [InlineData("""{"A":[1,{"Id":2}],"Id":"a","B":{"Id":"n"}}""", """{"A":[1,{"Id":2}],"B":{"Id":"n"},"@metadata":M}""")]
    [InlineData("""{"Id":"a"}""", """{"@metadata":M}""")]
    [InlineData("""{"Id":null}""", """{"@metadata":M}""")]
    [InlineData("""{}""", """{"@metadata":M}""")]
    [InlineData("""{"B":"Id"}""", """{"B":"Id","@metadata":M}""")]
    public void TheTopLevelIdPropertyIsCutOutAndMetadataAppended(string entity, string expected)
    {
        var conventions = new DocumentConventions { FindClrTypeName = _ => "T" };
        conventions.Freeze();
        var type = conventions.GetEntityTypeInfo(typeof(Sample));
        var output = new ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(output))
        {
            DocumentJson.WriteDocument(writer, new ArrayBufferWriter<byte>(), Encoding.UTF8.GetBytes(entity), type, default, null, conventions.SerializerOptions);
        }

        var json = Encoding.UTF8.GetString(output.WrittenSpan);
        Assert.Equal(expected.Replace("M", """{"@collection":"Samples","Jackdaw-Clr-Type":"T"}""", StringComparison.Ordinal), json);
        using var _ = JsonDocument.Parse(json);
    }

    public static TheoryData<string, string> Pairs => new()
    {
        { "", "" },
        { "abc", "abc" },
        { "abc", "abd" },
        { "abc", "ab" },
        { "{\"A\":1}", "{\"A\":1}" },
        { "{\"A\":1}", "{\"A\":2}" },
        { "xyxy", "yxyx" },
    };

    [Theory]
    [MemberData(nameof(Pairs))]
    public void ConcatenationsCompareLikeTheWholeStringsAtEverySplit(string a, string b)
    {
        var left = Encoding.UTF8.GetBytes(a);
        var right = Encoding.UTF8.GetBytes(b);
        for (var i = 0; i <= left.Length; i++)
        {
            for (var j = 0; j <= right.Length; j++)
            {
                Assert.Equal(a == b, DocumentJson.ConcatenationsEqual(left.AsSpan(0, i), left.AsSpan(i), right.AsSpan(0, j), right.AsSpan(j)));
            }
        }
    }

    [Theory]
    [InlineData("""{"B":1,"@metadata":{"@id":"a"}}""", """{"B":1}""")]
    [InlineData("""{"@metadata":{"@id":"a"},"B":1}""", """{"B":1}""")]
    [InlineData("""{"A":0,"@metadata":{"@id":"a"},"B":1}""", """{"A":0,"B":1}""")]
    [InlineData("""{"@metadata":{}}""", """{}""")]
    [InlineData("""{"B":{"@metadata":{}},"@metadata":{}}""", """{"B":{"@metadata":{}}}""")]
    public void TheMetadataPropertyIsFoundWithOneAdjoiningComma(string document, string withoutMetadata)
    {
        var bytes = Encoding.UTF8.GetBytes(document);
        var (offset, length) = TopLevelMetadataValue(bytes);

        var range = DocumentJson.FindMetadataProperty(bytes, offset, length);

        var (start, count) = range.GetOffsetAndLength(bytes.Length);
        Assert.Equal(withoutMetadata, Encoding.UTF8.GetString([.. bytes.AsSpan(0, start), .. bytes.AsSpan(start + count)]));
    }

    [Theory]
    [InlineData("""{"B":1, "@metadata":{}}""")]
    [InlineData("""{"B":1,"@metadata" :{}}""")]
    [InlineData("""{"B":1,"\u0040metadata":{}}""")]
    [InlineData("""{"@metadata":{} ,"B":1}""")]
    public void AMetadataPropertyNotWrittenCompactlyIsNotFound(string document)
    {
        var bytes = Encoding.UTF8.GetBytes(document);
        var (offset, length) = TopLevelMetadataValue(bytes);

        Assert.Equal(0, DocumentJson.FindMetadataProperty(bytes, offset, length).GetOffsetAndLength(bytes.Length).Length);
    }

    [Theory]
    [InlineData("""{"Id":"s/1","B":1}""", """{"B":1,"@metadata":{}}""", true)]
    [InlineData("""{"B":1,"Id":"s/1"}""", """{"@metadata":{},"B":1}""", true)]
    [InlineData("""{"Id":"s/1"}""", """{"@metadata":{}}""", true)]
    [InlineData("""{"Id":"s/1","B":1}""", """{"B":2,"@metadata":{}}""", false)]
    [InlineData("""{"Id":"s/2","B":1}""", """{"B":1,"@metadata":{}}""", false)]
    [InlineData("""{"Id":null,"B":1}""", """{"B":1,"@metadata":{}}""", false)]
    [InlineData("""{"B":1}""", """{"B":1,"@metadata":{}}""", false)]
    [InlineData("""{"Id":"s/1","B":1}""", """{"B":1,"C":0,"@metadata":{}}""", false)]
    [InlineData("""{"Id":"s/1","B":1}""", """{"Id":"s/1","B":1,"@metadata":{}}""", false)]
    [InlineData("""{"Id":"s/1","B":1}""", """{"B":1, "@metadata":{}}""", false)]
    public void AnEntityMatchesTheStoredDocumentOnlyWhenTheBytesLessIdAndMetadataAreEqual(string entity, string document, bool matches)
    {
        var conventions = new DocumentConventions();
        conventions.Freeze();
        var type = conventions.GetEntityTypeInfo(typeof(Sample));
        var bytes = Encoding.UTF8.GetBytes(document);
        var (offset, length) = TopLevelMetadataValue(bytes);

        Assert.Equal(matches, DocumentJson.MatchesStored(Encoding.UTF8.GetBytes(entity), type, "s/1", bytes, DocumentJson.FindMetadataProperty(bytes, offset, length)));
    }

    /// <summary>Where the top-level <c>@metadata</c> value lies, as the session gets it from JsonDocument.</summary>
    private static (int Offset, int Length) TopLevelMetadataValue(byte[] document)
    {
        using var parsed = JsonDocument.Parse(document.AsMemory());
        var value = System.Runtime.InteropServices.JsonMarshal.GetRawUtf8Value(parsed.RootElement.GetProperty("@metadata"));
        Assert.True(document.AsSpan().Overlaps(value, out var offset));
        return (offset, value.Length);
    }

    [Theory]
    [InlineData("""{"@id":"s/1","@collection":"People","Flag":[1,{"x":"y"}],"@change-vector":"A:1-x","@last-modified":"2026-11-23T10:00:00Z"}""", """{"@collection":"People","Flag":[1,{"x":"y"}],"Jackdaw-Clr-Type":"T"}""")]
    [InlineData("""{"\u0040id":"s/1","N\u00e9":"\u00e9 ","Jackdaw-Clr-Type":"Other"}""", """{"N\u00E9":"\u00e9 ","Jackdaw-Clr-Type":"Other","@collection":"Samples"}""")]
    [InlineData("""{}""", """{"@collection":"Samples","Jackdaw-Clr-Type":"T"}""")]
    public void LoadedMetadataIsWrittenBackWithoutServerManagedKeysAndWithTheTypesDefaults(string loaded, string expected)
    {
        var conventions = new DocumentConventions { FindClrTypeName = _ => "T" };
        conventions.Freeze();
        var type = conventions.GetEntityTypeInfo(typeof(Sample));
        var output = new ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(output))
        {
            DocumentJson.WriteMetadata(writer, type, Encoding.UTF8.GetBytes(loaded), null, conventions.SerializerOptions);
        }

        Assert.Equal(expected, Encoding.UTF8.GetString(output.WrittenSpan));
    }
}
