using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>Identities through the client against the real server: ids ending in '|', and the maintenance operations that move them.</summary>
public sealed class IdentityServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private sealed class Person
    {
        public string? Id { get; set; }

        public string Name { get; set; } = "";
    }

    [Fact]
    public async Task APipeIdTakesTheNextIdentityAndTheOperationsMoveIt()
    {
        using var store = await server.NewStoreAsync();
        var adi = new Person { Name = "Adi" };
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(adi, "people|");
            await session.SaveChangesAsync();
        }
        Assert.Equal("people/1", adi.Id);

        Assert.Equal(2, await store.Maintenance.NextIdentityForAsync("people"));
        Assert.Equal(1990, await store.Maintenance.SeedIdentityForAsync("people", 1990));
        Assert.Equal(1990, await store.Maintenance.SeedIdentityForAsync("people", 10));

        var avivi = new Person { Name = "Avivi" };
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(avivi, "people|");
            await session.SaveChangesAsync();
        }
        Assert.Equal("people/1991", avivi.Id);
        using (var session = store.OpenAsyncSession())
        {
            Assert.Equal("Avivi", (await session.LoadAsync<Person>("people/1991"))!.Name);
        }

        Assert.Equal(new Dictionary<string, long> { ["people|"] = 1991 }, await store.Maintenance.GetIdentitiesAsync());
        Assert.Equal(5, await store.Maintenance.SeedIdentityForAsync("people", 5, force: true));
        Assert.Equal(5, (await store.Maintenance.GetIdentitiesAsync())["people|"]);
    }

    [Fact]
    public async Task AdditionalSourcesGoToTheServerAndComeBack()
    {
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new Person { Name = "Ada" }, "people/1");
            await session.SaveChangesAsync();
        }
        var definition = new IndexDefinition
        {
            Name = "People/ByInitial",
            Maps = ["map('People', p => ({ Initial: initialOf(p) }))"],
            AdditionalSources = new() { ["initials.js"] = "function initialOf(p) { return p.Name.substring(0, 1); }" },
        };
        await store.Maintenance.PutIndexesAsync(definition);
        using (var session = store.OpenAsyncSession())
        {
            var found = await session.Advanced.AsyncRawQuery<Person>("from index 'People/ByInitial' where Initial = 'A'")
                .WaitForNonStaleResults(TimeSpan.FromSeconds(30))
                .ToListAsync();
            Assert.Equal("Ada", Assert.Single(found).Name);
        }
        var stored = Assert.Single(await store.Maintenance.GetIndexesAsync(), d => d.Name == "People/ByInitial");
        Assert.Equal(definition.AdditionalSources, stored.AdditionalSources);
    }
}
