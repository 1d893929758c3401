using System.Text;
using System.Text.Json;
using Jackdaw.Client.Http;

namespace Jackdaw.Client.Tests;

public sealed class MultiGetAnswerTests
{
    /// <summary>Records what each item gave, reading a handed-over result to its end as an operation must.</summary>
    private sealed class Recorder : IMultiGetResultReader
    {
        public List<(int Index, int Status, string? Result, bool InPlace)> Items { get; } = [];

        public void ReadResult(int index, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body)
        {
            var start = (int)reader.TokenStartIndex;
            reader.Skip();
            Items.Add((index, statusCode, Encoding.UTF8.GetString(body.Span[start..(int)reader.BytesConsumed]), true));
        }

        public void TakeResult(int index, int statusCode, ReadOnlyMemory<byte> result) =>
            Items.Add((index, statusCode, result.IsEmpty ? null : Encoding.UTF8.GetString(result.Span), false));
    }

    private static List<(int Index, int Status, string? Result, bool InPlace)> Read(string body, int expected)
    {
        var recorder = new Recorder();
        MultiGetAnswer.Read(Encoding.UTF8.GetBytes(body), expected, recorder);
        return recorder.Items;
    }

    [Fact]
    public void ResultsAfterTheirStatusAreReadInPlace()
    {
        var items = Read("""{"Results":[{"StatusCode":200,"Headers":{"ETag":"\"A:1-x\""},"Result":{"Results":[{"a":[1,{"b":2}]}]}},{"StatusCode":304,"Headers":{},"Result":null}]}""", 2);
        Assert.Equal([(0, 200, """{"Results":[{"a":[1,{"b":2}]}]}""", true), (1, 304, null, false)], items);
    }

    [Fact]
    public void ResultsBeforeTheirStatusAsRavenDbWritesThemAreHandedOverAsSlices()
    {
        var items = Read("""{"Results":[ {"Result":{"Results":[]},"StatusCode":200,"Headers":{}}, {"Result":"text","StatusCode":200}, {"StatusCode":404,"Result":{"Type":"DocumentDoesNotExistException"}} ]}""", 3);
        Assert.Equal([(0, 200, """{"Results":[]}""", false), (1, 200, "\"text\"", false), (2, 404, """{"Type":"DocumentDoesNotExistException"}""", true)], items);
    }

    [Theory]
    [InlineData("""{"Results":[]}""")]
    [InlineData("""{"Results":[{"StatusCode":200,"Result":{}},{"StatusCode":200,"Result":{}}]}""")]
    [InlineData("""{"Results":[{"Result":{}}]}""")]
    [InlineData("""{"Results":[{"StatusCode":"200","Result":{}}]}""")]
    [InlineData("""{"Results":{}}""")]
    [InlineData("""[]""")]
    [InlineData("""{"Results":[{"StatusCode":200,"Result":{""")]
    [InlineData("<html>")]
    public void AnAnswerWithoutOneResultPerRequestIsAClientError(string body) =>
        Assert.Throws<JackdawException>(() => Read(body, 1));
}
