using System.Text.RegularExpressions;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// <c>Advanced.LoadStartingWithAsync</c> against the real server: each page is compared with the
/// same page of a plain model of the ids (filtered, sorted and paged in memory), and the documents
/// join the session's identity map.
/// </summary>
public sealed class LoadStartingWithServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    /// <summary>Ids whose id order differs from their number order, in mixed case, with neighbours that share part of the prefix.</summary>
    internal static readonly string[] Ids =
    [
        .. Enumerable.Range(1, 30).Select(i => $"users/{i}"),
        "Users/ABC", "users/abd", "users/a-c", "USERS/Zed", "users/ä1",
        "usersX/1", "user/1", "companies/1",
    ];

    internal static async Task<DocumentStore> StoreWithIdsAsync(ServerFixture server)
    {
        var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, [.. Ids.Select(id => (object)new User { Id = id, Name = id })]);
        return store;
    }

    /// <summary>
    /// What the server should answer, computed over <see cref="Ids"/>: ids under the prefix
    /// (case-insensitive) in the order of their lower-case form, after <paramref name="startAfter"/>,
    /// the rest of each id matched against the patterns, then paged.
    /// </summary>
    internal static List<string> Expected(string prefix, string? matches = null, int start = 0, int pageSize = 25, string? exclude = null, string? startAfter = null)
    {
        var keep = Pattern(matches);
        var drop = Pattern(exclude);
        return Ids
            .Where(id => id.StartsWith(prefix, StringComparison.OrdinalIgnoreCase))
            .OrderBy(id => id.ToLowerInvariant(), StringComparer.Ordinal)
            .Where(id => string.IsNullOrEmpty(startAfter) || string.CompareOrdinal(id.ToLowerInvariant(), startAfter.ToLowerInvariant()) > 0)
            .Where(id => keep is null || keep.IsMatch(id[prefix.Length..]))
            .Where(id => drop is null || !drop.IsMatch(id[prefix.Length..]))
            .Skip(start)
            .Take(pageSize)
            .ToList();
    }

    /// <summary>RavenDB's id pattern as a regular expression: <c>|</c> between alternatives, <c>*</c> any run, <c>?</c> one character.</summary>
    private static Regex? Pattern(string? pattern)
    {
        var alternatives = (pattern ?? "").Split('|', StringSplitOptions.RemoveEmptyEntries);
        if (alternatives.Length == 0)
        {
            return null;
        }

        var body = string.Join("|", alternatives.Select(a => Regex.Escape(a).Replace(@"\*", ".*").Replace(@"\?", ".")));
        return new Regex($"^(?:{body})$", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant | RegexOptions.Singleline);
    }

    [Theory]
    [InlineData("users/", null, 0, 25, null, null)]
    [InlineData("users/", null, 0, 100, null, null)]
    [InlineData("users/", null, 10, 7, null, null)]
    [InlineData("users/", null, 40, 10, null, null)]
    [InlineData("USERS/", null, 0, 5, null, null)]
    [InlineData("users/", null, 0, 0, null, null)]
    [InlineData("users/1", null, 0, 25, null, null)]
    [InlineData("users/", "1*|2?", 0, 25, null, null)]
    [InlineData("users/", "?", 0, 25, null, null)]
    [InlineData("users/", "a?*", 0, 25, null, null)]
    [InlineData("users/", "*", 3, 4, "1*|a*", null)]
    [InlineData("users/", null, 0, 25, "*0", null)]
    [InlineData("users/", null, 0, 25, null, "users/25")]
    [InlineData("users/", null, 2, 3, null, "Users/3")]
    [InlineData("users/", "2*|3*", 1, 3, "22", "users/20")]
    [InlineData("users/", null, 0, 25, null, "users/zzz")]
    [InlineData("nothing/", "*", 0, 25, null, null)]
    public async Task APageIsTheModelsPage(string prefix, string? matches, int start, int pageSize, string? exclude, string? startAfter)
    {
        using var store = await StoreWithIdsAsync(server);
        using var session = store.OpenAsyncSession();

        var page = (await session.Advanced.LoadStartingWithAsync<User>(prefix, matches, start, pageSize, exclude, startAfter)).ToList();

        var expected = Expected(prefix, matches, start, pageSize, exclude, startAfter);
        Assert.Equal(expected, page.Select(u => u.Id));
        Assert.Equal(expected, page.Select(u => u.Name));
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task PagingByStartAndByStartAfterWalksTheWholePrefixOnce()
    {
        using var store = await StoreWithIdsAsync(server);
        using var session = store.OpenAsyncSession();

        var byStart = new List<string>();
        for (var start = 0; ; start += 7)
        {
            var page = (await session.Advanced.LoadStartingWithAsync<User>("users/", start: start, pageSize: 7)).Select(u => u.Id!).ToList();
            byStart.AddRange(page);
            if (page.Count < 7)
            {
                break;
            }
        }

        var byStartAfter = new List<string>();
        string? last = null;
        while (true)
        {
            var page = (await session.Advanced.LoadStartingWithAsync<User>("users/", pageSize: 7, startAfter: last)).Select(u => u.Id!).ToList();
            byStartAfter.AddRange(page);
            if (page.Count < 7)
            {
                break;
            }

            last = page[^1];
        }

        var all = Expected("users/", pageSize: int.MaxValue);
        Assert.Equal(35, all.Count);
        Assert.Equal(all, byStart);
        Assert.Equal(all, byStartAfter);
    }

    [Fact]
    public async Task LoadedDocumentsJoinTheIdentityMap()
    {
        using var store = await StoreWithIdsAsync(server);
        using var session = store.OpenAsyncSession();
        var held = await session.LoadAsync<User>("users/2");
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        var page = (await session.Advanced.LoadStartingWithAsync<User>("users/", "2*")).ToList();
        Assert.Equal(2, session.Advanced.NumberOfRequests);
        Assert.Same(held, page[0]);

        // Every one of them is now answered by the session, under any casing of its id.
        foreach (var user in page)
        {
            Assert.Same(user, await session.LoadAsync<User>(user.Id!.ToUpperInvariant()));
        }

        var many = await session.LoadAsync<User>(page.Select(u => u.Id!));
        Assert.All(page, user => Assert.Same(user, many[user.Id!]));
        Assert.True(session.Advanced.IsLoaded("users/21"));
        Assert.Equal(2, session.Advanced.NumberOfRequests);

        // A second page by prefix asks the server again, and gives the same instances.
        var again = (await session.Advanced.LoadStartingWithAsync<User>("users/2")).ToList();
        Assert.Equal(page, again);
        Assert.Equal(3, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task ChangesToLoadedDocumentsAreSavedAndADeletedOneComesUntracked()
    {
        using var store = await StoreWithIdsAsync(server);
        using (var session = store.OpenAsyncSession())
        {
            session.Delete("users/3");
            var page = (await session.Advanced.LoadStartingWithAsync<User>("users/", "3|30")).ToList();
            Assert.Equal(["users/3", "users/30"], page.Select(u => u.Id));
            Assert.False(session.Advanced.IsLoaded("users/3"));
            Assert.Null(await session.LoadAsync<User>("users/3"));

            page[1].Name = "changed";
            page[0].Name = "not saved: the document is deleted";
            Assert.True(session.Advanced.HasChanges);
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            Assert.Null(await session.LoadAsync<User>("users/3"));
            Assert.Equal("changed", (await session.LoadAsync<User>("users/30"))!.Name);
        }
    }

    [Fact]
    public async Task ADocumentOfAnotherTypeUnderThePrefixThrowsAsALoadDoes()
    {
        using var store = await StoreWithIdsAsync(server);
        await QueryServerTests.StoreAsync(store, new Company { Id = "users/company", Name = "Acme" });
        using var session = store.OpenAsyncSession();
        var company = await session.LoadAsync<Company>("users/company");

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => session.Advanced.LoadStartingWithAsync<User>("users/c"));
        Assert.Contains("users/company", error.Message);
        Assert.Same(company, (await session.Advanced.LoadStartingWithAsync<Company>("users/c")).Single());
    }

    [Fact]
    public async Task BadArgumentsAreRefusedBeforeAnyRequest()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession();

        await Assert.ThrowsAsync<ArgumentException>(() => session.Advanced.LoadStartingWithAsync<User>(""));
        await Assert.ThrowsAsync<ArgumentNullException>(() => session.Advanced.LoadStartingWithAsync<User>(null!));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => session.Advanced.LoadStartingWithAsync<User>("users/", start: -1));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => session.Advanced.LoadStartingWithAsync<User>("users/", pageSize: -1));
        Assert.Equal(0, session.Advanced.NumberOfRequests);

        // The server's own limit (Limits:MaxQueryLimit, 1,048,576 by default) answers as a bad request.
        await Assert.ThrowsAsync<BadRequestException>(() => session.Advanced.LoadStartingWithAsync<User>("users/", pageSize: 2_000_000));
    }

    [Fact]
    public async Task LazyPagesGoInOneRequestWithTheOtherLazyOperations()
    {
        using var store = await StoreWithIdsAsync(server);
        using var session = store.OpenAsyncSession();
        var held = await session.LoadAsync<User>("users/21");
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        var first = session.Advanced.Lazily.LoadStartingWithAsync<User>("users/");
        var filtered = session.Advanced.Lazily.LoadStartingWithAsync<User>("users/", "2*|a?*", 1, 6, "22");
        var after = session.Advanced.Lazily.LoadStartingWithAsync<User>("USERS/", pageSize: 4, startAfter: "users/29");
        var none = session.Advanced.Lazily.LoadStartingWithAsync<User>("nothing/");
        var load = session.Advanced.Lazily.LoadAsync<User>("users/1");
        var count = session.Query<User>().Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait)).CountLazilyAsync();
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        await session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync();
        Assert.Equal(2, session.Advanced.NumberOfRequests);
        Assert.Equal(Expected("users/"), (await first.Value).Keys);
        Assert.Equal(Expected("users/", "2*|a?*", 1, 6, "22"), (await filtered.Value).Keys);
        Assert.Equal(Expected("USERS/", pageSize: 4, startAfter: "users/29"), (await after.Value).Keys);
        Assert.Empty(await none.Value);
        Assert.All(await first.Value, pair => Assert.Equal(pair.Key, pair.Value.Id));
        Assert.Equal(Ids.Length, await count.Value);

        // One identity map: the held instance, the lazy load's instance, and no request for any of them.
        Assert.Same(held, (await filtered.Value)["USERS/21"]);
        Assert.Same(await load.Value, (await first.Value)["users/1"]);
        foreach (var user in (await after.Value).Values)
        {
            Assert.Same(user, await session.LoadAsync<User>(user.Id!));
        }

        Assert.Equal(2, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task ALazyPageIsCheckedWhenMadeAndFailsAloneOnTheServer()
    {
        using var store = await StoreWithIdsAsync(server);
        using var session = store.OpenAsyncSession();

        Assert.Throws<ArgumentException>(() => session.Advanced.Lazily.LoadStartingWithAsync<User>(""));
        Assert.Throws<ArgumentOutOfRangeException>(() => session.Advanced.Lazily.LoadStartingWithAsync<User>("users/", start: -1));
        await session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync();
        Assert.Equal(0, session.Advanced.NumberOfRequests);

        var tooLarge = session.Advanced.Lazily.LoadStartingWithAsync<User>("users/", pageSize: 2_000_000);
        var page = session.Advanced.Lazily.LoadStartingWithAsync<User>("users/3");
        await Assert.ThrowsAsync<BadRequestException>(() => session.Advanced.Eagerly.ExecuteAllPendingLazyOperationsAsync());
        await Assert.ThrowsAsync<BadRequestException>(() => tooLarge.Value);
        Assert.Equal(Expected("users/3"), (await page.Value).Keys);
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task PrefixesAndPatternsThatNeedEscapingReachTheServerAsWritten()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(
            store,
            new User { Id = "a&b=c/1", Name = "one" },
            new User { Id = "a&b=c/2+", Name = "two" },
            new User { Id = "a&b=c/ä 3", Name = "three" },
            new User { Id = "a&b=d/1", Name = "other" });
        using var session = store.OpenAsyncSession();

        Assert.Equal(["one", "two", "three"], (await session.Advanced.LoadStartingWithAsync<User>("a&b=c/")).Select(u => u.Name));
        Assert.Equal(["two"], (await session.Advanced.LoadStartingWithAsync<User>("a&b=c/", matches: "*+")).Select(u => u.Name));
        Assert.Equal(["one", "two"], (await session.Advanced.LoadStartingWithAsync<User>("a&b=c/", exclude: "ä ?")).Select(u => u.Name));
        Assert.Equal(["three"], (await session.Advanced.LoadStartingWithAsync<User>("a&b=c/", startAfter: "a&b=c/2+")).Select(u => u.Name));

        // Lazily, in the multi_get body.
        var lazy = session.Advanced.Lazily.LoadStartingWithAsync<User>("a&b=c/", "*+|ä*", exclude: "ä 3");
        Assert.Equal(["two"], (await lazy.Value).Values.Select(u => u.Name));
    }
}
