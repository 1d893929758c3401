using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using static Jackdaw.Server.Tests.Databases.DatabaseTestKit;

namespace Jackdaw.Server.Tests.Databases;

/// <summary>Lifecycle operations racing each other end in clear outcomes, never in storage errors.</summary>
public class LandlordRaceTests
{
    [Fact]
    public async Task DeleteAndCreateOfOneNameRacingEachOtherEndCleanly()
    {
        using var root = new TempFolder();
        await using var landlord = new DatabasesLandlord(root.Path, NullLoggerFactory.Instance, NoTimer());
        for (var round = 0; round < 100; round++)
        {
            landlord.TryCreate("x");
            var delete = Task.Run(() => landlord.TryDeleteAsync("x"));
            var create = Task.Run(() =>
            {
                try
                {
                    return landlord.TryCreate("x") ? "created" : "exists";
                }
                catch (DatabaseUnavailableException)
                {
                    return "being deleted";
                }
            });

            // Only these outcomes: no EnvironmentLockedException, no missing folder, no I/O error.
            Assert.True(await delete, $"round {round}: the delete did not find the database");
            var outcome = await create;
            Assert.Contains(outcome, new[] { "created", "exists", "being deleted" });
            // Whatever happened, the name is consistent: a database that exists opens and writes.
            if (landlord.Names.Contains("x"))
            {
                var database = landlord.GetDatabase("x");
                using var reader = database.BeginRead();
                Assert.Equal(0, reader.DocumentCount);
                Assert.True(Directory.Exists(Path.Combine(root.Path, "x")));
                await landlord.TryDeleteAsync("x");
            }
            else
            {
                Assert.Throws<DatabaseDoesNotExistException>(() => landlord.GetDatabase("x"));
            }
        }
    }

    [Fact]
    public async Task WaitersOfAnUnloadedDatabaseFailInsteadOfWaitingForever()
    {
        using var root = new TempFolder();
        await using var landlord = new DatabasesLandlord(root.Path, NullLoggerFactory.Instance, NoTimer());
        landlord.TryCreate("w");
        var database = landlord.GetDatabase("w");
        var waiting = database.Notifications.WaitForEtagAsync(database.LastEtag + 1);
        Assert.False(waiting.IsCompleted);

        await landlord.UnloadAsync("w");
        await Assert.ThrowsAsync<DatabaseUnavailableException>(() => waiting.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.True(database.Notifications.Closed.IsCompletedSuccessfully);
        // A wait that starts after the close fails at once.
        await Assert.ThrowsAsync<DatabaseUnavailableException>(() => database.Notifications.WaitForEtagAsync(database.LastEtag + 1));
        // A passed etag is still passed.
        Assert.True(database.Notifications.WaitForEtagAsync(database.LastEtag).IsCompletedSuccessfully);
    }

    [Fact]
    public async Task StatsOfAClosedDatabaseAreUnavailableNotACrash()
    {
        using var root = new TempFolder();
        await using var landlord = new DatabasesLandlord(root.Path, NullLoggerFactory.Instance, NoTimer());
        landlord.TryCreate("s");
        var database = landlord.GetDatabase("s");
        await landlord.UnloadAsync("s");
        Assert.Throws<DatabaseUnavailableException>(() => database.GetStorageStats());
        Assert.Throws<DatabaseUnavailableException>(() => database.BeginRead());
    }
}
