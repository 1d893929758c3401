using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Databases;

public class LandlordTests
{
    private static DatabasesLandlord CreateLandlord(string root) => new(root, NullLoggerFactory.Instance, NoTimer());

    [Fact]
    public async Task ADatabaseIsCreatedOnceAndFoundInAnyCasingByNameOrBySliceOfAPath()
    {
        using var root = new TempFolder();
        await using var landlord = CreateLandlord(root.Path);

        Assert.True(landlord.TryCreate("Orders"));
        Assert.False(landlord.TryCreate("ORDERS"));
        Assert.False(landlord.TryCreate("orders"));
        Assert.True(Directory.Exists(Path.Combine(root.Path, "Orders")));
        Assert.Equal(["Orders"], landlord.Names);

        var database = landlord.GetDatabase("Orders");
        Assert.Equal("Orders", database.Name);
        Assert.Same(database, landlord.GetDatabase("orders"));
        Assert.Same(database, landlord.GetDatabase("ORDERS"));
        var path = "/databases/oRdErS/docs".AsMemory();
        Assert.Same(database, landlord.GetDatabase(path.Slice("/databases/".Length, "Orders".Length)));
        // A slice that only starts with the name is another name.
        Assert.Throws<DatabaseDoesNotExistException>(() => landlord.GetDatabase(path.Slice("/databases/".Length, 4)));

        Assert.True(landlord.TryCreate("Users"));
        Assert.NotSame(database, landlord.GetDatabase("users"));
        Assert.Equal(["Orders", "Users"], landlord.Names);
    }

    [Fact]
    public async Task AnUnloadedDatabaseIsOpenedAgainWithItsDataOnTheNextLookup()
    {
        using var root = new TempFolder();
        await using var landlord = CreateLandlord(root.Path);
        Assert.True(landlord.TryCreate("Orders"));
        var first = landlord.GetDatabase("orders");
        var databaseId = first.DatabaseId;
        await PutAsync(first, "orders/1", "Orders", v: 1);
        await PutAsync(first, "orders/2", "Orders", v: 2);
        Assert.True(await DeleteAsync(first, "orders/2"));

        Assert.True(await landlord.UnloadAsync("ORDERS"));
        // The instance handed out before is closed (the error type is the database's to choose).
        Assert.ThrowsAny<Exception>(() => first.BeginRead());
        Assert.True(await landlord.UnloadAsync("Orders"));
        Assert.False(await landlord.UnloadAsync("Missing"));

        var second = landlord.GetDatabase("Orders".AsMemory());
        Assert.NotSame(first, second);
        Assert.Equal(databaseId, second.DatabaseId);
        Assert.Equal(3, second.LastEtag);
        Assert.Equal([new FeedDocument(1, "orders/1", "Orders", 1)], ReadAllDocuments(second));
        Assert.Equal([new FeedTombstone(3, "orders/2", "Orders")], ReadAllTombstones(second));
        Assert.Same(second, landlord.GetDatabase("orders"));
        Assert.Equal(4, (await PutAsync(second, "orders/3", "Orders")).Etag);
    }

    [Fact]
    public async Task ALandlordOverAnExistingRootKnowsItsDatabases()
    {
        using var root = new TempFolder();
        await using (var landlord = CreateLandlord(root.Path))
        {
            Assert.True(landlord.TryCreate("Orders"));
            await PutAsync(landlord.GetDatabase("Orders"), "orders/1", "Orders", v: 1);
        }
        // A folder that is not a valid database name is not a database.
        Directory.CreateDirectory(Path.Combine(root.Path, "not a database"));

        await using (var landlord = CreateLandlord(root.Path))
        {
            Assert.Equal(["Orders"], landlord.Names);
            Assert.False(landlord.TryCreate("orders"));
            Assert.Equal([new FeedDocument(1, "orders/1", "Orders", 1)], ReadAllDocuments(landlord.GetDatabase("ORDERS")));
        }
    }

    [Fact]
    public async Task ADeletedDatabaseIsGoneWithItsFolder()
    {
        using var root = new TempFolder();
        await using var landlord = CreateLandlord(root.Path);
        Assert.True(landlord.TryCreate("Orders"));
        var database = landlord.GetDatabase("Orders");
        await PutAsync(database, "orders/1", "Orders");

        Assert.True(await landlord.TryDeleteAsync("ORDERS"));

        Assert.False(Directory.Exists(Path.Combine(root.Path, "Orders")));
        Assert.Empty(landlord.Names);
        Assert.ThrowsAny<Exception>(() => database.BeginRead());
        var error = Assert.Throws<DatabaseDoesNotExistException>(() => landlord.GetDatabase("Orders"));
        Assert.Equal("Orders", error.Name);
        Assert.False(await landlord.TryDeleteAsync("Orders"));
        Assert.False(await landlord.UnloadAsync("Orders"));

        // The name is free again, for a new and empty database.
        Assert.True(landlord.TryCreate("orders"));
        var again = landlord.GetDatabase("Orders");
        Assert.Equal("orders", again.Name);
        Assert.Equal(0, again.LastEtag);
        Assert.Empty(ReadAllDocuments(again));
    }

    [Fact]
    public async Task LookingUpAnUnknownDatabaseThrowsDatabaseDoesNotExist()
    {
        using var root = new TempFolder();
        await using var landlord = CreateLandlord(root.Path);
        Assert.True(landlord.TryCreate("Orders"));

        var error = Assert.Throws<DatabaseDoesNotExistException>(() => landlord.GetDatabase("Users"));
        Assert.Equal("Users", error.Name);
        Assert.Contains("'Users'", error.Message, StringComparison.Ordinal);
        Assert.Throws<DatabaseDoesNotExistException>(() => landlord.GetDatabase("Users".AsMemory()));
        Assert.Throws<DatabaseDoesNotExistException>(() => landlord.GetDatabase("Orders2"));
        Assert.Throws<DatabaseDoesNotExistException>(() => landlord.GetDatabase(""));
        Assert.False(Directory.Exists(Path.Combine(root.Path, "Users")));
    }

    [Theory]
    [InlineData("")]
    [InlineData(".")]
    [InlineData("..")]
    [InlineData("a/b")]
    [InlineData("a\\b")]
    [InlineData("has space")]
    [InlineData("caf\u00e9")]
    [InlineData("x1234567890123456789012345678901234567890123456789012345678901234")]
    public async Task InvalidNamesAreABadRequest(string name)
    {
        using var root = new TempFolder();
        await using var landlord = CreateLandlord(root.Path);

        Assert.Throws<BadRequestException>(() => landlord.TryCreate(name));
        await Assert.ThrowsAsync<BadRequestException>(() => landlord.TryDeleteAsync(name));
        Assert.Empty(landlord.Names);
        Assert.Empty(Directory.EnumerateFileSystemEntries(root.Path));
    }

    [Fact]
    public async Task ANameOf64CharactersIsValid()
    {
        using var root = new TempFolder();
        await using var landlord = CreateLandlord(root.Path);
        var name = new string('a', DatabaseNames.MaxLength);
        Assert.True(landlord.TryCreate(name));
        Assert.Equal(name, landlord.GetDatabase(name.ToUpperInvariant()).Name);
    }
}
