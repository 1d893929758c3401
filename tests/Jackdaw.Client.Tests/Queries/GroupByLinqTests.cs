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

    [Fact]
    public async Task WhereOrderByAndTakeAfterTheSelectFilterAndSortTheGroupsByTheirMembers()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>(collectionName: "Orders").GroupBy(x => x.Company)
                .Select(g => new { g.Key, Count = g.Count(), Total = g.Sum(x => x.Freight) })
                .Where(r => r.Count > 5).OrderByDescending(r => r.Total).Take(10),
            "from 'Orders' group by Company where Count > $p0 order by Total as double desc select key() as Key, count() as Count, sum(Freight) as Total limit 10",
            """{"p0":5}""");
    }

    [Fact]
    public async Task ThenByTheKeyAndSkipAfterTheSelectSortByEachMember()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().GroupBy(x => x.Employee)
                .Select(g => new { g.Key, Orders = g.LongCount() })
                .Where(r => r.Key != "employees/1-A" && r.Orders >= 2).OrderBy(r => r.Orders).ThenByDescending(r => r.Key).Skip(2).Take(3),
            "from 'CorpusOrders' group by Employee where Key != $p0 and Orders >= $p1 order by Orders as long, Key desc select key() as Key, count() as Orders limit 3 offset 2",
            """{"p0":"employees/1-A","p1":2}""");
    }

    [Fact]
    public async Task ACompositeKeysMembersAreFilteredAndSortedByTheirSelectNames()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().GroupBy(x => new { x.Company, City = x.ShipTo.City })
                .Select(g => new { g.Key.Company, g.Key.City, Total = g.Sum(x => x.Freight) })
                .Where(r => r.City == "Paris").OrderBy(r => r.Company),
            "from 'CorpusOrders' group by Company, ShipTo.City where City = $p0 order by Company select Company as Company, ShipTo.City as City, sum(Freight) as Total",
            """{"p0":"Paris"}""");
    }

    [Fact]
    public async Task ASingleSelectedValueIsFilteredAndSortedAsValue()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().GroupBy(x => x.Company).Select(g => g.Count()).Where(v => v > 1).OrderByDescending(v => v),
            "from 'CorpusOrders' group by Company where Value > $p0 order by Value as long desc select count() as Value",
            """{"p0":1}""");
    }

    [Fact]
    public async Task AWhereBeforeGroupByOnTheGroupByFieldsJoinsTheOneWhereAsRavenDbSendsIt()
    {
        await AssertSentAsync(
            Session.Query<CorpusOrder>().Where(x => x.ShipTo.City == "Paris" || x.Company == "companies/1-A")
                .GroupBy(x => new { x.Company, City = x.ShipTo.City })
                .Select(g => new { g.Key.Company, g.Key.City, Count = g.Count() })
                .Where(r => r.Count > 1),
            "from 'CorpusOrders' group by Company, ShipTo.City where (ShipTo.City = $p0 or Company = $p1) and Count > $p2 select Company as Company, ShipTo.City as City, count() as Count",
            """{"p0":"Paris","p1":"companies/1-A","p2":1}""");
    }

    private sealed class EmployeeTotal
    {
        public string Employee { get; set; } = "";

        public decimal Freight { get; set; }
    }
}
