using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Tests;

public class LoadedMetadataReaderTests
{
    [Theory]
    [InlineData("""{"B":1,"@metadata":{"@id":"a/1","@change-vector":"A:1-x"}}""")]
    [InlineData("""{"@metadata":{"@id":"a/1"},"B":1}""")]
    [InlineData("""{"A":[1,2],"@metadata":{"@id":"a/1"},"B":{"C":null}}""")]
    [InlineData("""{"@metadata":{"@id":"a/1"},"B":{"@metadata":{"@id":"nested"}}}""")]
    [InlineData("""{"@metadata":{"@id":"a/1"},"B":[{"@metadata":{"@id":"nested"}}]}""")]
    [InlineData("""{"A":"x\",\"@metadata\":{","@metadata":{"@id":"a/1"}}""")]
    [InlineData("""{"A":"x\",\"@metadata\":{\"@id\":\"s\"}","B":1,"@metadata":{"@id":"a/1"}}""")]
    [InlineData("""{"@metadata":{"@id":"a/1"}}""")]
    [InlineData("""{ "B": 1, "@metadata": { "@id": "a/1" } }""")]
    [InlineData("""{"B":1,"@metadata":{"@id":"a/1"} }""")]
    [InlineData("""{"B":{"@metadata":{"@id":"nested"}},"@metadata":{"@id":"a/1","Flag":{"@metadata":{}}}}""")]
    public void TheTopLevelMetadataIsFoundWhereJsonDocumentFindsIt(string document)
    {
        var bytes = Encoding.UTF8.GetBytes(document);
        using var reference = JsonDocument.Parse(bytes.AsMemory());
        var expected = JsonMarshal.GetRawUtf8Value(reference.RootElement.GetProperty("@metadata"));
        Assert.True(bytes.AsSpan().Overlaps(expected, out var expectedOffset));

        Assert.True(LoadedMetadataReader.TryRead(bytes, "other", "T"u8, out var metadata));

        Assert.Equal(expectedOffset, metadata.Offset);
        Assert.Equal(expected.Length, metadata.Length);
        Assert.Equal("a/1", metadata.Id);
    }

    [Theory]
    [InlineData("""{"B":1}""")]
    [InlineData("""{"B":{"@metadata":{"@id":"nested"}}}""")]
    [InlineData("""{"B":"\"@metadata\":{}"}""")]
    [InlineData("""{"@metadata":"a/1"}""")]
    public void ADocumentWithoutATopLevelMetadataObjectHasNone(string document)
    {
        Assert.False(LoadedMetadataReader.TryRead(Encoding.UTF8.GetBytes(document), "a/1", "T"u8, out _));
    }

    [Fact]
    public void TheRequestedIdAndTypeAreRecognizedAndOtherValuesDecoded()
    {
        var document = Encoding.UTF8.GetBytes("""{"@metadata":{"@id":"users\/1","Jackdaw-Clr-Type":"T","@change-vector":"A:2-y","@last-modified":"2026-11-23T10:00:00Z","@collection":7}}""");
        const string requested = "users/1";

        Assert.True(LoadedMetadataReader.TryRead(document, requested, "T"u8, out var metadata));

        Assert.Same(requested, metadata.Id);
        Assert.True(metadata.IsRequestedType);
        Assert.Null(metadata.ClrTypeName);
        Assert.Equal("A:2-y", metadata.ChangeVector);
        Assert.Equal("2026-11-23T10:00:00Z", metadata.LastModified);

        Assert.True(LoadedMetadataReader.TryRead(document, "users/2", "U"u8, out var other));
        Assert.Equal("users/1", other.Id);
        Assert.False(other.IsRequestedType);
        Assert.Equal("T", other.ClrTypeName);
    }

    [Theory]
    [InlineData("""{"A":1,"@metadata":{"@id":"a/1","@projection":true}}""", true)]
    [InlineData("""{"@metadata":{"@projection":true,"@id":"a/1"},"A":1}""", true)]
    [InlineData("""{"A":1,"@metadata":{"@id":"a/1","@projection":false}}""", false)]
    [InlineData("""{"A":1,"@metadata":{"@projection":{"@projection":true},"@id":"a/1"}}""", false)]
    [InlineData("""{"A":{"@metadata":{"@projection":true}},"@metadata":{"@id":"a/1"}}""", false)]
    public void AProjectionIsReportedOnlyForATopLevelTrueMark(string document, bool isProjection)
    {
        Assert.True(LoadedMetadataReader.TryRead(Encoding.UTF8.GetBytes(document), "", "T"u8, out var metadata));

        Assert.Equal(isProjection, metadata.IsProjection);
        Assert.Equal("a/1", metadata.Id);
    }
}
