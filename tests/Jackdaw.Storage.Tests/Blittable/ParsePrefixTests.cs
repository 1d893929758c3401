using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>An object parsed out of a larger text (a document inside a batch line).</summary>
public class ParsePrefixTests
{
    [Theory]
    [InlineData("{\"a\":1}", "")]
    [InlineData("{\"a\":[1,{\"b\":\"}\"}]}}", "}")]
    [InlineData("{\"s\":\"x\\\"}\"} ,\"Id\":\"1\"}", " ,\"Id\":\"1\"}")]
    [InlineData("{}garbage", "garbage")]
    public void ConsumedEndsAtTheObjectsClosingBrace(string json, string rest)
    {
        using var context = new JsonOperationContext();
        var bytes = Encoding.UTF8.GetBytes(json);
        foreach (var mode in new[] { BlittableMode.Disk, BlittableMode.Memory })
        {
            var document = context.ParseObjectPrefix(bytes, mode, out var consumed);
            Assert.Equal(rest, Encoding.UTF8.GetString(bytes.AsSpan(consumed)));
            Assert.Equal(json[..^rest.Length].Trim(), TestSupport.ToJson(document.Span));
        }
    }

    [Theory]
    [InlineData("{\"a\":1", BlittableParseError.Truncated)]
    [InlineData("[1]", BlittableParseError.NotAnObject)]
    [InlineData("{\"a\":1,\"a\":2}}", BlittableParseError.DuplicateProperty)]
    public void TheObjectItselfFollowsTheParseRules(string json, BlittableParseError error)
    {
        using var context = new JsonOperationContext();
        var e = Assert.Throws<BlittableParseException>(() => context.ParseObjectPrefix(Encoding.UTF8.GetBytes(json), BlittableMode.Disk, out _));
        Assert.Equal(error, e.Error);
        // The context is usable afterwards.
        Assert.Equal("{\"b\":2}", TestSupport.ToJson(context.Parse("{\"b\":2}"u8, BlittableMode.Disk).Span));
    }
}
