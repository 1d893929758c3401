using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>A session that waits for indexes after saving, against the real server.</summary>
public sealed class WaitForIndexesServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private sealed class Ticket
    {
        public string? Id { get; set; }

        public string Status { get; set; } = "";
    }

    private static readonly IndexDefinition ByStatus = new() { Name = "Tickets/ByStatus", Maps = ["map('Tickets', t => ({ Status: t.Status }))"] };

    [Fact]
    public async Task AQueryRightAfterAWaitingSaveSeesIt()
    {
        using var store = await server.NewStoreAsync();
        await store.Maintenance.PutIndexesAsync(ByStatus);
        for (var i = 0; i < 10; i++)
        {
            using var session = store.OpenAsyncSession();
            session.Advanced.WaitForIndexesAfterSaveChanges(TimeSpan.FromSeconds(30), indexes: "Tickets/ByStatus");
            await session.StoreAsync(new Ticket { Status = $"open-{i}" });
            await session.SaveChangesAsync();

            using var reader = store.OpenAsyncSession();
            var found = await reader.Advanced.AsyncRawQuery<Ticket>($"from index 'Tickets/ByStatus' where Status = 'open-{i}'").ToListAsync();
            Assert.Single(found);
        }
    }

    [Fact]
    public async Task AStoppedIndexMakesTheSaveThrowAtOnceOrReturnWhenAskedNotTo()
    {
        using var store = await server.NewStoreAsync();
        await store.Maintenance.PutIndexesAsync(ByStatus);
        await store.Maintenance.StopIndexingAsync();
        try
        {
            using (var session = store.OpenAsyncSession())
            {
                session.Advanced.WaitForIndexesAfterSaveChanges(TimeSpan.FromMinutes(1));
                await session.StoreAsync(new Ticket { Status = "open" }, "tickets/1");
                var error = await Assert.ThrowsAsync<ServerTimeoutException>(() => session.SaveChangesAsync());
                Assert.Contains("its indexing is stopped", error.Message, StringComparison.Ordinal);
            }
            using (var session = store.OpenAsyncSession())
            {
                session.Advanced.WaitForIndexesAfterSaveChanges(TimeSpan.FromMinutes(1), throwOnTimeout: false);
                await session.StoreAsync(new Ticket { Status = "closed" }, "tickets/2");
                await session.SaveChangesAsync();
            }
            using (var session = store.OpenAsyncSession())
            {
                Assert.Equal(2, (await session.LoadAsync<Ticket>(["tickets/1", "tickets/2"])).Count(t => t.Value is not null));
            }
        }
        finally
        {
            await store.Maintenance.StartIndexingAsync();
        }
    }
}
