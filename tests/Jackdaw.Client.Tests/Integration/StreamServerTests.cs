using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// <c>session.Advanced.StreamAsync</c> against the real server: by id prefix, LINQ and raw RQL,
/// projections, statistics, results never tracked, leaving early, and errors; the streamed
/// corpus orders checked against LINQ to objects and against the same query run as a list.
/// </summary>
public sealed class StreamServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    [Fact]
    public async Task AStreamByPrefixGivesEachDocumentWithItsIdChangeVectorAndMetadataUntracked()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, Enumerable.Range(1, 12).Select(i => (object)new User { Id = $"users/{i}", Name = $"User {i}", Age = i }).Append(new Company { Id = "companies/1", Name = "Acme" }).ToArray());
        using var session = store.OpenAsyncSession();

        var results = new List<StreamResult<User>>();
        await foreach (var result in session.Advanced.StreamAsync<User>("users/"))
        {
            results.Add(result);
        }

        // Id order: users/1, users/10, users/11, users/12, users/2, ...
        Assert.Equal(Enumerable.Range(1, 12).Select(i => $"users/{i}").Order(StringComparer.Ordinal), results.Select(r => r.Id));
        Assert.All(results, r => Assert.Equal(r.Id, r.Document.Id));
        Assert.All(results, r => Assert.StartsWith("A:", r.ChangeVector, StringComparison.Ordinal));
        Assert.All(results, r => Assert.Equal("Users", r.Metadata["@collection"]));
        Assert.All(results, r => Assert.Equal(r.Id, r.Metadata.GetString("@id")));
        Assert.Equal("User 10", results[1].Document.Name);
        Assert.False(session.Advanced.IsLoaded("users/1"));
        Assert.Equal(1, session.Advanced.NumberOfRequests);

        var page = new List<string?>();
        await foreach (var result in session.Advanced.StreamAsync<User>("users/", matches: "1*", start: 1, pageSize: 2, startAfter: "users/1"))
        {
            page.Add(result.Id);
        }

        Assert.Equal(["users/11", "users/12"], page);
        var excluded = new List<string?>();
        await foreach (var result in session.Advanced.StreamAsync<User>("users/", exclude: "1*|2"))
        {
            excluded.Add(result.Id);
        }

        Assert.Equal(["users/3", "users/4", "users/5", "users/6", "users/7", "users/8", "users/9"], excluded);
    }

    [Fact]
    public async Task ALinqStreamGivesWhatTheQueryAndLinqToObjectsGiveWithTheStatistics()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        using var session = store.OpenAsyncSession();
        var listed = await session.Query<CorpusOrder>().Customize(x => x.WaitForNonStaleResults()).Where(x => x.Freight > 100).OrderBy(x => x.Freight).ThenBy(x => x.Id).ToListAsync();

        var streamed = new List<StreamResult<CorpusOrder>>();
        var query = session.Query<CorpusOrder>().Where(x => x.Freight > 100).OrderBy(x => x.Freight).ThenBy(x => x.Id);
        await foreach (var result in session.Advanced.StreamAsync(query, out var statistics))
        {
            Assert.Equal(listed.Count, statistics.TotalResults);
            streamed.Add(result);
        }

        var expected = orders.Where(x => x.Freight > 100).OrderBy(x => x.Freight).ThenBy(x => x.Id, StringComparer.Ordinal).Select(x => x.Id).ToList();
        Assert.Equal(expected, streamed.Select(r => r.Id));
        Assert.Equal(listed.Select(x => x.Id), streamed.Select(r => r.Document.Id));
        Assert.Equal(listed.Select(x => (x.Freight, x.Company, x.ShipTo.City, x.Lines.Count)), streamed.Select(r => (r.Document.Freight, r.Document.Company, r.Document.ShipTo.City, r.Document.Lines.Count)));
        // Streamed documents are other instances than the tracked ones of the list.
        Assert.NotSame(listed[0], streamed[0].Document);
    }

    [Fact]
    public async Task StatisticsAreFilledWhenTheStreamStartsEvenWithoutResults()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreAsync(store, new User { Id = "users/1", Name = "Ann", Age = 31 }, new User { Id = "users/2", Name = "Bob", Age = 42 });
        using var session = store.OpenAsyncSession();

        var stream = session.Advanced.StreamAsync(session.Query<User>().Where(x => x.Age > 100), out var none);
        await using (var enumerator = stream.GetAsyncEnumerator())
        {
            Assert.Null(none.IndexName);
            Assert.False(await enumerator.MoveNextAsync());
        }

        Assert.Equal(0, none.TotalResults);
        Assert.StartsWith("Auto/Users/By", none.IndexName, StringComparison.Ordinal);
        Assert.NotEqual(0, none.ResultEtag);

        var all = new List<string>();
        var users = session.Advanced.StreamAsync(session.Query<User>(), out var stats);
        await foreach (var user in users)
        {
            all.Add(user.Document.Name);
        }

        Assert.Equal(["Ann", "Bob"], all);
        Assert.Equal(2, stats.LongTotalResults);
        Assert.Equal("collection/Users", stats.IndexName);
        Assert.False(stats.IsStale);
    }

    [Fact]
    public async Task RawAndProjectedStreamsReadTheirResultsAsAsked()
    {
        using var store = await server.NewStoreAsync();
        var orders = await QueryServerTests.StoreCorpusAsync(store);
        var company = orders[3].Company;
        using var session = store.OpenAsyncSession();

        var raw = new List<StreamResult<CorpusOrder>>();
        await foreach (var result in session.Advanced.StreamAsync(session.Advanced.AsyncRawQuery<CorpusOrder>("from CorpusOrders where Company = $c").AddParameter("c", company).WaitForNonStaleResults()))
        {
            raw.Add(result);
        }

        var projected = new List<(string? Id, string City)>();
        await foreach (var result in session.Advanced.StreamAsync(session.Query<CorpusOrder>().Where(x => x.Company == company).Select(x => new { x.Id, City = x.ShipTo.City })))
        {
            projected.Add((result.Document.Id, result.Document.City));
            Assert.Equal(result.Id, result.Document.Id);
            Assert.True((bool)result.Metadata["@projection"]!);
        }

        var expected = orders.Where(x => x.Company == company).ToList();
        Assert.Equal(expected.Select(x => x.Id).Order(), raw.Select(r => r.Document.Id).Order());
        Assert.Equal(expected.Select(x => (x.Id, x.ShipTo.City)).Order(), projected.Order());
        Assert.False(session.Advanced.IsLoaded(expected[0].Id!));
    }

    [Fact]
    public async Task LeavingAStreamEarlyClosesItAndTheStoreGoesOn()
    {
        using var store = await server.NewStoreAsync();
        await QueryServerTests.StoreCorpusAsync(store);
        using var session = store.OpenAsyncSession();

        for (var round = 0; round < 3; round++)
        {
            var read = 0;
            await foreach (var _ in session.Advanced.StreamAsync<CorpusOrder>("orders/"))
            {
                if (++read == 10)
                {
                    break;
                }
            }

            Assert.Equal(10, read);
        }

        using var cancel = new CancellationTokenSource();
        var count = 0;
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            await foreach (var _ in session.Advanced.StreamAsync<CorpusOrder>(startsWith: null).WithCancellation(cancel.Token))
            {
                if (++count == 5)
                {
                    await cancel.CancelAsync();
                }
            }
        });

        Assert.Equal(5, count);
        Assert.NotNull(await session.LoadAsync<CorpusOrder>("orders/1"));
    }

    [Fact]
    public async Task ABadQueryThrowsWhenTheStreamStarts()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession();

        var stream = session.Advanced.StreamAsync(session.Advanced.AsyncRawQuery<User>("from Users where"));
        var error = await Assert.ThrowsAsync<InvalidQueryException>(async () =>
        {
            await foreach (var _ in stream)
            {
            }
        });
        await Assert.ThrowsAsync<IndexDoesNotExistException>(async () =>
        {
            await foreach (var _ in session.Advanced.StreamAsync(session.Query<User>("Nope/Nothing")))
            {
            }
        });

        Assert.Contains("position", error.Message, StringComparison.Ordinal);
    }
}
