using Jackdaw.Server.Errors;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Tests.GroupBy;

/// <summary>The <c>group by</c> clause and the aggregates of its select, parsed and formatted back.</summary>
public sealed class GroupByRqlTests
{
    [Theory]
    [InlineData("from Orders group by Company select Company, count() as Count, sum(Freight) as Freight",
        "from Orders group by Company select Company, count() as Count, sum(Freight) as Freight")]
    [InlineData("FROM Orders GROUP BY Company, ShipTo.City SELECT key() AS k, COUNT(), Sum(Freight)",
        "from Orders group by Company, ShipTo.City select key() as k, count(), sum(Freight)")]
    [InlineData("from Orders group by Lines[].Product select Lines[].Product, sum(Lines[].Quantity) as Quantity",
        "from Orders group by Lines[].Product select Lines[].Product, sum(Lines[].Quantity) as Quantity")]
    [InlineData("from Orders group by Company where Count > 5 order by Count as long desc select key(), count() as Count limit 10",
        "from Orders group by Company where Count > 5 order by Count as long desc select key(), count() as Count limit 10")]
    [InlineData("from 'Order Lines' group by 'The Company' select count()",
        "from 'Order Lines' group by 'The Company' select count()")]
    [InlineData("from Group as group where Group = 1 and group.Group > 2 select Group",
        "from Group as group where (Group = 1 and group.Group > 2) select Group")]
    [InlineData("from Group group by Group select Group, count()",
        "from Group group by Group select Group, count()")]
    public void GroupByQueriesParseAndFormatBack(string query, string normalized)
    {
        var parsed = RqlParser.Parse(query);
        Assert.Equal(normalized, RqlFormatter.Format(parsed));
        Assert.Equal(normalized, RqlFormatter.Format(RqlParser.Parse(normalized)));
    }

    [Fact]
    public void AggregatesNameTheResultFieldTheyRead()
    {
        var query = RqlParser.Parse("from Orders group by Company select key() as Id, count() as N, sum(Freight) as Total, Company");
        Assert.True(query.IsGroupBy);
        Assert.Equal("Company", Assert.Single(query.GroupBy).ToString());
        Assert.Equal(21, query.GroupBy[0].Position);
        Assert.Collection(query.Select,
            p => Assert.Equal((RqlAggregate.Key, "Company", "Id"), (p.Aggregate, p.Path.ToString(), p.Name)),
            p => Assert.Equal((RqlAggregate.Count, "Count", "N"), (p.Aggregate, p.Path.ToString(), p.Name)),
            p => Assert.Equal((RqlAggregate.Sum, "Freight", "Total"), (p.Aggregate, p.Path.ToString(), p.Name)),
            p => Assert.Equal((RqlAggregate.None, "Company", "Company"), (p.Aggregate, p.Path.ToString(), p.Name)));
    }

    [Fact]
    public void AQueryWithoutGroupByHasNone()
    {
        var query = RqlParser.Parse("from Orders where Company = 'c' select Company");
        Assert.False(query.IsGroupBy);
        Assert.Empty(query.GroupBy);
        Assert.Equal(RqlAggregate.None, query.Select[0].Aggregate);
    }

    [Theory]
    [InlineData("from Orders select count()", 19, "only be used in a group-by query")]
    [InlineData("from Orders select sum(Freight)", 19, "only be used in a group-by query")]
    [InlineData("from Orders group by Company select avg(Freight)", 36, "unknown method 'avg'")]
    [InlineData("from Orders group by Company select sum()", 40, "the field to sum")]
    [InlineData("from Orders group by Company select count(Freight)", 42, "takes no field")]
    [InlineData("from Orders group by", 20, "expected a field name")]
    [InlineData("from Orders group Company", 18, "expected 'by'")]
    [InlineData("from Orders group by Company, Company", 30, "already a group-by field")]
    [InlineData("from Orders group by array(Tags)", 21, "methods such as array()")]
    [InlineData("from index 'Orders/Totals' group by Company", 27, "queries a collection")]
    [InlineData("from Orders where Count > 1 group by Company", 28, "'group by' must come before 'where'")]
    [InlineData("from Orders group by Company group by Employee", 29, "'group by' may appear only once")]
    public void ABadGroupByNamesItsPosition(string query, int position, string mentions)
    {
        var error = Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(query));
        Assert.Equal(position, error.Position);
        Assert.Contains(mentions, error.Message, StringComparison.Ordinal);
    }
}
