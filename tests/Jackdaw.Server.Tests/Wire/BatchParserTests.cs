using System.Buffers;
using System.Text;
using Jackdaw.Server.Wire;
using Jackdaw.Storage.Blittable;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;

namespace Jackdaw.Server.Tests.Wire;

public class BatchParserTests
{
    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, Segment? previous)
        {
            Memory = memory;
            if (previous is not null)
            {
                RunningIndex = previous.RunningIndex + previous.Memory.Length;
                previous.Next = this;
            }
        }
    }

    /// <summary>The line split into pieces of <paramref name="size"/> bytes, as a pipe hands it over.</summary>
    private static ReadOnlySequence<byte> Pieces(string line, int size)
    {
        var bytes = Encoding.UTF8.GetBytes(line);
        Segment? first = null, last = null;
        for (var i = 0; i < bytes.Length; i += size)
        {
            last = new Segment(bytes.AsMemory(i, Math.Min(size, bytes.Length - i)), last);
            first ??= last;
        }
        return new ReadOnlySequence<byte>(first!, 0, last!, last!.Memory.Length);
    }

    private static string Json(BlittableDocument document)
    {
        var output = new ArrayBufferWriter<byte>();
        document.WriteJsonTo(output);
        return Encoding.UTF8.GetString(output.WrittenSpan);
    }

    [Theory]
    [InlineData("""{"Id":"a/1","Document":{"N":1,"S":"x\"y","@metadata":{"@collection":"As"}}}""")]
    [InlineData("""  {"Id":"a/1","Document":{"N":1,"S":"x\"y","@metadata":{"@collection":"As"}}}  """)]
    [InlineData("""{"Document":{"N":1,"S":"x\"y","@metadata":{"@collection":"As"}},"Id":"a/1"}""")]
    [InlineData("""{"Document":{"N":0},"Extra":[1,{"a":2}],"Document":{"N":1,"S":"x\"y","@metadata":{"@collection":"As"}},"Id":"a/1"}""")]
    public void ALineGivesItsIdAndDocumentWhateverTheOrderAndSegments(string line)
    {
        foreach (var size in new[] { int.MaxValue, 1, 7, 64 })
        {
            using var context = new JsonOperationContext();
            var put = BatchParser.ParseInsertLine(size == int.MaxValue ? new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(line)) : Pieces(line, size), context, 1);
            Assert.NotNull(put);
            Assert.Equal("a/1", put.Id);
            Assert.Equal("As", put.Collection);
            Assert.Equal("""{"N":1,"S":"x\"y","@metadata":{"@collection":"As"}}""", Json(put.Document));
        }
    }

    [Theory]
    [InlineData("""{"Id":"a/1","Document":{"N":1}""", "not valid JSON")]
    [InlineData("""{"Id":"a/1","Document":{"N":1}} x""", "not valid JSON")]
    [InlineData("""{"Id":"a/1","Document":{"N":}}""", "invalid")]
    [InlineData("""{"Id":"a/1","Document":[1]}""", "must be a JSON object")]
    [InlineData("""{"Document":{"N":1}}""", "no 'Id'")]
    public void ABadLineIsABadRequest(string line, string expected)
    {
        foreach (var size in new[] { int.MaxValue, 5 })
        {
            using var context = new JsonOperationContext();
            var sequence = size == int.MaxValue ? new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(line)) : Pieces(line, size);
            var error = Assert.Throws<BadRequestException>(() => BatchParser.ParseInsertLine(sequence, context, 42));
            Assert.Equal(400, ErrorMapping.Map(error)!.Value.Status);
            Assert.Contains(expected, error.Message, StringComparison.OrdinalIgnoreCase);
        }
    }
}
