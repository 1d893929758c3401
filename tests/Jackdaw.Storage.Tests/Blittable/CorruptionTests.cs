using System.Buffers;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

public class CorruptionTests
{
    public static TheoryData<string, BlittableMode> Documents() => new()
    {
        { "users", BlittableMode.Memory },
        { "users", BlittableMode.Disk },
        { "companies", BlittableMode.Disk },
        { "orders", BlittableMode.Memory },
    };

    [Theory]
    [InlineData(BlittableMode.Memory)]
    [InlineData(BlittableMode.Disk)]
    public void VersionOneDocumentsAreStillReadAndOtherVersionsAreRefused(BlittableMode mode)
    {
        // Version 2 only added the coder's timestamp token: a document without one reads the same as version 1.
        const string json = "{\"Name\":\"Lizzie Harber\",\"Email\":\"Lizzie61@hotmail.com\",\"Tags\":[\"the quick brown fox\",1,2.5,true,null],\"Address\":{\"City\":\"Barrowsport\"}}";
        using var context = new JsonOperationContext();
        var document = context.Parse(TestSupport.Utf8(json), mode).ToArray();
        Assert.Equal(2, document[1]);

        document[1] = 1;
        Assert.Equal(json, TestSupport.ToJson(document));
        Assert.True(BlittableReader.Open(document).TryGet("Name", out var name));
        Assert.Equal("Lizzie Harber", name.GetString());

        foreach (var version in new byte[] { 0, 3, 0xFF })
        {
            document[1] = version;
            var error = Assert.Throws<BlittableFormatException>(() => TestSupport.ToJson(document));
            Assert.Contains($"version {version} is not supported", error.Message, StringComparison.Ordinal);
        }
    }

    [Theory]
    [MemberData(nameof(Documents))]
    public void EveryCorruptByteGivesAFormatErrorOrAWorkingDocument(string file, BlittableMode mode)
    {
        using var context = new JsonOperationContext();
        var original = context.Parse(Corpus.Load(file)[5], mode).ToArray();
        var output = new ArrayBufferWriter<byte>();
        byte[] replacements = [0x00, 0x01, 0x7F, 0x80, 0xFF];
        for (var i = 0; i < original.Length; i++)
        {
            foreach (var replacement in replacements.Append((byte)(original[i] ^ 0x40)))
            {
                var corrupt = (byte[])original.Clone();
                corrupt[i] = replacement;
                Exercise(corrupt, original, output);
            }
        }

        for (var length = 0; length < original.Length; length++)
        {
            Exercise(original.AsSpan(0, length).ToArray(), original, output);
        }
    }

    [Fact]
    public void RandomlyMutatedDocumentsNeverCrashTheReader()
    {
        var random = new Random(99);
        var lines = Corpus.Load("companies");
        using var context = new JsonOperationContext();
        var output = new ArrayBufferWriter<byte>();
        for (var i = 0; i < 20_000; i++)
        {
            var original = context.Parse(lines[random.Next(200)], i % 2 == 0 ? BlittableMode.Disk : BlittableMode.Memory).ToArray();
            var corrupt = (byte[])original.Clone();
            var flips = random.Next(1, 8);
            for (var f = 0; f < flips; f++)
            {
                corrupt[random.Next(BlittableHeader.Size, corrupt.Length)] = (byte)random.Next(256);
            }

            Exercise(corrupt, original, output);
            if ((i & 63) == 0)
            {
                context.Reset();
            }
        }
    }

    internal static void Exercise(byte[] corrupt, byte[] original, ArrayBufferWriter<byte> output)
    {
        try
        {
            output.ResetWrittenCount();
            BlittableJsonWriter.WriteTo(corrupt, output);
            var root = BlittableReader.Open(corrupt);
            Walk(root, 0);
            BlittableComparer.Equals(corrupt, original);
            using var context = new JsonOperationContext();
            context.Modify(corrupt, new BlittablePatch().Set("x", 1), BlittableMode.Disk);
        }
        catch (BlittableFormatException)
        {
        }
        catch (BlittableParseException e) when (e.Error is BlittableParseError.NumberOutOfRange or BlittableParseError.DuplicateProperty or BlittableParseError.TooDeep)
        {
            // Modify re-validates what it copies: a corrupt number or a name pointed at twice is caught there.
        }
    }

    private static void Walk(BlittableObject obj, int depth)
    {
        if (depth > 300)
        {
            return;
        }

        foreach (var property in obj)
        {
            Visit(property.Value, depth);
        }

        obj.TryGet("Name"u8, out _);
        obj.TryGet("zzz"u8, out _);
    }

    private static void Visit(BlittableValue value, int depth)
    {
        switch (value.Type)
        {
            case BlittableToken.Object:
                Walk(value.GetObject(), depth + 1);
                break;
            case BlittableToken.Array:
                foreach (var item in value.GetArray())
                {
                    Visit(item, depth + 1);
                }

                break;
            case BlittableToken.String:
                value.GetString();
                value.GetUtf8Length();
                break;
            case BlittableToken.Integer:
            case BlittableToken.Double:
                value.TryGetInt64(out _);
                value.TryGetDouble(out _);
                value.TryGetDecimal(out _);
                break;
        }
    }
}
