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
            DocumentJson.WriteDocument(writer, new ArrayBufferWriter<byte>(), Encoding.UTF8.GetBytes(entity), type, null, null, conventions.SerializerOptions);

        var json = Encoding.UTF8.GetString(output.WrittenSpan);
        Assert.Equal(expected.Replace("M", """{"@collection":"Samples","Jackdaw-Clr-Type":"T"}""", StringComparison.Ordinal), json);
        using var _ = JsonDocument.Parse(json);
    }
}
