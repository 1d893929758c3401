using Jackdaw.Server.Errors;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Tests.Rql;

public sealed class RqlParserTests
{
    [Theory]
    [InlineData("from Orders", "from Orders")]
    [InlineData("FROM Orders AS o", "from Orders as o")]
    [InlineData("from index 'Orders/Totals'", "from index 'Orders/Totals'")]
    [InlineData("from Orders where Company = $c and Freight > 10 order by OrderedAt desc limit 20",
        "from Orders where (Company = $c and Freight > 10) order by OrderedAt desc limit 20")]
    [InlineData("from Orders where a = 1 or b = 2 and c = 3", "from Orders where (a = 1 or (b = 2 and c = 3))")]
    [InlineData("from Orders where (a = 1 or b = 2) and not c = 3", "from Orders where ((a = 1 or b = 2) and not c = 3)")]
    [InlineData("from Orders where Freight between 10 and 20.5", "from Orders where Freight between 10 and 20.5")]
    [InlineData("from Orders where Tags in ('a', \"b\") or Tags all in ('c')", "from Orders where (Tags in ('a', 'b') or Tags all in ('c'))")]
    [InlineData("from Users where startsWith(Name, 'Ad') and endsWith(Name, \"a\")", "from Users where (startsWith(Name, 'Ad') and endsWith(Name, 'a'))")]
    [InlineData("from Users where search(Bio, 'quick fox', and) or exists(Email)", "from Users where (search(Bio, 'quick fox', and) or exists(Email))")]
    [InlineData("from Users where exact(Name = 'ADA')", "from Users where exact(Name = 'ADA')")]
    [InlineData("from Users where id() = 'users/1' or id() in ('users/2', 'users/3')", "from Users where (id() = 'users/1' or id() in ('users/2', 'users/3'))")]
    [InlineData("from Orders where ShipTo.City = 'London' and Lines[].Product = 'products/1'", "from Orders where (ShipTo.City = 'London' and Lines[].Product = 'products/1')")]
    [InlineData("from Orders where Valid = true and Shipped != null and Paid == false", "from Orders where ((Valid = true and Shipped != null) and Paid = false)")]
    [InlineData("from Orders where a <> 1 and b <= -2 and c >= .5 and d < 1e3", "from Orders where (((a != 1 and b <= -2) and c >= .5) and d < 1e3)")]
    [InlineData("from Orders order by Freight as double desc, Company, score() asc", "from Orders order by Freight as double desc, Company, score()")]
    [InlineData("from Orders order by Code as alphanumeric", "from Orders order by Code as alphaNumeric")]
    [InlineData("from Orders select Company, ShipTo.City as City, Freight as 'The Freight'", "from Orders select Company, ShipTo.City as City, Freight as 'The Freight'")]
    [InlineData("from Orders include Company, Lines[].Product limit 10 offset 20", "from Orders include Company, Lines[].Product limit 10 offset 20")]
    [InlineData("from Orders limit 20, 10", "from Orders limit 10 offset 20")]
    [InlineData("from Users where Name = 'it\\'s \\\\ \\u0041\\n'", "from Users where Name = 'it\\'s \\\\ A\n'")]
    [InlineData("from 'Order Lines' where 'Unit Price' > 1", "from 'Order Lines' where 'Unit Price' > 1")]
    [InlineData("from Users where regex(Name, '^a.*z$') or regex(id(), $p)", "from Users where (regex(Name, '^a.*z$') or regex(id(), $p))")]
    [InlineData("from Users where proximity(search(Bio, 'quick fox'), 3) and Age > 1", "from Users where (proximity(search(Bio, 'quick fox'), 3) and Age > 1)")]
    [InlineData("from Users where Age > 1 order by Age FILTER Name = 'x' and not Tags in ('a') select Name limit 5 FILTER_LIMIT 10",
        "from Users where Age > 1 order by Age filter (Name = 'x' and not Tags in ('a')) select Name limit 5 filter_limit 10")]
    [InlineData("from Users filter Age > 1 filter_limit $n", "from Users filter Age > 1 filter_limit $n")]
    [InlineData("from Users include Company, timings()", "from Users include Company, timings()")]
    [InlineData("from Users include timings() limit 1", "from Users include timings() limit 1")]
    public void ParsesTheSubsetAndFormatsItBack(string query, string normalized)
    {
        var parsed = RqlParser.Parse(query);
        Assert.Equal(normalized, RqlFormatter.Format(parsed));
        // What the formatter writes parses to the same query.
        Assert.Equal(normalized, RqlFormatter.Format(RqlParser.Parse(normalized)));
    }

    [Fact]
    public void NodesKeepTheirPositions()
    {
        var parsed = RqlParser.Parse("from Orders where Company = $c and Freight > 10");
        var and = Assert.IsType<RqlBinary>(parsed.Where);
        var company = Assert.IsType<RqlComparison>(and.Left);
        var freight = Assert.IsType<RqlComparison>(and.Right);
        Assert.Equal(18, company.Position);
        Assert.Equal(28, company.Value.Position);
        Assert.Equal(RqlValueKind.Parameter, company.Value.Kind);
        Assert.Equal("c", company.Value.Text);
        Assert.Equal(35, freight.Position);
        Assert.Equal(RqlComparisonOperator.Greater, freight.Operator);
    }

    [Theory]
    [InlineData("", 0, "expected 'from'")]
    [InlineData("select x", 0, "expected 'from'")]
    [InlineData("from", 4, "expected a collection name or 'index'")]
    [InlineData("from where", 5, "expected a collection name")]
    [InlineData("from index Orders", 11, "index name in quotes")]
    [InlineData("from Orders where", 17, "expected a field name")]
    [InlineData("from Orders where Company", 25, "expected a comparison after Company")]
    [InlineData("from Orders where Company = ", 28, "expected a value to compare with")]
    [InlineData("from Orders where Company = Name", 28, "expected a value to compare with")]
    [InlineData("from Orders where (a = 1", 24, "')' to close the '(' at position 18")]
    [InlineData("from Orders where a = 1 b = 2", 24, "expected 'order by'")]
    [InlineData("from Orders where a between 1 or 2", 30, "expected 'and'")]
    [InlineData("from Orders where a all = 1", 24, "expected 'in' after 'all'")]
    [InlineData("from Orders where a in 1", 23, "'(' and the values")]
    [InlineData("from Orders where frobnicate(a, 1)", 18, "unknown method 'frobnicate'")]
    [InlineData("from Orders where search(a, 'x', maybe)", 33, "expected 'and' or 'or'")]
    [InlineData("from Orders where a = 'open", 22, "no closing '")]
    [InlineData("from Orders where a = 1 # 2", 24, "unexpected character '#'")]
    [InlineData("from Orders where a = $", 22, "parameter name")]
    [InlineData("from Orders where a = 1..2", 22, "is not a number")]
    [InlineData("from Orders where a[ = 1", 21, "']'")]
    [InlineData("from Orders order by", 20, "expected a field name")]
    [InlineData("from Orders order by a as int", 26, "expected long, double, alphaNumeric or string")]
    [InlineData("from Orders limit", 17, "a number of results")]
    [InlineData("from Orders limit 1 filter_limit 5", 20, "'filter_limit' limits a 'filter' clause, and the query has none")]
    [InlineData("from Orders include highlight(Name, 18, 2)", 20, "'include highlight()' is not supported")]
    [InlineData("from Orders where regex(Name)", 28, "',' and the regular expression")]
    [InlineData("from Orders where proximity(Name = 'a', 2)", 28, "proximity applies to a search")]
    [InlineData("from Orders where proximity(search(Name, 'a b'), -1)", 49, "a whole number of at least 0")]
    [InlineData("from Orders where proximity(search(Name, 'a b'), 1.5)", 49, "a whole number of at least 0")]
    [InlineData("from Orders where a = 1\n  and b", 31, "(line 2, column 8)")]
    public void AnInvalidQueryNamesThePositionAndWhatWasExpected(string query, int position, string mentions)
    {
        var error = Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(query));
        Assert.Equal(position, error.Position);
        Assert.Contains(mentions, error.Message, StringComparison.Ordinal);
        Assert.Contains($"position {position}", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("from Users limit 10 include Company", 20, "'include' must come before 'limit'")]
    [InlineData("from Users order by Age desc limit 20 select Name, Age", 38, "'select' must come before 'limit'")]
    [InlineData("from Users select Name where Age > 1", 23, "'where' must come before 'select'")]
    [InlineData("from Users where Age > 1 include Company order by Age", 41, "'order by' must come before 'include'")]
    [InlineData("from Users where Age > 1 where Age < 5", 25, "'where' may appear only once")]
    [InlineData("from Users include Company include Address", 27, "'include' may appear only once")]
    [InlineData("from Users select Name filter Age > 1", 23, "'filter' must come before 'select'")]
    [InlineData("from Users filter Age > 1 limit 1 filter Age < 5", 34, "'filter' may appear only once")]
    public void AClauseOutOfOrderSaysWhichClauseItMustPrecede(string query, int position, string mentions)
    {
        var error = Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(query));
        Assert.Equal(position, error.Position);
        Assert.Contains(mentions, error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("expected", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("from Users x", "expected 'group by', 'where', 'order by', 'filter', 'select', 'include', 'limit' or the end of the query")]
    [InlineData("from Users where a = 1 x", "expected 'order by', 'filter', 'select', 'include', 'limit' or the end of the query")]
    [InlineData("from Users filter a = 1 x", "expected 'select', 'include', 'limit', 'filter_limit' or the end of the query")]
    [InlineData("from Users select a x", "expected 'include', 'limit' or the end of the query")]
    [InlineData("from Users include a x", "expected 'limit' or the end of the query")]
    [InlineData("from Users limit 1 x", "expected the end of the query")]
    public void WhatIsLeftAfterTheLastClauseListsOnlyTheClausesThatMayStillFollow(string query, string mentions)
    {
        var error = Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(query));
        Assert.Contains(mentions + ", found", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void HostileQueriesAreRefusedNotCrashed()
    {
        // 100,000 nested parentheses: refused at the depth limit, no stack overflow.
        var nested = "from Orders where " + new string('(', 100_000) + "a = 1" + new string(')', 100_000);
        Assert.Contains("nests deeper than", Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(nested)).Message, StringComparison.Ordinal);
        var nots = "from Orders where " + string.Concat(Enumerable.Repeat("not ", 50_000)) + "a = 1";
        Assert.Contains("nests deeper than", Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(nots)).Message, StringComparison.Ordinal);
        // A 10 MB query and a 1 MB term.
        var huge = "from Orders where a = 1" + new string(' ', 10 * 1024 * 1024);
        Assert.Contains("characters long", Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(huge)).Message, StringComparison.Ordinal);
        var term = "from Orders where a = '" + new string('x', 200_000) + "'";
        Assert.Contains("longer than", Assert.Throws<InvalidQueryException>(() => RqlParser.Parse(term)).Message, StringComparison.Ordinal);
        // Long flat chains are fine (and/or chains do not nest the parser).
        var chain = "from Orders where " + string.Join(" or ", Enumerable.Range(0, 5_000).Select(i => $"a = {i}"));
        Assert.NotNull(RqlParser.Parse(chain).Where);
    }

    [Fact]
    public void RandomQueriesSurviveFormattingAndParsingAgain()
    {
        var random = new Random(18);
        for (var i = 0; i < 2_000; i++)
        {
            var query = RandomQuery(random);
            var once = RqlFormatter.Format(RqlParser.Parse(query));
            var twice = RqlFormatter.Format(RqlParser.Parse(once));
            Assert.True(once == twice, $"{query}\n  → {once}\n  → {twice}");
        }
    }

    private static readonly string[] Fields = ["Company", "Freight", "ShipTo.City", "Lines[].Product", "'Odd Name'", "Tags"];

    private static string RandomQuery(Random random)
    {
        var text = "from " + (random.Next(4) == 0 ? "index 'Orders/Totals'" : "Orders");
        if (random.Next(3) > 0)
        {
            text += " where " + RandomExpression(random, 3);
        }
        if (random.Next(3) == 0)
        {
            text += " order by " + Pick(random, Fields) + (random.Next(2) == 0 ? " desc" : "") + (random.Next(3) == 0 ? ", score()" : "");
        }
        if (random.Next(4) == 0)
        {
            text += " select Company, ShipTo.City as City";
        }
        if (random.Next(4) == 0)
        {
            text += " include Company";
        }
        if (random.Next(3) == 0)
        {
            text += $" limit {random.Next(100)}" + (random.Next(2) == 0 ? $" offset {random.Next(100)}" : "");
        }
        return text;
    }

    private static string RandomExpression(Random random, int depth)
    {
        if (depth > 0 && random.Next(3) == 0)
        {
            return $"({RandomExpression(random, depth - 1)} {(random.Next(2) == 0 ? "and" : "OR")} {RandomExpression(random, depth - 1)})";
        }
        if (depth > 0 && random.Next(6) == 0)
        {
            return "not " + RandomExpression(random, depth - 1);
        }
        var field = Pick(random, Fields);
        return random.Next(8) switch
        {
            0 => $"{field} between {random.Next(10)} and {random.Next(10, 100)}",
            1 => $"{field} in ('a', 2, $p{random.Next(3)})",
            2 => $"startsWith({field}, 'x\\'y')",
            3 => $"search({field}, \"some words\", and)",
            4 => $"exists({field})",
            5 => "id() = 'orders/1'",
            6 => $"exact({field} = 'X')",
            _ => $"{field} {Pick(random, ["=", "!=", "<", "<=", ">", ">="])} {Pick(random, ["1", "-2.5", "'s'", "true", "null", "$v"])}",
        };
    }

    private static string Pick(Random random, string[] choices) => choices[random.Next(choices.Length)];

    [Fact]
    public void MetadataPathsMayHaveDashes()
    {
        var query = RqlParser.Parse("from Orders select @metadata.@nested-object-types as T, @metadata.@last-modified");
        Assert.Equal("@metadata.@nested-object-types", query.Select[0].Path.ToString());
        Assert.Equal("@metadata.@last-modified", query.Select[1].Path.ToString());
        Assert.Throws<Jackdaw.Server.Errors.InvalidQueryException>(() => RqlParser.Parse("from Orders where a-b = 1"));
    }
}
