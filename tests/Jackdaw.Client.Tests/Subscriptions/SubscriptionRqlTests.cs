using System.Linq.Expressions;
using Jackdaw.Client.Subscriptions;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Subscriptions;

/// <summary>The RQL a subscription's predicate becomes: the queries' translation with every value written in as a literal.</summary>
public sealed class SubscriptionRqlTests
{
    private static readonly DocumentConventions Conventions = new();

    private static string Rql<T>(Expression<Func<T, bool>>? predicate)
        where T : class => SubscriptionRql.For(predicate, Conventions);

    [Fact]
    public void WithoutAPredicateTheSubscriptionReadsTheWholeCollection()
    {
        Assert.Equal("from 'Users'", Rql<User>(null));
        Assert.Equal("from 'Users'", Rql<User>(x => true));
    }

    [Fact]
    public void NumbersBooleansAndNullAreWrittenAsRqlLiterals()
    {
        Assert.Equal("from 'Users' where Age > 30", Rql<User>(x => x.Age > 30));
        Assert.Equal("from 'Orders' where Total >= 10.5 and Weight < -2.25", Rql<Order>(x => x.Total >= 10.5m && x.Weight < -2.25));
        Assert.Equal("from 'Orders' where Priority = null", Rql<Order>(x => x.Priority == null));
        var limit = 7;
        Assert.Equal("from 'Orders' where Priority != 7", Rql<Order>(x => x.Priority != limit));
    }

    [Theory]
    [InlineData("Ann", "'Ann'")]
    [InlineData("O'Brien", @"'O\'Brien'")]
    [InlineData(@"back\slash", @"'back\\slash'")]
    [InlineData("$p1 and 'x'", @"'$p1 and \'x\''")]
    [InlineData("line\nbreak", "'line\nbreak'")]
    public void StringsAreQuotedWithTheirQuotesAndBackslashesEscaped(string value, string literal)
    {
        Assert.Equal("from 'Users' where Name = " + literal, Rql<User>(x => x.Name == value));
    }

    [Fact]
    public void EnumsAndDatesAreWrittenAsTheDocumentsStoreThem()
    {
        var at = new DateTime(2024, 5, 6, 7, 8, 9, DateTimeKind.Utc);
        Assert.Equal("from 'Orders' where Status = 'Shipped' and OrderedAt >= '2024-05-06T07:08:09Z'", Rql<Order>(x => x.Status == Status.Shipped && x.OrderedAt >= at));
    }

    [Fact]
    public void AListBecomesTheValuesOfAnInAndAMethodItsArgument()
    {
        var names = new[] { "Ann", "Bob's" };
        Assert.Equal(@"from 'Users' where Name in ('Ann', 'Bob\'s')", Rql<User>(x => names.Contains(x.Name)));
        Assert.Equal("from 'Users' where startsWith(Name, 'A') or Tags = 'vip'", Rql<User>(x => x.Name.StartsWith("A") || x.Tags.Contains("vip")));
        Assert.Equal("from 'Users' where id() = 'users/1'", Rql<User>(x => x.Id == "users/1"));
    }

    [Fact]
    public void WhatHasNoLiteralOrNeverMatchesIsRefusedBeforeAnyRequest()
    {
        var none = Array.Empty<string>();
        Assert.Throws<NotSupportedException>(() => Rql<User>(x => none.Contains(x.Name)));
        Assert.Throws<NotSupportedException>(() => Rql<User>(x => false));
        Assert.Throws<NotSupportedException>(() => Rql<User>(x => x.Name.Contains("a")));
    }

    [Fact]
    public void ADollarInsideAQuotedFieldNameIsNotTakenForAParameter()
    {
        var rql = SubscriptionRql.InlineParameters("'$p0 field' = $p0", [new("p0", "x")], Conventions.SerializerOptions);
        Assert.Equal("'$p0 field' = 'x'", rql);
    }
}
