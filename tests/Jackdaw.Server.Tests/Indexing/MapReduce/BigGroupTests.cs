using Jackdaw.Server.Indexing;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>
/// One reduce key of 100,000 entries: an update or a delete of one of them re-reduces one leaf and
/// the branches above it, not the group (counted with the index's reduce counters).
/// </summary>
public sealed class BigGroupTests
{
    private const int Count = 100_000;

    [Fact]
    public async Task AnUpdateInAGroupOf100000ReducesOneLeafAndItsPath()
    {
        await using var server = await InProcessServer.StartAsync("--max-body-size", "67108864");
        var client = server.Client;
        using (var created = await client.PutAsync("/admin/databases?name=Big", null))
        {
            Assert.True(created.IsSuccessStatusCode);
        }
        var random = new Random(100);
        var model = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < Count; i++)
        {
            model[$"orders/{i}"] = new Orders.Order("companies/big", "2024-01", [new Orders.Line(random.Next(1, 100), random.Next(1, 20))]);
        }
        for (var i = 0; i < 10; i++)
        {
            model[$"small/{i}"] = new Orders.Order("companies/small", "2024-01", [new Orders.Line(random.Next(1, 100), random.Next(1, 20))]);
        }
        await Orders.BulkInsertAsync(client, "Big", model.Select(p => (p.Key, p.Value)));
        await Orders.PutIndexesAsync(client, "Big", Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce));
        Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(client, "Big", Orders.ByCompany, Orders.CompanyOf), "after the build");

        var index = IndexStore.Of(server.Host.Server.Databases.GetDatabase("Big")).Get(Orders.ByCompany);
        (long Leaves, long Branches, long Packed) Counters() => (index.LeavesReduced, index.BranchesReduced, index.PackedKeysReduced);

        // Entries are added in id order, leaves split at 256 into halves, branches at 64: about
        // 780 leaves of 128 under 25 branches under the root. One update: one leaf, two branches.
        var before = Counters();
        var id = $"orders/{Count / 2 + 17}";
        model[id] = model[id] with { Lines = [new Orders.Line(1000, 7)] };
        await Orders.WriteAsync(client, "Big", [(id, model[id])]);
        Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(client, "Big", Orders.ByCompany, Orders.CompanyOf), "after an update");
        var after = Counters();
        Assert.Equal((1L, 2L, 0L), (after.Leaves - before.Leaves, after.Branches - before.Branches, after.Packed - before.Packed));

        // A delete: the same, and the count goes down by one.
        before = after;
        model.Remove("orders/3");
        await Orders.WriteAsync(client, "Big", [("orders/3", null)]);
        Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(client, "Big", Orders.ByCompany, Orders.CompanyOf), "after a delete");
        after = Counters();
        Assert.Equal((1L, 2L, 0L), (after.Leaves - before.Leaves, after.Branches - before.Branches, after.Packed - before.Packed));

        // An update of the small group reduces it whole (it is packed), and nothing of the big one.
        before = after;
        model["small/4"] = model["small/4"] with { Lines = [new Orders.Line(3, 3)] };
        await Orders.WriteAsync(client, "Big", [("small/4", model["small/4"])]);
        Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(client, "Big", Orders.ByCompany, Orders.CompanyOf), "after an update of the small group");
        after = Counters();
        Assert.Equal((0L, 0L, 1L), (after.Leaves - before.Leaves, after.Branches - before.Branches, after.Packed - before.Packed));
    }
}
