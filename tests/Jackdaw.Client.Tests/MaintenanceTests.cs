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
        Assert.Equal(
            ["PUT /admin/databases?name=Northwind", "GET /admin/databases", "DELETE /admin/databases?name=Northwind"],
            _fake.Requests.Select(r => $"{r.Method} {r.PathAndQuery}"));
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
        Assert.Equal("PUT /admin/databases?name=no%20spaces", _fake.Requests.Select(r => $"{r.Method} {r.PathAndQuery}").Single());
    }

    [Fact]
    public async Task DeletingAMissingDatabaseThrowsDatabaseDoesNotExist() =>
        await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => _store.Maintenance.DeleteDatabaseAsync("missing"));
}
