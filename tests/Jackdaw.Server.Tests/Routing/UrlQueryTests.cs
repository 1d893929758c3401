using Jackdaw.Server.Wire;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;

namespace Jackdaw.Server.Tests.Routing;

public class QueryStringTests
{
    [Fact]
    public void FindsParametersByNameIgnoringCase()
    {
        var query = new UrlQuery("?id=users/1&pageSize=10&ID=users/2");
        Assert.Equal("users/1", query.GetString("id"));
        Assert.Equal(10, query.GetInt32("PAGESIZE", 25));
        Assert.Null(query.GetString("start"));
        Assert.Equal(25, query.GetInt32("start", 25));
    }

    [Fact]
    public void EnumeratesEveryParameterInOrderSkippingEmptyPairs()
    {
        var names = new List<string>();
        var values = new List<string>();
        foreach (var p in new UrlQuery("a=1&&id=x&id=y&flag&"))
        {
            names.Add(p.RawName.ToString());
            values.Add(p.RawValue.ToString());
        }
        Assert.Equal(["a", "id", "id", "flag"], names);
        Assert.Equal(["1", "x", "y", ""], values);
    }

    [Theory]
    [InlineData("users%2F1", "users/1")]
    [InlineData("a+b", "a b")]
    [InlineData("caf%C3%A9", "caf\u00e9")]
    [InlineData("%E6%97%A5%E6%9C%AC", "\u65e5\u672c")]
    [InlineData("%F0%9F%98%80", "\ud83d\ude00")]
    [InlineData("100%", "100%")]
    [InlineData("%zz", "%zz")]
    [InlineData("%4", "%4")]
    [InlineData("caf\u00e9", "caf\u00e9")]
    [InlineData("invoices%7C", "invoices|")]
    public void DecodesPercentEscapesAsUtf8(string raw, string expected) => Assert.Equal(expected, UrlQuery.Decode(raw, "id"));

    [Theory]
    [InlineData("%C3%28", 0xC3, 0)]
    [InlineData("%C3", 0xC3, 0)]
    [InlineData("ab%FF", 0xFF, 2)]
    [InlineData("a%80", 0x80, 1)]
    [InlineData("%ED%A0%80", 0xED, 0)]
    [InlineData("%F4%90%80%80", 0xF4, 0)]
    [InlineData("x%C0%AF", 0xC0, 1)]
    public void InvalidUtf8IsA400NamingTheParameterAndTheByte(string raw, int badByte, int offset)
    {
        var error = Assert.Throws<BadRequestException>(() => new UrlQuery("id=" + raw).GetString("id"));
        Assert.Equal((400, "BadRequestException"), ErrorMapping.Map(error));
        Assert.Contains("'id'", error.Message, StringComparison.Ordinal);
        Assert.Contains($"byte 0x{badByte:X2} at byte {offset} ", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("pageSize=-1")]
    [InlineData("pageSize=abc")]
    [InlineData("pageSize=99999999999")]
    [InlineData("pageSize=")]
    [InlineData("pageSize=1024000")]
    public void BadIntegerIsA400NamingTheParameter(string raw)
    {
        var error = Assert.Throws<BadRequestException>(() => new UrlQuery(raw).GetInt32("pageSize", 25, max: 1024));
        Assert.Equal(400, ErrorMapping.Map(error)!.Value.Status);
        Assert.Contains("pageSize", error.Message, StringComparison.Ordinal);
    }
}
