using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Tests.Rql;

/// <summary>The masking of a query's literals for the slow-query log.</summary>
public sealed class RqlRedactionTests
{
    [Theory]
    [InlineData("from Orders where Company = 'companies/1'", "from Orders where Company = '?'")]
    [InlineData("from Orders where Company = \"com\\\"panies\"", "from Orders where Company = '?'")]
    [InlineData("from Orders where Freight between 10 and 2.5e-3 limit 5, 10", "from Orders where Freight between ? and ? limit ?, ?")]
    [InlineData("from Orders where Freight > -.5", "from Orders where Freight > -?")]
    [InlineData("from Orders2 as o where o.Lines[].Line1 = $p1 and @metadata.@last-modified > $since", "from Orders2 as o where o.Lines[].Line1 = $p1 and @metadata.@last-modified > $since")]
    [InlineData("from index 'Orders/Totals' where Total = 'a\\\\'", "from index 'Orders/Totals' where Total = '?'")]
    [InlineData("from Orders where Name = 'never closed", "from Orders where Name = '?'")]
    [InlineData("from Orders as o select { Name: o.Name + `x${1}`, N: 42 }", "from Orders as o select { Name: o.Name + '?', N: ? }")]
    [InlineData("", "")]
    public void LiteralsAreMaskedAndNamesKept(string query, string masked) =>
        Assert.Equal(masked, RqlRedaction.MaskLiterals(query));
}
