using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>
/// Random orders written in batches (new orders, updates that move an order to another company or
/// month or change its lines, deletes, re-creates of deleted ids), and after each batch every key's
/// Count and Total of three map-reduce indexes (by company; by company and month, a composite key;
/// one entry per line) equal LINQ <c>GroupBy</c> over the same orders in memory. One company grows
/// past 2,000 orders and its lines past 16,000 entries (packed → tree, leaf splits, branch splits),
/// then loses a run of consecutive orders (empty leaves) and finally every order (the key goes).
/// </summary>
public sealed class MapReduceModelTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Theory]
    [InlineData(30)]
    [InlineData(31)]
    public async Task EveryKeyEqualsTheModelAfterEveryBatch(int seed)
    {
        var db = await fixture.CreateDatabaseAsync();
        await Orders.PutIndexesAsync(Client, db,
            Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce),
            Orders.Index(Orders.ByCompanyMonth, [Orders.ByCompanyMonthMap], Orders.ByCompanyMonthReduce),
            Orders.Index(Orders.LinesByCompany, [Orders.LinesByCompanyMap], Orders.ByCompanyReduce));

        var random = new Random(seed);
        var model = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        var deleted = new List<string>();
        var next = 0;
        // Skewed: companies/0 is most orders (a tree soon), the others stay small or middling.
        string Company() => random.Next(10) switch
        {
            < 4 => "companies/0",
            < 6 => "companies/1",
            _ => $"companies/{random.Next(2, 12)}",
        };

        async Task StepAsync(string what, List<(string Id, Orders.Order? Order)> changes)
        {
            await Orders.WriteAsync(Client, db, changes);
            foreach (var (id, order) in changes)
            {
                if (order is null)
                {
                    if (model.Remove(id))
                    {
                        deleted.Add(id);
                    }
                }
                else
                {
                    model[id] = order;
                    deleted.Remove(id);
                }
            }
            var context = $"seed {seed}, after {what}";
            Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(Client, db, Orders.ByCompany, Orders.CompanyOf), $"{Orders.ByCompany}, {context}");
            Orders.AssertSame(Orders.ExpectedByCompanyMonth(model), await Orders.ResultsAsync(Client, db, Orders.ByCompanyMonth, Orders.CompanyMonthOf), $"{Orders.ByCompanyMonth}, {context}");
            Orders.AssertSame(Orders.ExpectedLinesByCompany(model), await Orders.ResultsAsync(Client, db, Orders.LinesByCompany, Orders.CompanyOf), $"{Orders.LinesByCompany}, {context}");
        }

        List<(string, Orders.Order?)> Mixed(int count)
        {
            var changes = new List<(string, Orders.Order?)>();
            var ids = model.Keys.ToList();
            for (var i = 0; i < count; i++)
            {
                var roll = random.Next(100);
                if (roll < 30 || ids.Count == 0)
                {
                    changes.Add(($"orders/{next++}", Orders.Random(random, Company())));
                }
                else if (roll < 65)
                {
                    // An update: the same company with other lines, or another company or month.
                    var id = ids[random.Next(ids.Count)];
                    var old = model[id];
                    var fresh = random.Next(3) switch
                    {
                        0 => Orders.Random(random, old.Company) with { Month = old.Month },
                        1 => old with { Company = Company() },
                        _ => old with { Month = $"2024-{random.Next(1, 13):00}" },
                    };
                    changes.Add((id, fresh));
                }
                else if (roll < 85)
                {
                    changes.Add((ids[random.Next(ids.Count)], null));
                }
                else if (deleted.Count > 0)
                {
                    changes.Add((deleted[random.Next(deleted.Count)], Orders.Random(random, Company())));
                }
                else
                {
                    changes.Add(($"orders/{next++}", Orders.Random(random, Company())));
                }
            }
            return changes;
        }

        await StepAsync("the first orders", Enumerable.Range(0, 400).Select(_ => ($"orders/{next++}", (Orders.Order?)Orders.Random(random, Company()))).ToList());
        for (var step = 0; step < 6; step++)
        {
            await StepAsync($"mixed batch {step}", Mixed(random.Next(50, 600)));
        }

        // companies/big: 6,000 orders of about 2.5 lines each, in one batch and then in small ones.
        var big = new List<string>();
        var bigOrders = new List<(string, Orders.Order?)>();
        for (var i = 0; i < 5000; i++)
        {
            big.Add($"big/{i}");
            bigOrders.Add(($"big/{i}", Orders.Random(random, "companies/big")));
        }
        await StepAsync("5,000 orders of one company", bigOrders);
        for (var step = 0; step < 4; step++)
        {
            var more = Enumerable.Range(0, 250).Select(_ => ($"big/{big.Count}", (Orders.Order?)Orders.Random(random, "companies/big"))).ToList();
            big.AddRange(more.Select(m => m.Item1));
            more.AddRange(Mixed(100));
            // Updates inside the big company touch its leaves here and there.
            more.AddRange(Enumerable.Range(0, 40).Select(_ => big[random.Next(big.Count)]).Distinct().Select(id => (id, (Orders.Order?)Orders.Random(random, "companies/big"))));
            await StepAsync($"big batch {step}", more);
        }

        // A run of consecutive orders goes: whole leaves empty.
        var from = random.Next(500, 2000);
        await StepAsync("deleting a run of 1,500 orders of the big company", big.Skip(from).Take(1500).Select(id => (id, (Orders.Order?)null)).ToList());
        await StepAsync("re-creating part of the run", big.Skip(from + 200).Take(300).Select(id => (id, (Orders.Order?)Orders.Random(random, "companies/big"))).ToList());
        for (var step = 0; step < 3; step++)
        {
            await StepAsync($"mixed batch after the run {step}", Mixed(random.Next(50, 400)));
        }

        // A small company and the big one vanish entirely; then the big one comes back small.
        var small = model.Where(p => p.Value.Company == "companies/5").Select(p => p.Key).ToList();
        await StepAsync("deleting every order of companies/5", small.Select(id => (id, (Orders.Order?)null)).ToList());
        await StepAsync("deleting every order of the big company", model.Where(p => p.Value.Company == "companies/big").Select(p => (p.Key, (Orders.Order?)null)).ToList());
        await StepAsync("re-creating three orders of the big company", big.Take(3).Select(id => (id, (Orders.Order?)Orders.Random(random, "companies/big"))).ToList());
        await StepAsync("moving every order of companies/1 to companies/0", model.Where(p => p.Value.Company == "companies/1").Select(p => (p.Key, (Orders.Order?)(p.Value with { Company = "companies/0" }))).ToList());

        // The big keys went through trees of leaves and branches, the small ones stayed packed.
        var indexes = Jackdaw.Server.Indexing.IndexStore.Of(fixture.Server.Host.Server.Databases.GetDatabase(db));
        var lines = indexes.Get(Orders.LinesByCompany);
        Assert.True(lines.LeavesReduced > 0 && lines.BranchesReduced > 0 && lines.PackedKeysReduced > 0, $"seed {seed}: {lines.LeavesReduced} leaves, {lines.BranchesReduced} branches, {lines.PackedKeysReduced} packed keys reduced");
    }
}
