using System.Globalization;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>session.Advanced.Revisions and the revisions operations against the real server.</summary>
public sealed class RevisionServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private static async Task<DocumentStore> StoreWithRevisionsAsync(ServerFixture server)
    {
        var store = await server.NewStoreAsync();
        await store.Maintenance.SendAsync(new ConfigureRevisionsOperation(new RevisionsConfiguration
        {
            Default = new RevisionsCollectionConfiguration { MinimumRevisionsToKeep = 100 },
        }));
        return store;
    }

    /// <summary>Stores users/1 as "v1", then "v2", then "v3", each in a save of its own.</summary>
    private static async Task WriteThreeVersionsAsync(DocumentStore store, string id = "users/1")
    {
        foreach (var name in new[] { "v1", "v2", "v3" })
        {
            using var session = store.OpenAsyncSession();
            var user = await session.LoadAsync<User>(id) ?? new User { Id = id };
            user.Name = name;
            await session.StoreAsync(user);
            await session.SaveChangesAsync();
        }
    }

    private static DateTime LastModified(IAsyncDocumentSession session, object entity) =>
        DateTime.Parse(session.Advanced.GetMetadataFor(entity).GetString("@last-modified")!, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal);

    [Fact]
    public async Task EveryWriteIsARevisionReadNewestFirstByPageByChangeVectorAndByDate()
    {
        using var store = await StoreWithRevisionsAsync(server);
        await WriteThreeVersionsAsync(store);

        using var session = store.OpenAsyncSession();
        Assert.Equal(3, await session.Advanced.Revisions.GetCountForAsync("users/1"));
        var revisions = await session.Advanced.Revisions.GetForAsync<User>("users/1");
        Assert.Equal(["v3", "v2", "v1"], revisions.Select(r => r.Name));
        Assert.All(revisions, r => Assert.Equal("users/1", r.Id));
        Assert.Equal(["v2", "v1"], (await session.Advanced.Revisions.GetForAsync<User>("users/1", start: 1, pageSize: 5)).Select(r => r.Name));
        Assert.Contains("Revision", session.Advanced.GetMetadataFor(revisions[0]).GetString("@flags"));

        var metadata = await session.Advanced.Revisions.GetMetadataForAsync("users/1");
        var changeVectors = revisions.Select(r => session.Advanced.GetChangeVectorFor(r)).ToList();
        Assert.Equal(changeVectors, metadata.Select(m => m.GetString("@change-vector")));

        var first = await session.Advanced.Revisions.GetAsync<User>(changeVectors[2]!);
        Assert.Equal("v1", first!.Name);
        var several = await session.Advanced.Revisions.GetAsync<User>([changeVectors[1]!, changeVectors[0]!]);
        Assert.Equal(["v2", "v3"], several.Values.Select(r => r!.Name));

        var v1 = LastModified(session, revisions[2]);
        var v2 = LastModified(session, revisions[1]);
        Assert.True(v2 > v1, $"v2 ({v2:O}) was written after v1 ({v1:O})");
        Assert.Equal("v1", (await session.Advanced.Revisions.GetBeforeAsync<User>("users/1", v1 + ((v2 - v1) / 2)))!.Name);
        Assert.Equal("v3", (await session.Advanced.Revisions.GetAsync<User>("users/1", DateTime.UtcNow.AddMinutes(1)))!.Name);
        Assert.Null(await session.Advanced.Revisions.GetBeforeAsync<User>("users/1", v1.AddDays(-1)));

        // Revisions are never saved back, and the document itself was not touched.
        revisions[0].Name = "changed";
        await session.SaveChangesAsync();
        Assert.Equal("v3", (await session.LoadAsync<User>("users/1"))!.Name);
        Assert.Equal(3, await session.Advanced.Revisions.GetCountForAsync("users/1"));
    }

    [Fact]
    public async Task ADocumentWithoutRevisionsHasNone()
    {
        using var store = await server.NewStoreAsync();
        await WriteThreeVersionsAsync(store);
        using var session = store.OpenAsyncSession();
        Assert.Equal(0, await session.Advanced.Revisions.GetCountForAsync("users/1"));
        Assert.Empty(await session.Advanced.Revisions.GetForAsync<User>("users/1"));
        Assert.Empty(await session.Advanced.Revisions.GetMetadataForAsync("users/none"));
        Assert.Null(await session.Advanced.Revisions.GetAsync<User>("A:999-AAAAAAAAAAAAAAAAAAAAAA"));
    }

    [Fact]
    public async Task AForcedRevisionIsMadeWithoutAPolicyOnceForTheSameVersion()
    {
        using var store = await server.NewStoreAsync();
        await WriteThreeVersionsAsync(store);
        using (var session = store.OpenAsyncSession())
        {
            var user = await session.LoadAsync<User>("users/1");
            session.Advanced.Revisions.ForceRevisionCreationFor(user!);
            await session.SaveChangesAsync();

            // The document is re-stored with HasRevisions: the session follows its change vector.
            session.Advanced.UseOptimisticConcurrency = true;
            user!.Name = "v4";
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            var revisions = await session.Advanced.Revisions.GetForAsync<User>("users/1");
            Assert.Equal(["v3"], revisions.Select(r => r.Name));
            session.Advanced.Revisions.ForceRevisionCreationFor("users/1");
            await session.SaveChangesAsync();
            Assert.Equal(2, await session.Advanced.Revisions.GetCountForAsync("users/1"));
            session.Advanced.Revisions.ForceRevisionCreationFor("users/1");
            await session.SaveChangesAsync();
            Assert.Equal(2, await session.Advanced.Revisions.GetCountForAsync("users/1"));
        }
    }

    [Fact]
    public async Task AForcedRevisionOfADocumentTheSaveChangesIsTheVersionBeforeIt()
    {
        using var store = await server.NewStoreAsync();
        await WriteThreeVersionsAsync(store);
        using (var session = store.OpenAsyncSession())
        {
            session.Advanced.UseOptimisticConcurrency = true;
            var user = await session.LoadAsync<User>("users/1");
            user!.Name = "v4";
            session.Advanced.Revisions.ForceRevisionCreationFor(user);
            var created = new User { Id = "users/2", Name = "new" };
            await session.StoreAsync(created);
            session.Advanced.Revisions.ForceRevisionCreationFor(created);
            await session.SaveChangesAsync();

            // The change vectors the save left let a concurrency-checked write through.
            user.Name = "v5";
            created.Name = "new 2";
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            Assert.Equal(["v3"], (await session.Advanced.Revisions.GetForAsync<User>("users/1")).Select(r => r.Name));
            Assert.Equal(["new"], (await session.Advanced.Revisions.GetForAsync<User>("users/2")).Select(r => r.Name));
            Assert.Equal("v5", (await session.LoadAsync<User>("users/1"))!.Name);
        }
    }

    [Fact]
    public async Task ForcingARevisionOfAMissingDocumentFailsTheSaveNamingIt()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1", Name = "kept out" });
        session.Advanced.Revisions.ForceRevisionCreationFor("users/none");
        var missing = await Assert.ThrowsAsync<DocumentDoesNotExistException>(() => session.SaveChangesAsync());
        Assert.Contains("users/none", missing.Message);

        // The batch is atomic: the document saved with it is not stored.
        using var check = store.OpenAsyncSession();
        Assert.Null(await check.LoadAsync<User>("users/1"));
    }

    [Fact]
    public async Task TheConfigurationIsStoredAsSent()
    {
        using var store = await server.NewStoreAsync();
        Assert.Null(await store.Maintenance.SendAsync(new GetRevisionsConfigurationOperation()));
        await store.Maintenance.SendAsync(new ConfigureRevisionsOperation(new RevisionsConfiguration
        {
            Default = new RevisionsCollectionConfiguration { Disabled = true },
            Collections = new()
            {
                ["Users"] = new RevisionsCollectionConfiguration { MinimumRevisionsToKeep = 2, PurgeOnDelete = true },
                ["Orders"] = new RevisionsCollectionConfiguration { MinimumRevisionsToKeep = 1, MinimumRevisionAgeToKeep = new TimeSpan(1, 2, 3, 4), MaximumRevisionsToDeleteUponDocumentUpdate = 10 },
            },
        }));
        var configuration = await store.Maintenance.SendAsync(new GetRevisionsConfigurationOperation());
        Assert.True(configuration!.Default!.Disabled);
        var users = configuration.Collections!["Users"];
        Assert.Equal((2L, null, true), (users.MinimumRevisionsToKeep, users.MinimumRevisionAgeToKeep, users.PurgeOnDelete));
        var orders = configuration.Collections["Orders"];
        Assert.Equal((new TimeSpan(1, 2, 3, 4), 10L), (orders.MinimumRevisionAgeToKeep, orders.MaximumRevisionsToDeleteUponDocumentUpdate));

        // Users keep two (with no age limit holding older ones back); other collections none.
        await WriteThreeVersionsAsync(store, "users/1");
        foreach (var name in new[] { "c1", "c2", "c3" })
        {
            using var write = store.OpenAsyncSession();
            await write.StoreAsync(new Company { Id = "companies/1", Name = name });
            await write.SaveChangesAsync();
        }

        using var session = store.OpenAsyncSession();
        Assert.Equal(2, await session.Advanced.Revisions.GetCountForAsync("users/1"));
        Assert.Equal(0, await session.Advanced.Revisions.GetCountForAsync("companies/1"));
    }

    [Fact]
    public async Task ADocumentIsRevertedToOneOfItsRevisions()
    {
        using var store = await StoreWithRevisionsAsync(server);
        await WriteThreeVersionsAsync(store);
        string firstChangeVector;
        using (var session = store.OpenAsyncSession())
        {
            var revisions = await session.Advanced.Revisions.GetForAsync<User>("users/1");
            firstChangeVector = session.Advanced.GetChangeVectorFor(revisions[^1])!;
        }

        await store.Operations.SendAsync(new RevertRevisionsByIdOperation("users/1", firstChangeVector));
        using (var session = store.OpenAsyncSession())
        {
            Assert.Equal("v1", (await session.LoadAsync<User>("users/1"))!.Name);
            Assert.Equal(4, await session.Advanced.Revisions.GetCountForAsync("users/1"));
        }

        await Assert.ThrowsAnyAsync<JackdawException>(() => store.Operations.SendAsync(new RevertRevisionsByIdOperation("users/2", firstChangeVector)));
    }

    [Fact]
    public async Task RevertRevisionsBringsTheDatabaseBackToAPointInTime()
    {
        using var store = await StoreWithRevisionsAsync(server);
        await WriteThreeVersionsAsync(store, "users/1");
        DateTime pointInTime;
        using (var session = store.OpenAsyncSession())
        {
            var revisions = await session.Advanced.Revisions.GetForAsync<User>("users/1");
            var v1 = LastModified(session, revisions[2]);
            var v2 = LastModified(session, revisions[1]);
            pointInTime = v1 + ((v2 - v1) / 2);
        }

        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/2", Name = "created later" });
            await session.SaveChangesAsync();
        }

        var operation = await store.Maintenance.SendAsync(new RevertRevisionsOperation(pointInTime, 0));
        var result = await operation.WaitForCompletionAsync<RevertResult>(TimeSpan.FromMinutes(1));
        Assert.True(result.RevertedDocuments >= 1, $"reverted {result.RevertedDocuments}");

        using (var session = store.OpenAsyncSession())
        {
            Assert.Equal("v1", (await session.LoadAsync<User>("users/1"))!.Name);
            Assert.Null(await session.LoadAsync<User>("users/2"));
        }
    }

    [Fact]
    public async Task ARevisionsAttachmentIsReadByChangeVectorAndARevertBringsItBack()
    {
        using var store = await StoreWithRevisionsAsync(server);
        var pdf = Enumerable.Range(0, 100_000).Select(i => (byte)(i * 7)).ToArray();
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/1", Name = "Ann" });
            session.Advanced.Attachments.Store("users/1", "invoice.pdf", new MemoryStream(pdf), "application/pdf");
            await session.SaveChangesAsync();
        }
        string withPdf;
        using (var session = store.OpenAsyncSession())
        {
            withPdf = (await session.Advanced.Revisions.GetMetadataForAsync("users/1", pageSize: 1))[0].GetString("@change-vector")!;
        }
        using (var session = store.OpenAsyncSession())
        {
            session.Advanced.Attachments.Delete("users/1", "invoice.pdf");
            await session.SaveChangesAsync();
            session.Delete("users/1");
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            using var result = await session.Advanced.Attachments.GetRevisionAsync("users/1", "invoice.pdf", withPdf);
            Assert.NotNull(result);
            Assert.Equal(pdf, await ReadAllAsync(result.Stream));
            Assert.Equal((100_000L, "invoice.pdf"), (result.Details.Size, result.Details.Name));
            Assert.Null(await session.Advanced.Attachments.GetRevisionAsync("users/1", "other.pdf", withPdf));
        }
        using (var operation = await store.Operations.SendAsync(new GetAttachmentOperation("users/1", "invoice.pdf", AttachmentType.Revision, withPdf)))
        {
            Assert.Equal(pdf, await ReadAllAsync(operation!.Stream));
        }

        await store.Operations.SendAsync(new RevertRevisionsByIdOperation("users/1", withPdf));
        using (var session = store.OpenAsyncSession())
        {
            var user = await session.LoadAsync<User>("users/1");
            Assert.Equal(["invoice.pdf"], session.Advanced.Attachments.GetNames(user!).Select(a => a.Name));
            using var result = await session.Advanced.Attachments.GetAsync("users/1", "invoice.pdf");
            Assert.Equal(pdf, await ReadAllAsync(result!.Stream));
        }
    }

    private static async Task<byte[]> ReadAllAsync(Stream stream)
    {
        var copy = new MemoryStream();
        await stream.CopyToAsync(copy);
        return copy.ToArray();
    }
}
