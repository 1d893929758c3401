using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

public sealed class MaintenanceTests : IDisposable
{
    private readonly FakeJackdaw _fake = new("existing");
    private readonly DocumentStore _store;

    public MaintenanceTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    [Fact]
    public async Task CreateListAndDeleteDatabasesSendTheAdminRequests()
    {
        await _store.Maintenance.CreateDatabaseAsync("Northwind");
        var names = await _store.Maintenance.GetDatabaseNamesAsync();
        await _store.Maintenance.DeleteDatabaseAsync("Northwind");

        Assert.Equal(["existing", "Northwind"], names.Order(StringComparer.OrdinalIgnoreCase));
        var sent = _fake.Requests.Select(r => $"{r.Method} {r.PathAndQuery}").ToList();
        Assert.Equal(3, sent.Count);
        Assert.Matches("^PUT /admin/databases\\?name=Northwind&raft-request-id=[0-9a-f]{32}$", sent[0]);
        Assert.Equal("GET /databases?namesOnly=true", sent[1]);
        Assert.Matches("^DELETE /admin/databases\\?name=Northwind&raft-request-id=[0-9a-f]{32}$", sent[2]);
        // One id per change: two changes are two commands.
        Assert.NotEqual(sent[0].Split("raft-request-id=")[1], sent[2].Split("raft-request-id=")[1]);
    }

    [Fact]
    public async Task CreatingAnExistingDatabaseThrowsDatabaseAlreadyExists() =>
        await Assert.ThrowsAsync<DatabaseAlreadyExistsException>(() => _store.Maintenance.CreateDatabaseAsync("existing"));

    [Fact]
    public async Task EnsureDatabaseExistsCreatesOnlyWhenMissing()
    {
        Assert.False(await _store.Maintenance.EnsureDatabaseExistsAsync("existing"));
        Assert.True(await _store.Maintenance.EnsureDatabaseExistsAsync("fresh"));
    }

    [Fact]
    public async Task AnInvalidNameThrowsBadRequestWithTheServersMessage()
    {
        var error = await Assert.ThrowsAsync<BadRequestException>(() => _store.Maintenance.CreateDatabaseAsync("no spaces"));
        Assert.Contains("no spaces", error.Message);
        Assert.StartsWith("PUT /admin/databases?name=no%20spaces&raft-request-id=", _fake.Requests.Select(r => $"{r.Method} {r.PathAndQuery}").Single());
    }

    [Fact]
    public async Task DeletingAMissingDatabaseThrowsDatabaseDoesNotExist() =>
        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => _store.Maintenance.DeleteDatabaseAsync("missing"));
}
