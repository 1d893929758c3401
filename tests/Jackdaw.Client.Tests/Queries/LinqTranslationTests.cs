using System.Text.Json;
using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Client.Tests.Queries;

/// <summary>What RQL and which parameters each LINQ construct sends.</summary>
public sealed class LinqTranslationTests : QuerySender
{
    [Fact]
    public async Task AQueryWithoutOperatorsReadsTheCollectionOfTheTypeFromTheConventions()
    {
        await Session.Query<User>().ToListAsync();

        var request = Fake.RequestsTo("/queries").Single();
        Assert.Equal("POST", request.Method);
        Assert.Equal("/databases/db/queries", request.PathAndQuery);
        Assert.Equal("""{"Query":"from 'Users'","QueryParameters":{},"WaitForNonStaleResults":false}""", request.Body);
        await AssertSentAsync(Session.Query<CorpusOrder>(), "from 'CorpusOrders'");
        await AssertSentAsync(Session.Query<CorpusOrder>(collectionName: "Orders"), "from 'Orders'");
    }

    [Fact]
    public async Task ToStringGivesTheRqlTheQuerySends()
    {
        var query = Session.Query<User>().Where(x => x.Name == "Ann").OrderBy(x => x.Age).Take(3);

        Assert.Equal("from 'Users' where Name = $p0 order by Age as long limit 3", query.ToString());
        await AssertSentAsync(query, query.ToString()!, """{"p0":"Ann"}""");
    }

    [Fact]
    public async Task EachComparisonOperatorBecomesItsRqlOperatorWithTheValueAsAParameter()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>().Where(x => x.Company == "companies/1-A"), "from 'CorpusOrders' where Company = $p0", """{"p0":"companies/1-A"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Name != "Ann"), "from 'Users' where Name != $p0", """{"p0":"Ann"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Age < 30), "from 'Users' where Age < $p0", """{"p0":30}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Age <= 30), "from 'Users' where Age <= $p0", """{"p0":30}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Age > 30), "from 'Users' where Age > $p0", """{"p0":30}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Age >= 30), "from 'Users' where Age >= $p0", """{"p0":30}""");
    }

    [Fact]
    public async Task AValueOnTheLeftIsMovedRightAndTheOperatorMirrored()
    {
        await AssertSentAsync(Session.Query<User>().Where(x => 30 < x.Age), "from 'Users' where Age > $p0", """{"p0":30}""");
        await AssertSentAsync(Session.Query<User>().Where(x => "Ann" == x.Name), "from 'Users' where Name = $p0", """{"p0":"Ann"}""");
    }

    [Fact]
    public async Task AndOrAndNotKeepTheirMeaningWithParentheses()
    {
        await AssertSentAsync(
            Session.Query<User>().Where(x => x.Age > 1 && (x.Name == "a" || x.Name == "b")),
            "from 'Users' where Age > $p0 and (Name = $p1 or Name = $p2)",
            """{"p0":1,"p1":"a","p2":"b"}""");
        await AssertSentAsync(
            Session.Query<User>().Where(x => x.Age > 1 && x.Age < 9 || x.Name == "c"),
            "from 'Users' where Age > $p0 and Age < $p1 or Name = $p2",
            """{"p0":1,"p1":9,"p2":"c"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => !(x.Name == "a")), "from 'Users' where not Name = $p0", """{"p0":"a"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => !(x.Name == "a" || x.Age == 2)), "from 'Users' where not (Name = $p0 or Age = $p1)", """{"p0":"a","p1":2}""");
    }

    [Fact]
    public async Task SeveralWheresAreJoinedByAnd()
    {
        await AssertSentAsync(
            Session.Query<User>().Where(x => x.Name == "a" || x.Name == "b").Where(x => x.Age == 3),
            "from 'Users' where (Name = $p0 or Name = $p1) and Age = $p2",
            """{"p0":"a","p1":"b","p2":3}""");
    }

    [Fact]
    public async Task StartsWithAndEndsWithBecomeRqlMethods()
    {
        await AssertSentAsync(Session.Query<User>().Where(x => x.Name.StartsWith("An")), "from 'Users' where startsWith(Name, $p0)", """{"p0":"An"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Name.EndsWith("nn")), "from 'Users' where endsWith(Name, $p0)", """{"p0":"nn"}""");
    }

    [Fact]
    public async Task ContainsOnADocumentArrayMatchesAnyElement()
    {
        await AssertSentAsync(Session.Query<User>().Where(x => x.Tags.Contains("vip")), "from 'Users' where Tags = $p0", """{"p0":"vip"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Tags.Any(t => t == "vip")), "from 'Users' where Tags = $p0", """{"p0":"vip"}""");
    }

    [Fact]
    public async Task ContainsOnAClientListBecomesInWithOneArrayParameter()
    {
        var names = new List<string> { "Ann", "Bob" };
        await AssertSentAsync(Session.Query<User>().Where(x => names.Contains(x.Name)), "from 'Users' where Name in ($p0)", """{"p0":["Ann","Bob"]}""");

        var array = new[] { "Cid" };
        await AssertSentAsync(Session.Query<User>().Where(x => array.Contains(x.Name)), "from 'Users' where Name in ($p0)", """{"p0":["Cid"]}""");

        var statuses = new[] { Status.Shipped, Status.Cancelled };
        await AssertSentAsync(Session.Query<Order>().Where(x => statuses.Contains(x.Status)), "from 'Orders' where Status in ($p0)", """{"p0":["Shipped","Cancelled"]}""");
    }

    [Fact]
    public async Task AnyOverADocumentArrayComparesItsElementsFields()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().Where(x => x.Lines.Any(l => l.Product == "products/1-A")),
            "from 'CorpusOrders' where Lines[].Product = $p0",
            """{"p0":"products/1-A"}""");
        await AssertSentAsync(
            Session.Query<CorpusOrder>().Where(x => x.Lines.Any(l => l.Quantity > 5 && l.ProductName.StartsWith("Ch"))),
            "from 'CorpusOrders' where Lines[].Quantity > $p0 and startsWith(Lines[].ProductName, $p1)",
            """{"p0":5,"p1":"Ch"}""");
    }

    [Fact]
    public async Task NestedMembersAndDictionaryKeysBecomeDottedPaths()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>().Where(x => x.ShipTo.City == "Lyon"), "from 'CorpusOrders' where ShipTo.City = $p0", """{"p0":"Lyon"}""");
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Attributes["color"] == "red"), "from 'Orders' where Attributes.color = $p0", """{"p0":"red"}""");
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Attributes["gift wrap"] == "yes"), "from 'Orders' where Attributes.'gift wrap' = $p0", """{"p0":"yes"}""");
    }

    [Fact]
    public async Task NullIsWrittenAsNullNotAsAParameter()
    {
        await AssertSentAsync(Session.Query<User>().Where(x => x.Address == null), "from 'Users' where Address = null");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Address != null), "from 'Users' where Address != null");
        string? missing = null;
        await AssertSentAsync(Session.Query<Address>().Where(x => x.Zip == missing), "from 'Addresses' where Zip = null");
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Priority.HasValue), "from 'Orders' where Priority != null");
    }

    [Fact]
    public async Task TheIdPropertyIsIdFunction()
    {
        await AssertSentAsync(Session.Query<User>().Where(x => x.Id == "users/1"), "from 'Users' where id() = $p0", """{"p0":"users/1"}""");
        var ids = new[] { "users/1", "users/2" };
        await AssertSentAsync(Session.Query<User>().Where(x => ids.Contains(x.Id)), "from 'Users' where id() in ($p0)", """{"p0":["users/1","users/2"]}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Id!.StartsWith("users/")), "from 'Users' where startsWith(id(), $p0)", """{"p0":"users/"}""");
    }

    [Fact]
    public async Task TheConventionsIdPropertyNameDecidesWhichMemberIsTheId()
    {
        using var store = TestStores.Create(Fake, s => s.Conventions.IdPropertyName = "Key");
        using var session = store.OpenAsyncSession();

        await session.Query<Widget>().Where(x => x.Key == "widgets/1" && x.Color == "red").ToListAsync();

        AssertLastQuery("from 'Widgets' where id() = $p0 and Color = $p1", """{"p0":"widgets/1","p1":"red"}""");
    }

    [Fact]
    public async Task BooleanMembersCompareWithTrueOrFalse()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>().Where(x => x.Valid), "from 'CorpusOrders' where Valid = true");
        await AssertSentAsync(Session.Query<CorpusOrder>().Where(x => !x.Valid), "from 'CorpusOrders' where Valid = false");
        await AssertSentAsync(Session.Query<CorpusOrder>().Where(x => x.Valid == false), "from 'CorpusOrders' where Valid = $p0", """{"p0":false}""");
        await AssertSentAsync(Session.Query<CorpusOrder>().Where(x => x.Valid && x.Freight > 1), "from 'CorpusOrders' where Valid = true and Freight > $p0", """{"p0":1}""");
    }

    [Fact]
    public async Task CapturedValuesAndClientComputationsAreParametersWrittenAsDocumentsStoreThem()
    {
        var name = "Ann";
        var user = new User { Name = "Bob" };
        await AssertSentAsync(
            Session.Query<User>().Where(x => x.Name == name || x.Name == user.Name || x.Name == name.ToUpperInvariant()),
            "from 'Users' where Name = $p0 or Name = $p1 or Name = $p2",
            """{"p0":"Ann","p1":"Bob","p2":"ANN"}""");

        var since = new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc);
        await AssertSentAsync(Session.Query<CorpusOrder>().Where(x => x.OrderedAt >= since), "from 'CorpusOrders' where OrderedAt >= $p0", """{"p0":"2026-01-02T03:04:05Z"}""");
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Status == Status.Shipped), "from 'Orders' where Status = $p0", """{"p0":"Shipped"}""");
        var status = Status.Cancelled;
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Status != status), "from 'Orders' where Status != $p0", """{"p0":"Cancelled"}""");
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Priority > 2), "from 'Orders' where Priority > $p0", """{"p0":2}""");
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Total == 9.5m), "from 'Orders' where Total = $p0", """{"p0":9.5}""");
    }

    [Fact]
    public async Task ValuesNeverAppearInTheQueryText()
    {
        await Session.Query<User>().Where(x => x.Name == "x' or true or Name = 'y").ToListAsync();

        AssertLastQuery("from 'Users' where Name = $p0", """{"p0":"x\u0027 or true or Name = \u0027y"}""");
    }

    [Fact]
    public async Task ConditionsOnClientValuesOnlyAreDecidedOnTheClient()
    {
        string? filter = null;
        await AssertSentAsync(Session.Query<User>().Where(x => filter == null || x.Name == filter), "from 'Users'");
        filter = "Ann";
        await AssertSentAsync(Session.Query<User>().Where(x => filter == null || x.Name == filter), "from 'Users' where Name = $p0", """{"p0":"Ann"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => true), "from 'Users'");
    }

    [Fact]
    public async Task StringComparisonsThroughCompareToOrderStrings()
    {
        await AssertSentAsync(Session.Query<User>().Where(x => x.Name.CompareTo("M") > 0), "from 'Users' where Name > $p0", """{"p0":"M"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => string.Compare(x.Name, "M") <= 0), "from 'Users' where Name <= $p0", """{"p0":"M"}""");
        await AssertSentAsync(Session.Query<User>().Where(x => x.Name.Equals("Ann")), "from 'Users' where Name = $p0", """{"p0":"Ann"}""");
    }

    [Fact]
    public async Task MemberNamesFollowTheSerializersNames()
    {
        await AssertSentAsync(Session.Query<Article>().Where(x => x.Title == "News").OrderBy(x => x.Title), "from 'Articles' where title = $p0 order by title", """{"p0":"News"}""");

        using var store = TestStores.Create(Fake, s => s.Conventions.SerializerOptions = new JsonSerializerOptions(DocumentConventions.CreateDefaultSerializerOptions()) { PropertyNamingPolicy = JsonNamingPolicy.CamelCase });
        using var session = store.OpenAsyncSession();
        await session.Query<CorpusOrder>().Where(x => x.ShipTo.City == "Lyon" && x.Id == "orders/1").OrderBy(x => x.Freight).ToListAsync();
        AssertLastQuery("from 'CorpusOrders' where shipTo.city = $p0 and id() = $p1 order by freight as double", """{"p0":"Lyon","p1":"orders/1"}""");
    }

    [Fact]
    public async Task FieldNamesThatAreKeywordsOrNotIdentifiersAreQuoted()
    {
        await AssertSentAsync(Session.Query<Order>().Where(x => x.Attributes["order"] == "1" && x.Attributes["2nd"] == "2"), "from 'Orders' where Attributes.'order' = $p0 and Attributes.'2nd' = $p1", """{"p0":"1","p1":"2"}""");
    }

    [Fact]
    public async Task OrderByIsTypedForNumbersAsLongOrDouble()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>().OrderBy(x => x.Freight), "from 'CorpusOrders' order by Freight as double");
        await AssertSentAsync(Session.Query<User>().OrderByDescending(x => x.Age), "from 'Users' order by Age as long desc");
        await AssertSentAsync(Session.Query<Order>().OrderBy(x => x.Priority).ThenBy(x => x.Weight), "from 'Orders' order by Priority as long, Weight as double");
        await AssertSentAsync(
            Session.Query<CorpusOrder>().OrderBy(x => x.Company).ThenByDescending(x => x.OrderedAt).ThenBy(x => x.ShipTo.City),
            "from 'CorpusOrders' order by Company, OrderedAt desc, ShipTo.City");
        await AssertSentAsync(Session.Query<Order>().OrderBy(x => x.Status), "from 'Orders' order by Status");
    }

    [Fact]
    public async Task ALaterOrderByReplacesTheEarlierOrder()
    {
        await AssertSentAsync(Session.Query<User>().OrderBy(x => x.Name).OrderByDescending(x => x.Age), "from 'Users' order by Age as long desc");
    }

    [Fact]
    public async Task SkipAndTakeBecomeLimitAndOffset()
    {
        await AssertSentAsync(Session.Query<User>().Skip(20).Take(10), "from 'Users' limit 10 offset 20");
        await AssertSentAsync(Session.Query<User>().Take(10), "from 'Users' limit 10");
        await AssertSentAsync(Session.Query<User>().Take(10).Skip(2), "from 'Users' limit 8 offset 2");
        await AssertSentAsync(Session.Query<User>().Take(10).Take(3).Skip(1).Skip(1), "from 'Users' limit 1 offset 2");
        await AssertSentAsync(Session.Query<User>().Skip(5), "from 'Users' limit 2147483647 offset 5");
    }

    [Fact]
    public async Task ClausesComeInRqlOrderWhateverTheLinqOrder()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().OrderByDescending(x => x.OrderedAt).Where(x => x.Company == "companies/1-A").Include(x => x.Employee).Take(20),
            "from 'CorpusOrders' where Company = $p0 order by OrderedAt desc include Employee limit 20",
            """{"p0":"companies/1-A"}""");
    }

    [Fact]
    public async Task SelectIntoAnAnonymousTypeNamesEachFieldItsMember()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().Select(x => new { x.Company, City = x.ShipTo.City }),
            "from 'CorpusOrders' select Company, ShipTo.City as City");
        await AssertSentAsync(
            Session.Query<CorpusOrder>().Select(x => new { x.ShipTo.City, Products = x.Lines.Select(l => l.Product) }),
            "from 'CorpusOrders' select ShipTo.City as City, Lines[].Product as Products");
    }

    [Fact]
    public async Task SelectIntoADtoOrARecordUsesItsJsonNames()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().Where(x => x.Valid).Select(x => new OrderSummary { Company = x.Company, City = x.ShipTo.City }),
            "from 'CorpusOrders' where Valid = true select Company, ShipTo.City as City");
        await AssertSentAsync(
            Session.Query<CorpusOrder>().Select(x => new CompanyCity(x.Company, x.ShipTo.City)),
            "from 'CorpusOrders' select Company, ShipTo.City as City");
    }

    [Fact]
    public async Task TheIdIsNotSelectedButTakenFromEachResultsMetadata()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>().Select(x => new { x.Id, x.Company }), "from 'CorpusOrders' select Company");
        await AssertSentAsync(Session.Query<CorpusOrder>().Select(x => x.Id), "from 'CorpusOrders'");
    }

    [Fact]
    public async Task SelectOfOneMemberSelectsThatField()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>().Select(x => x.Company), "from 'CorpusOrders' select Company");
        await AssertSentAsync(Session.Query<CorpusOrder>().Select(x => x.ShipTo.City), "from 'CorpusOrders' select ShipTo.City as City");
        await AssertSentAsync(Session.Query<User>().Select(x => x), "from 'Users'");
    }

    [Fact]
    public async Task SkipAndTakeAfterSelectStillPage()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>().Select(x => x.Company).Skip(1).Take(2), "from 'CorpusOrders' select Company limit 2 offset 1");
    }

    [Fact]
    public async Task SearchBecomesSearchWithTheWordsAsAParameter()
    {
        await AssertSentAsync(Session.Query<Article>().Search(x => x.Body, "jackdaw raven"), "from 'Articles' where search(Body, $p0)", """{"p0":"jackdaw raven"}""");
        await AssertSentAsync(Session.Query<Article>().Search(x => x.Body, "jackdaw raven", SearchOperator.And), "from 'Articles' where search(Body, $p0, and)", """{"p0":"jackdaw raven"}""");
    }

    [Fact]
    public async Task ConsecutiveSearchesAreJoinedByOrAndTheRestByAnd()
    {
        await AssertSentAsync(
            Session.Query<Article>().Where(x => x.Published).Search(x => x.Body, "jackdaw").Search(x => x.Title, "crow").Where(x => x.Author == "users/1"),
            "from 'Articles' where Published = true and (search(Body, $p0) or search(title, $p1)) and Author = $p2",
            """{"p0":"jackdaw","p1":"crow","p2":"users/1"}""");
    }

    [Fact]
    public async Task IncludeByMemberOrByPath()
    {
        await AssertSentAsync(Session.Query<Article>().Include(x => x.Author), "from 'Articles' include Author");
        await AssertSentAsync(Session.Query<CorpusOrder>().Include(x => x.Lines.Select(l => l.Product)).Include("Employee"), "from 'CorpusOrders' include Lines[].Product, Employee");
        await AssertSentAsync(Session.Query<CorpusOrder>().Include("Odd name"), "from 'CorpusOrders' include 'Odd name'");
    }

    [Fact]
    public async Task AQueryOnAnIndexReadsFromIndexByNameOrByItsTask()
    {
        await AssertSentAsync(Session.Query<CorpusOrder>("Orders/Totals").Where(x => x.Company == "c"), "from index 'Orders/Totals' where Company = $p0", """{"p0":"c"}""");
        await AssertSentAsync(Session.Query<CorpusOrder, Orders_Totals>(), "from index 'Orders/Totals'");
        await AssertSentAsync(Session.Query<User, UsersSearch>(), "from index 'Users/Search'");
    }

    [Fact]
    public async Task WaitForNonStaleResultsSendsTheFlagAndTheTimeout()
    {
        await Session.Query<User>().Customize(x => x.WaitForNonStaleResults()).ToListAsync();
        Assert.True((bool)LastQuery["WaitForNonStaleResults"]!);
        Assert.Equal("00:00:15", (string?)LastQuery["WaitForNonStaleResultsTimeout"]);

        await Session.Query<User>().Where(x => x.Age > 1).Customize(x => x.WaitForNonStaleResults(TimeSpan.FromSeconds(3))).ToListAsync();
        Assert.True((bool)LastQuery["WaitForNonStaleResults"]!);
        Assert.Equal("00:00:03", (string?)LastQuery["WaitForNonStaleResultsTimeout"]);

        await Session.Query<User>().ToListAsync();
        Assert.False((bool)LastQuery["WaitForNonStaleResults"]!);
        Assert.False(LastQuery.ContainsKey("WaitForNonStaleResultsTimeout"));
    }
}
