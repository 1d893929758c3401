using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>
/// kill -9 of a child server while it builds and keeps up three map-reduce indexes and writes go on:
/// after every restart the index goes on from its reduce store's last commit, and once it is
/// non-stale every key equals the model (nothing counted twice, nothing missed).
/// </summary>
public sealed class MapReduceCrashTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task KillsDuringReducesLoseAndDoubleNothing()
    {
        const int seed = 3030;
        using var data = new TempFolder();
        var random = new Random(seed);
        var model = new Dictionary<string, Orders.Order>(StringComparer.OrdinalIgnoreCase);
        var next = 0;
        var killedWhileStale = 0;
        var uncertain = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        string Company() => random.Next(3) == 0 ? "companies/0" : $"companies/{random.Next(1, 20)}";

        for (var round = 0; round < 4; round++)
        {
            using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
            using var client = new HttpClient { BaseAddress = await server.WaitForAddressAsync(StartTimeout), Timeout = TimeSpan.FromSeconds(60) };
            if (round == 0)
            {
                using (var created = await client.PutAsync("/admin/databases?name=Crash", null))
                {
                    Assert.Equal(HttpStatusCode.Created, created.StatusCode);
                }
                await Orders.WriteAsync(client, "Crash", Enumerable.Range(0, 20_000).Select(_ => ($"orders/{next++}", (Orders.Order?)Orders.Random(random, Company()))).ToList()
                    .Select(c => { model[c.Item1] = c.Item2!; return c; }));
                await Orders.PutIndexesAsync(client, "Crash",
                    Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce),
                    Orders.Index(Orders.ByCompanyMonth, [Orders.ByCompanyMonthMap], Orders.ByCompanyMonthReduce),
                    Orders.Index(Orders.LinesByCompany, [Orders.LinesByCompanyMap], Orders.ByCompanyReduce));
            }
            else
            {
                // What the last kill cut short: the documents say whether it was stored.
                await ResolveAsync(client, model, uncertain);
            }

            // A writer goes on (new orders, updates, deletes) until the kill; a batch it had sent
            // but not seen acknowledged is settled after the restart.
            using var stop = new CancellationTokenSource();
            var writerRandom = new Random(random.Next());
            var writer = Task.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    var batch = new List<(string Id, Orders.Order? Order)>();
                    var ids = model.Keys.ToList();
                    for (var i = 0; i < 500; i++)
                    {
                        var roll = writerRandom.Next(10);
                        var company = writerRandom.Next(3) == 0 ? "companies/0" : $"companies/{writerRandom.Next(1, 20)}";
                        if (roll < 4)
                        {
                            batch.Add(($"orders/{next++}", Orders.Random(writerRandom, company)));
                        }
                        else if (roll < 8)
                        {
                            batch.Add((ids[writerRandom.Next(ids.Count)], Orders.Random(writerRandom, company)));
                        }
                        else
                        {
                            batch.Add((ids[writerRandom.Next(ids.Count)], null));
                        }
                    }
                    uncertain.UnionWith(batch.Select(b => b.Id));
                    try
                    {
                        await Orders.WriteAsync(client, "Crash", batch);
                    }
                    catch (Exception) when (stop.IsCancellationRequested)
                    {
                        return;
                    }
                    foreach (var (id, order) in batch)
                    {
                        if (order is null)
                        {
                            model.Remove(id);
                        }
                        else
                        {
                            model[id] = order;
                        }
                    }
                    uncertain.Clear();
                }
            });

            await Task.Delay(random.Next(200, 2500));
            using (var stats = await client.GetAsync("/databases/Crash/indexes/stats"))
            {
                if ((await Api.JsonAsync(stats)).GetProperty("Results").EnumerateArray().Any(i => i.GetProperty("IsStale").GetBoolean()))
                {
                    killedWhileStale++;
                }
            }
            stop.Cancel();
            server.KillHard();
            await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
            await writer;
        }

        using var final = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        using var finalClient = new HttpClient { BaseAddress = await final.WaitForAddressAsync(StartTimeout), Timeout = TimeSpan.FromMinutes(4) };
        await ResolveAsync(finalClient, model, uncertain);
        var context = $"seed {seed}, after 4 kills ({killedWhileStale} while stale)";
        Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(finalClient, "Crash", Orders.ByCompany, Orders.CompanyOf), $"{Orders.ByCompany}, {context}");
        Orders.AssertSame(Orders.ExpectedByCompanyMonth(model), await Orders.ResultsAsync(finalClient, "Crash", Orders.ByCompanyMonth, Orders.CompanyMonthOf), $"{Orders.ByCompanyMonth}, {context}");
        Orders.AssertSame(Orders.ExpectedLinesByCompany(model), await Orders.ResultsAsync(finalClient, "Crash", Orders.LinesByCompany, Orders.CompanyOf), $"{Orders.LinesByCompany}, {context}");
        Assert.True(killedWhileStale > 0, "no kill happened while an index was behind; the test proved less than it should");
        final.SendSigterm();
        await final.WaitForExitAsync(TimeSpan.FromSeconds(30));
    }

    [Fact]
    public async Task ACleanRestartReducesNothingAgainAndGoesOn()
    {
        using var data = new TempFolder();
        var random = new Random(77);
        var model = Enumerable.Range(0, 3000).ToDictionary(i => $"orders/{i}", i => Orders.Random(random, i % 2 == 0 ? "companies/big" : $"companies/{i % 9}"), StringComparer.OrdinalIgnoreCase);
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            using (var created = await server.Client.PutAsync("/admin/databases?name=Keep", null))
            {
                Assert.Equal(HttpStatusCode.Created, created.StatusCode);
            }
            await Orders.WriteAsync(server.Client, "Keep", model.Select(p => (p.Key, (Orders.Order?)p.Value)));
            await Orders.PutIndexesAsync(server.Client, "Keep", Orders.Index(Orders.ByCompany, [Orders.ByCompanyMap], Orders.ByCompanyReduce));
            Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(server.Client, "Keep", Orders.ByCompany, Orders.CompanyOf), "before the restart");
        }

        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(server.Client, "Keep", Orders.ByCompany, Orders.CompanyOf), "after the restart");
            var index = Jackdaw.Server.Indexing.IndexStore.Of(server.Host.Server.Databases.GetDatabase("Keep")).Get(Orders.ByCompany);
            Assert.Equal((0L, 0L, 0L, 0L), (index.DocumentsMapped, index.LeavesReduced, index.BranchesReduced, index.PackedKeysReduced));

            // New entries after the restart take new entry ids: they join the keys, replacing none.
            var changes = new List<(string, Orders.Order?)>();
            for (var i = 0; i < 200; i++)
            {
                var id = $"orders/{3000 + i}";
                model[id] = Orders.Random(random, i % 2 == 0 ? "companies/big" : "companies/3");
                changes.Add((id, model[id]));
            }
            model.Remove("orders/10");
            changes.Add(("orders/10", null));
            model["orders/11"] = model["orders/11"] with { Company = "companies/big" };
            changes.Add(("orders/11", model["orders/11"]));
            await Orders.WriteAsync(server.Client, "Keep", changes);
            Orders.AssertSame(Orders.ExpectedByCompany(model), await Orders.ResultsAsync(server.Client, "Keep", Orders.ByCompany, Orders.CompanyOf), "after writes following the restart");
            Assert.Equal(changes.Count - 1, index.DocumentsMapped);
        }
    }

    private static async Task ResolveAsync(HttpClient client, Dictionary<string, Orders.Order> model, HashSet<string> uncertain)
    {
        foreach (var id in uncertain)
        {
            using var response = await client.GetAsync($"/databases/Crash/docs?id={Uri.EscapeDataString(id)}");
            if (response.StatusCode == HttpStatusCode.NotFound)
            {
                model.Remove(id);
                continue;
            }
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            model[id] = Orders.Parse((await Api.JsonAsync(response)).GetProperty("Results")[0]);
        }
        uncertain.Clear();
    }
}
