using Jackdaw.Server.Errors;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Tests.Rql;

public sealed class RqlQueryCacheTests
{
    [Fact]
    public void ATextIsParsedOnceAndAnswersAsTheParserDoes()
    {
        var text = $"from Orders where Company = $p0 and Freight > {Guid.NewGuid().GetHashCode() & 0xFFFF}";

        var first = RqlQueryCache.Parse(text);

        Assert.Same(first, RqlQueryCache.Parse(text));
        Assert.Equal(RqlFormatter.Format(RqlParser.Parse(text)), RqlFormatter.Format(first));
    }

    [Fact]
    public void ATextThatDoesNotParseThrowsEachTime()
    {
        const string text = "from Orders where Company = ";

        var error = Assert.Throws<InvalidQueryException>(() => RqlQueryCache.Parse(text));
        var again = Assert.Throws<InvalidQueryException>(() => RqlQueryCache.Parse(text));

        Assert.Equal(error.Message, again.Message);
    }

    [Fact]
    public void ALongTextIsParsedEachTime()
    {
        var text = "from Orders where Company = $p0" + new string(' ', RqlQueryCache.MaxTextLength);

        Assert.NotSame(RqlQueryCache.Parse(text), RqlQueryCache.Parse(text));
    }
}
