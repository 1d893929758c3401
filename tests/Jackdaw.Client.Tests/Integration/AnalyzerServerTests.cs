using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>A database's analyzers through <c>store.Maintenance</c>, and index fields that use them, against the real server.</summary>
public sealed class AnalyzerServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private const string Folding = """{"Tokenizer":"Whitespace","TokenFilters":["LowerCase","ASCIIFolding"]}""";

    private static IndexDefinition UsersByName(string analyzer) => new()
    {
        Name = "Users/ByName",
        Maps = ["map('Users', u => ({ Name: u.Name }))"],
        // No indexing: as in RavenDB, a field that names an analyzer is a Search field.
        Fields = { ["Name"] = new IndexFieldOptions { Analyzer = analyzer } },
    };

    private static async Task<List<string>> SearchAsync(DocumentStore store, string words)
    {
        using var session = store.OpenAsyncSession();
        var users = await session.Query<User>("Users/ByName")
            .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
            .Search(x => x.Name, words)
            .ToListAsync();
        return [.. users.Select(u => u.Id!).Order(StringComparer.Ordinal)];
    }

    [Fact]
    public async Task AnAnalyzerPutFromTheClientFoldsTheWordsOfAFieldThatNamesIt()
    {
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Name = "Zoë Çelik" }, "users/1");
            await session.StoreAsync(new User { Name = "zoe celik" }, "users/2");
            await session.StoreAsync(new User { Name = "Anna Smith" }, "users/3");
            await session.SaveChangesAsync();
        }

        await store.Maintenance.PutAnalyzersAsync(new AnalyzerDefinition { Name = "Folding", Code = Folding }, new AnalyzerDefinition { Name = "Words", Code = "WhitespaceAnalyzer" });
        var analyzers = await store.Maintenance.GetAnalyzersAsync();
        Assert.Equal([("Folding", Folding), ("Words", "WhitespaceAnalyzer")], analyzers.Select(a => (a.Name, a.Code)));

        await store.Maintenance.PutIndexesAsync(UsersByName("Folding"));
        Assert.Equal(["users/1", "users/2"], await SearchAsync(store, "zoe"));
        Assert.Equal(["users/1", "users/2"], await SearchAsync(store, "ÇELIK"));
        var definition = Assert.Single(await store.Maintenance.GetIndexesAsync(), d => d.Name == "Users/ByName");
        Assert.Equal((FieldIndexing.Search, "Folding"), (definition.Fields["Name"].Indexing, definition.Fields["Name"].Analyzer));

        // The same definition read back is no change: the client's comparison agrees with the server's.
        var deployed = await IndexCreation.CreateIndexesAsync([new UsersByNameTask("Folding")], store);
        Assert.Equal(IndexDeploymentOutcome.Unchanged, Assert.Single(deployed).Outcome);
    }

    [Fact]
    public async Task AnalyzerErrorsAreTypedExceptions()
    {
        using var store = await server.NewStoreAsync();

        var compile = await Assert.ThrowsAsync<AnalyzerCompilationException>(() => store.Maintenance.PutAnalyzersAsync(new AnalyzerDefinition { Name = "Mine", Code = "public class Mine : Analyzer { }" }));
        Assert.Contains("does not compile analyzer classes", compile.Message, StringComparison.Ordinal);
        Assert.Empty(await store.Maintenance.GetAnalyzersAsync());

        var unknown = await Assert.ThrowsAsync<IndexCompilationException>(() => store.Maintenance.PutIndexesAsync(UsersByName("Mine")));
        Assert.Contains("Cannot find analyzer type 'Mine' for field: Name", unknown.Message, StringComparison.Ordinal);

        await store.Maintenance.PutAnalyzersAsync(new AnalyzerDefinition { Name = "Mine", Code = Folding });
        await store.Maintenance.PutIndexesAsync(UsersByName("Mine"));
        var inUse = await Assert.ThrowsAsync<AnalyzerInUseException>(() => store.Maintenance.DeleteAnalyzerAsync("Mine"));
        Assert.Contains("'Users/ByName'", inUse.Message, StringComparison.Ordinal);

        await store.Maintenance.DeleteIndexAsync("Users/ByName");
        await store.Maintenance.DeleteAnalyzerAsync("Mine");
        await store.Maintenance.DeleteAnalyzerAsync("Mine");
        Assert.Empty(await store.Maintenance.GetAnalyzersAsync());
    }

    private sealed class UsersByNameTask : AbstractJavaScriptIndexCreationTask
    {
        public UsersByNameTask(string analyzer)
        {
            Maps = ["map('Users', u => ({ Name: u.Name }))"];
            Fields["Name"] = new IndexFieldOptions { Indexing = FieldIndexing.Search, Analyzer = analyzer };
        }

        public override string IndexName => "Users/ByName";
    }
}
