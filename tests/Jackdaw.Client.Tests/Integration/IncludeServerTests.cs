using System.Text.Json;
using Jackdaw.Client.Conventions;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// <c>session.Include(path).LoadAsync(...)</c> against the real server: one request brings the
/// documents and those they reference; the session then answers loads of those without another,
/// and knows which referenced ids have no document.
/// </summary>
public sealed class IncludeServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private async Task<DocumentStore> StoreWithOrdersAsync(Action<DocumentStore>? configure = null)
    {
        var store = await server.NewStoreAsync(configure);
        await QueryServerTests.StoreAsync(
            store,
            new Company { Id = "companies/1", Name = "Acme" },
            new Company { Id = "companies/2", Name = "Globex" },
            new Company { Id = "products/1", Name = "Anvil" },
            new Company { Id = "products/2", Name = "Rocket" },
            new Order { Id = "orders/1", Customer = "companies/1", Lines = [new OrderLine { Product = "products/1" }, new OrderLine { Product = "products/2" }] },
            new Order { Id = "orders/2", Customer = "companies/2", Lines = [new OrderLine { Product = "products/1" }] },
            new Order { Id = "orders/3", Customer = "companies/404", Lines = [new OrderLine { Product = "products/404" }] });
        return store;
    }

    [Fact]
    public async Task AnIncludedDocumentComesInTheSameRequestAndLoadsWithoutAnother()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();

        var order = await session.Include<Order>(o => o.Customer).LoadAsync("orders/1");
        Assert.Equal("companies/1", order!.Customer);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.True(session.Advanced.IsLoaded("companies/1"));
        Assert.False(session.Advanced.IsLoaded("products/1"));

        var company = await session.LoadAsync<Company>("companies/1");
        Assert.Equal("Acme", company!.Name);
        Assert.Same(company, await session.LoadAsync<Company>("COMPANIES/1"));
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        // The included document is tracked once loaded: a change to it is saved.
        company.Name = "Acme Corp";
        await session.SaveChangesAsync();
        using var check = store.OpenAsyncSession();
        Assert.Equal("Acme Corp", (await check.LoadAsync<Company>("companies/1"))!.Name);
    }

    [Fact]
    public async Task SeveralIdsAndSeveralPathsAreOneRequest()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();

        var orders = await session.Include("Customer").Include("Lines[].Product").LoadAsync<Order>(["orders/1", "orders/2", "orders/404"]);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.Equal("companies/1", orders["orders/1"]!.Customer);
        Assert.Null(orders["orders/404"]);

        var companies = await session.LoadAsync<Company>(["companies/1", "companies/2", "products/1", "products/2"]);
        Assert.Equal(["Acme", "Globex", "Anvil", "Rocket"], companies.Values.Select(c => c!.Name));
        Assert.Null(await session.LoadAsync<Order>("orders/404"));
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task MemberPathsOverCollectionsIncludeEveryElement()
    {
        using var store = await StoreWithOrdersAsync();
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann", Tags = ["companies/1", "companies/2", "companies/404"] });
        using var session = store.OpenAsyncSession();

        var order = await session.Include<Order>(o => o.Lines.Select(l => l.Product)).Include(o => o.Customer).LoadAsync("orders/1");
        var user = await session.Include<User>(u => u.Tags).LoadAsync("users/1");
        Assert.Equal(2, session.Advanced.NumberOfRequests);

        Assert.Equal("Anvil", (await session.LoadAsync<Company>("products/1"))!.Name);
        Assert.Equal("Rocket", (await session.LoadAsync<Company>("products/2"))!.Name);
        Assert.Equal(["Acme", "Globex"], (await session.LoadAsync<Company>(user!.Tags.Take(2))).Values.Select(c => c!.Name));
        Assert.Null(await session.LoadAsync<Company>("companies/404"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task AReferencedIdWithoutADocumentIsKnownMissing()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();

        var order = await session.Include("Customer").Include("Lines[].Product").LoadAsync<Order>("orders/3");
        Assert.Equal("companies/404", order!.Customer);
        Assert.Null(await session.LoadAsync<Company>("companies/404"));
        Assert.Null(await session.LoadAsync<Company>("products/404"));
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.False(session.Advanced.IsLoaded("companies/404"));

        // A missing id loaded with includes: null, and known missing too.
        Assert.Null(await session.Include("Customer").LoadAsync<Order>("orders/405"));
        Assert.Null(await session.LoadAsync<Order>("orders/405"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task AHeldDocumentIsAskedForAgainOnlyWhenItsIncludesAreUnknown()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();
        var order = await session.LoadAsync<Order>("orders/1");
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        // Held, but its customer is not: one request, which brings the customer; the same instance.
        Assert.Same(order, await session.Include<Order>(o => o.Customer).LoadAsync("orders/1"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);
        Assert.Equal("Acme", (await session.LoadAsync<Company>("companies/1"))!.Name);
        Assert.Equal(2, session.Advanced.NumberOfRequests);

        // Held with its customer: none. Products are unknown: one more, for orders/1 only.
        Assert.Same(order, await session.Include<Order>(o => o.Customer).LoadAsync("orders/1"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);
        var both = await session.Include<Order>(o => o.Customer).Include("Lines[].Product").LoadAsync(["orders/1", "orders/2"]);
        Assert.Equal(3, session.Advanced.NumberOfRequests);
        Assert.Same(order, both["orders/1"]);
        Assert.Equal(["Globex", "Anvil", "Rocket"], (await session.LoadAsync<Company>(["companies/2", "products/1", "products/2"])).Values.Select(c => c!.Name));
        Assert.Equal(3, session.Advanced.NumberOfRequests);

        // The session reads the stored version: changing the reference on the entity asks for nothing.
        order!.Customer = "companies/404";
        Assert.Same(order, await session.Include<Order>(o => o.Customer).LoadAsync("orders/1"));
        Assert.Equal(3, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task QueryIncludesAndUnsavedEntitiesCountAsHeld()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();
        var fresh = new Order { Id = "orders/new", Customer = "companies/999" };
        await session.StoreAsync(fresh);
        Assert.Same(fresh, await session.Include<Order>(o => o.Customer).LoadAsync("orders/new"));
        Assert.Equal(0, session.Advanced.NumberOfRequests);

        var queried = await session.Query<Order>()
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .Include(o => o.Customer)
            .Where(o => o.Customer == "companies/2")
            .ToListAsync();
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.Same(queried.Single(), await session.Include<Order>(o => o.Customer).LoadAsync("orders/2"));
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task MemberPathsAreNamedAsTheSerializerNamesThem()
    {
        using var store = await StoreWithOrdersAsync(s => s.Conventions.SerializerOptions =
            new JsonSerializerOptions(DocumentConventions.CreateDefaultSerializerOptions()) { PropertyNamingPolicy = JsonNamingPolicy.CamelCase });
        using var session = store.OpenAsyncSession();

        await session.Include<Order>(o => o.Customer).Include(o => o.Lines.Select(l => l.Product)).LoadAsync("orders/1");
        Assert.Equal("Acme", (await session.LoadAsync<Company>("companies/1"))!.Name);
        Assert.Equal("Rocket", (await session.LoadAsync<Company>("products/2"))!.Name);
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        // Written out, the path is sent as given: the stored field is "customer".
        await session.Include("Customer").LoadAsync<Order>("orders/2");
        Assert.False(session.Advanced.IsLoaded("companies/2"));
        await session.Include("customer").LoadAsync<Order>("orders/2");
        Assert.True(session.Advanced.IsLoaded("companies/2"));
    }

    [Fact]
    public async Task WithoutATypeTheLoadIsRefusedBeforeAnyRequest()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();

        await Assert.ThrowsAsync<NotSupportedException>(() => session.Include("Customer").LoadAsync("orders/1"));
        await Assert.ThrowsAsync<NotSupportedException>(() => session.Include("Customer").LoadAsync(["orders/1"]));
        Assert.Equal(0, session.Advanced.NumberOfRequests);
        Assert.IsType<Order>(await session.Include("Customer").LoadAsync<Order>("orders/1"));
    }

    [Fact]
    public async Task PathsThatNameNoOtherDocumentAreRefused()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession();

        Assert.Throws<NotSupportedException>(() => session.Include<Order>(o => o.Id));
        Assert.Throws<NotSupportedException>(() => session.Include<Order>(o => o.Customer.ToUpperInvariant()));
        Assert.Throws<ArgumentException>(() => session.Include(" "));
        Assert.Throws<ArgumentException>(() => session.Include("Lines..[]"));
        Assert.Equal(0, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task LazyIncludesGoInOneRequestWithTheOtherLazyOperations()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();

        var first = session.Advanced.Lazily.Include<Order>(o => o.Customer).Include("Lines[].Product").LoadAsync("orders/1");
        var others = session.Advanced.Lazily.Include("Customer").LoadAsync<Order>(["orders/2", "orders/3", "orders/404"]);
        var missing = session.Advanced.Lazily.Include("Customer").LoadAsync<Order>("orders/405");
        var page = session.Advanced.Lazily.LoadStartingWithAsync<Company>("products/");
        var plain = session.Advanced.Lazily.LoadAsync<Order>("orders/2");
        Assert.Equal(0, session.Advanced.NumberOfRequests);

        Assert.Equal("companies/1", (await first.Value)!.Customer);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.Null((await others.Value)["orders/404"]);
        Assert.Null(await missing.Value);
        Assert.Same((await others.Value)["orders/2"], await plain.Value);
        Assert.Equal(["products/1", "products/2"], (await page.Value).Keys);

        var companies = await session.LoadAsync<Company>(["companies/1", "companies/2", "products/1", "products/2"]);
        Assert.Equal(["Acme", "Globex", "Anvil", "Rocket"], companies.Values.Select(c => c!.Name));
        Assert.Same(companies["products/1"], (await page.Value)["products/1"]);
        Assert.Null(await session.LoadAsync<Company>("companies/404"));
        Assert.Null(await session.LoadAsync<Order>("orders/405"));
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task ALazyIncludeTheSessionCanAnswerIsNotSent()
    {
        using var store = await StoreWithOrdersAsync();
        using var session = store.OpenAsyncSession();
        var order = await session.Include<Order>(o => o.Customer).LoadAsync("orders/1");
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        var held = session.Advanced.Lazily.Include<Order>(o => o.Customer).LoadAsync("orders/1");
        await session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync();
        Assert.Same(order, await held.Value);
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        // Held without what these paths reference: sent. A path added to the loader afterwards is not part of that load.
        var loader = session.Advanced.Lazily.Include<Order>(o => o.Lines.Select(l => l.Product));
        var second = loader.LoadAsync("orders/2");
        loader.Include(o => o.Customer);
        var withBoth = loader.LoadAsync("orders/1");
        Assert.Same(order, await withBoth.Value);
        Assert.Equal(2, session.Advanced.NumberOfRequests);
        Assert.Equal("companies/2", (await second.Value)!.Customer);
        Assert.True(session.Advanced.IsLoaded("products/1"));
        Assert.True(session.Advanced.IsLoaded("products/2"));
        Assert.False(session.Advanced.IsLoaded("companies/2"));

        Assert.Throws<NotSupportedException>(() => session.Advanced.Lazily.Include("Customer").LoadAsync("orders/1"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task WhatTheSessionHoldsAfterwardsIsWhatTheModelReferences()
    {
        // 60 orders over 40 company ids, 30 of which exist; a seeded random pick of 25 orders is loaded.
        var random = new Random(26);
        var orders = Enumerable.Range(1, 60)
            .Select(i => new Order { Id = $"orders/{i}", Customer = $"companies/{random.Next(1, 41)}", Lines = [new OrderLine { Product = $"companies/{random.Next(1, 41)}" }] })
            .ToList();
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, [.. orders, .. Enumerable.Range(1, 30).Select(i => (object)new Company { Id = $"companies/{i}", Name = $"company {i}" })]);
        var picked = orders.OrderBy(_ => random.Next()).Take(25).ToList();
        var referenced = picked.SelectMany(o => new[] { o.Customer, o.Lines[0].Product }).ToHashSet();

        using var session = store.OpenAsyncSession();
        await session.Include<Order>(o => o.Customer).Include(o => o.Lines.Select(l => l.Product)).LoadAsync(picked.Select(o => o.Id!));
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        for (var i = 1; i <= 40; i++)
        {
            var id = $"companies/{i}";
            Assert.Equal(referenced.Contains(id) && i <= 30, session.Advanced.IsLoaded(id));
        }

        var companies = await session.LoadAsync<Company>(referenced);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
        Assert.All(referenced, id => Assert.Equal(int.Parse(id["companies/".Length..]) <= 30 ? $"company {id["companies/".Length..]}" : null, companies[id]?.Name));
    }
}
