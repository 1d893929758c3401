using System.Net;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Indexes;

public sealed class IndexTaskTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);
    private readonly DocumentStore _store;

    public IndexTaskTests()
    {
        _store = TestStores.Create(_fake);
        _fake.Intercept = r => r.PathAndQuery.EndsWith("/admin/indexes", StringComparison.Ordinal)
            ? FakeJackdaw.Json(HttpStatusCode.Created, new JsonObject
            {
                ["Results"] = new JsonArray([.. r.BodyJson["Indexes"]!.AsArray().Select(i => (JsonNode)new JsonObject { ["Index"] = (string?)i!["Name"], ["RaftCommandIndex"] = 1 })]),
            })
            : null;
    }

    public void Dispose() => _store.Dispose();

    [Fact]
    public void TheIndexNameIsTheClassNameWithUnderscoresAsSlashesUnlessOverridden()
    {
        Assert.Equal("Orders/Totals", new Orders_Totals().IndexName);
        Assert.Equal("Users/ByNameAndAge", new Users_ByNameAndAge().IndexName);
        Assert.Equal("Users/Search", new UsersSearch().IndexName);
    }

    [Fact]
    public async Task ExecuteAsyncPutsTheDefinitionInRavenDbsShape()
    {
        await new Orders_Totals().ExecuteAsync(_store);

        var request = Assert.Single(_fake.Requests);
        Assert.Equal("PUT", request.Method);
        Assert.Equal("/databases/db/admin/indexes", request.PathAndQuery);
        Assert.Equal(
            """{"Indexes":[{"Name":"Orders/Totals","Maps":["map('CorpusOrders', o => ({ Company: o.Company, Freight: o.Freight, City: o.ShipTo.City }))"],"Fields":{"Company":{"Indexing":"Exact","Storage":"Yes"}}}]}""",
            request.Body);
    }

    [Fact]
    public async Task FieldOptionsLeftNullAreNotSent()
    {
        await new UsersSearch().ExecuteAsync(_store, "other");

        var request = Assert.Single(_fake.Requests);
        Assert.Equal("/databases/other/admin/indexes", request.PathAndQuery);
        Assert.Equal("""{"Indexing":"Search"}""", request.BodyJson["Indexes"]![0]!["Fields"]!["Name"]!.ToJsonString());
    }

    [Fact]
    public async Task CreateIndexesPutsEveryTaskOfTheAssemblyInOneRequest()
    {
        var names = await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, _store);

        Assert.Equal(["Orders/Totals", "Users/Search", "Users/ByNameAndAge"], names);
        var request = Assert.Single(_fake.Requests);
        Assert.Equal(names, request.BodyJson["Indexes"]!.AsArray().Select(i => (string?)i!["Name"]));
    }

    [Fact]
    public async Task AnIndexTheServerCannotCompileThrowsIndexCompilationException()
    {
        _fake.Intercept = _ => FakeJackdaw.Error(HttpStatusCode.BadRequest, "IndexCompilationException", "Index 'Orders/Totals' cannot be compiled (line 1, column 9): unexpected token");

        var error = await Assert.ThrowsAsync<IndexCompilationException>(() => new Orders_Totals().ExecuteAsync(_store));

        Assert.Contains("line 1, column 9", error.Message, StringComparison.Ordinal);
    }
}
