using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Client.Tests.Queries;

/// <summary>What RQL LINQ's GroupBy, then a Select of the key, Count() and Sum(...), sends.</summary>
public sealed class GroupByLinqTests : QuerySender
{
    [Fact]
    public async Task GroupByWithKeyCountAndSumIsAGroupByQuery()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>(collectionName: "Orders").GroupBy(x => x.Company).Select(g => new { g.Key, Count = g.Count(), Total = g.Sum(x => x.Freight) }),
            "from 'Orders' group by Company select key() as Key, count() as Count, sum(Freight) as Total");
    }

    [Fact]
    public async Task ACompositeKeyGroupsBySeveralFieldsAndIsSelectedMemberByMember()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().GroupBy(x => new { x.Company, City = x.ShipTo.City }).Select(g => new { g.Key.Company, g.Key.City, Orders = g.LongCount() }),
            "from 'CorpusOrders' group by Company, ShipTo.City select Company as Company, ShipTo.City as City, count() as Orders");
    }

    [Fact]
    public async Task ADtoAndASingleTotalWorkToo()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().GroupBy(x => x.Employee).Select(g => new EmployeeTotal { Employee = g.Key, Freight = g.Sum(x => x.Freight) }).Take(5),
            "from 'CorpusOrders' group by Employee select key() as Employee, sum(Freight) as Freight limit 5");
        await AssertSentAsync(
            Session.Query<CorpusOrder>().GroupBy(x => x.Employee).Select(g => g.Count()),
            "from 'CorpusOrders' group by Employee select count() as Value");
    }

    private sealed class EmployeeTotal
    {
        public string Employee { get; set; } = "";

        public decimal Freight { get; set; }
    }
}
