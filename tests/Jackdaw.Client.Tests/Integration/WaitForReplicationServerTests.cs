using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// A session that waits for replicas, against a real single server: the server takes RavenDB's
/// parameters on <c>bulk_docs</c>. A single node has no replica to wait for, so the save is asked
/// not to throw on a timeout: it must be saved either way.
/// </summary>
public sealed class WaitForReplicationServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    [Fact]
    public async Task ASaveThatWaitsForReplicasIsSaved()
    {
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            session.Advanced.WaitForReplicationAfterSaveChanges(TimeSpan.FromSeconds(1), throwOnTimeout: false, replicas: 1);
            await session.StoreAsync(new User { Name = "Ann" }, "users/1");
            await session.SaveChangesAsync();
            Assert.NotNull(session.Advanced.GetChangeVectorFor((await session.LoadAsync<User>("users/1"))!));
        }

        using var reader = store.OpenAsyncSession();
        Assert.Equal("Ann", (await reader.LoadAsync<User>("users/1"))!.Name);
    }
}
