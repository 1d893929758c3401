using System.Buffers;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

public class CorpusRoundTripTests
{
    public static TheoryData<string, BlittableMode> Cases()
    {
        var data = new TheoryData<string, BlittableMode>();
        foreach (var file in Corpus.Files)
        {
            data.Add(file, BlittableMode.Memory);
            data.Add(file, BlittableMode.Disk);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void EveryCorpusDocumentWritesBackByteIdentical(string file, BlittableMode mode)
    {
        var lines = Corpus.Load(file);
        using var context = new JsonOperationContext();
        var output = new ArrayBufferWriter<byte>(1 << 16);
        for (var i = 0; i < lines.Length; i++)
        {
            var doc = context.Parse(lines[i], mode);
            output.ResetWrittenCount();
            doc.WriteJsonTo(output);
            if (!output.WrittenSpan.SequenceEqual(lines[i]))
            {
                Assert.Fail($"{file} line {i + 1} ({mode}) differs:\nexpected {System.Text.Encoding.UTF8.GetString(lines[i])}\nactual   {System.Text.Encoding.UTF8.GetString(output.WrittenSpan)}");
            }

            if ((i & 255) == 255)
            {
                context.Reset();
            }
        }
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void EveryCorpusDocumentMatchesJsonDocumentValueByValue(string file, BlittableMode mode)
    {
        var lines = Corpus.Load(file);
        using var context = new JsonOperationContext();
        var scratch = new byte[1 << 16];
        for (var i = 0; i < lines.Length; i++)
        {
            using var expected = JsonDocument.Parse(lines[i]);
            var doc = context.Parse(lines[i], mode);
            BlittableAssert.Equal(expected.RootElement, doc.Root, scratch, $"{file}:{i + 1}");
            if ((i & 255) == 255)
            {
                context.Reset();
            }
        }
    }
}
