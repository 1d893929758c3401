using System.Net;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Indexes;

public sealed class IndexMaintenanceTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);
    private readonly DocumentStore _store;

    public IndexMaintenanceTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    private void AnswerWith(JsonObject body) => _fake.Intercept = _ => FakeJackdaw.Json(HttpStatusCode.OK, body);

    [Fact]
    public async Task IndexStatisticsAreRead()
    {
        AnswerWith(JsonNode.Parse("""
            {"Results":[{"Name":"Orders/Totals","Type":"Map","SourceType":"Documents","State":"Normal","EntriesCount":830,"MapAttempts":831,"MapSuccesses":830,"MapErrors":1,
            "LastIndexedEtag":2000,"IsStale":false,"LastQueryingTime":"2026-11-23T10:00:00.0000000Z","LastIndexingTime":null,"Collections":{"Orders":{}}},
            {"Name":"Auto/Users/ByName","Type":"AutoMap","State":"Idle","EntriesCount":0,"MapAttempts":0,"MapErrors":0,"LastIndexedEtag":0,"IsStale":true}]}
            """)!.AsObject());

        var stats = await _store.Maintenance.GetIndexStatisticsAsync();

        Assert.Equal("/databases/db/indexes/stats", _fake.Requests.Single().PathAndQuery);
        Assert.Equal(2, stats.Length);
        var totals = stats[0];
        Assert.Equal(("Orders/Totals", IndexType.Map, IndexState.Normal, 830L, 831L, 1L, 2000L, false), (totals.Name, totals.Type, totals.State, totals.EntriesCount, totals.MapAttempts, totals.MapErrors, totals.LastIndexedEtag, totals.IsStale));
        Assert.Equal(new DateTime(2026, 11, 23, 10, 0, 0, DateTimeKind.Utc), totals.LastQueryingTime);
        Assert.Null(totals.LastIndexingTime);
        Assert.Equal((IndexType.AutoMap, IndexState.Idle, true), (stats[1].Type, stats[1].State, stats[1].IsStale));
    }

    [Fact]
    public async Task IndexErrorsAreRead()
    {
        AnswerWith(JsonNode.Parse("""
            {"Results":[{"Name":"Orders/Totals","Errors":[{"Document":"orders/7-A","Action":"Map","Error":"TypeError: o.ShipTo is undefined","Timestamp":"2026-11-23T10:00:00.0000000Z"}]}]}
            """)!.AsObject());

        var errors = await _store.Maintenance.GetIndexErrorsAsync();

        Assert.Equal("/databases/db/indexes/errors", _fake.Requests.Single().PathAndQuery);
        var error = Assert.Single(Assert.Single(errors).Errors);
        Assert.Equal(("orders/7-A", "Map", "TypeError: o.ShipTo is undefined"), (error.Document, error.Action, error.Error));
        Assert.Equal(new DateTime(2026, 11, 23, 10, 0, 0, DateTimeKind.Utc), error.Timestamp);
    }

    [Fact]
    public async Task IndexDefinitionsAreRead()
    {
        AnswerWith(JsonNode.Parse("""
            {"Results":[{"Name":"Orders/Totals","Type":"JavaScriptMap","Maps":["map('Orders', o => ({ Company: o.Company }))"],"Fields":{"Company":{"Indexing":"Exact","Storage":"No"}},"Reduce":null,"LockMode":"Unlock"}]}
            """)!.AsObject());

        var definition = Assert.Single(await _store.Maintenance.GetIndexesAsync());

        Assert.Equal("/databases/db/indexes", _fake.Requests.Single().PathAndQuery);
        Assert.Equal("Orders/Totals", definition.Name);
        Assert.Equal(IndexType.JavaScriptMap, definition.Type);
        Assert.Equal(["map('Orders', o => ({ Company: o.Company }))"], definition.Maps);
        Assert.Equal((FieldIndexing.Exact, FieldStorage.No), (definition.Fields["Company"].Indexing, definition.Fields["Company"].Storage));
    }

    [Fact]
    public async Task PutIndexesSendsEveryDefinitionAndReturnsTheServersNames()
    {
        _fake.Intercept = _ => FakeJackdaw.Json(HttpStatusCode.Created, JsonNode.Parse("""{"Results":[{"Index":"A"},{"Index":"B"}]}""")!);

        var results = await _store.Maintenance.PutIndexesAsync(
            new IndexDefinition { Name = "A", Maps = ["map('Users', u => ({ Name: u.Name }))"] },
            new IndexDefinition { Name = "B", Maps = ["map('Users', u => ({ Age: u.Age }))"], Fields = { ["Age"] = new IndexFieldOptions { Storage = FieldStorage.Yes } } });

        Assert.Equal(["A", "B"], results.Select(r => r.Index));
        var request = _fake.Requests.Single();
        Assert.Equal(("PUT", "/databases/db/admin/indexes"), (request.Method, request.PathAndQuery));
        Assert.Equal(
            """{"Indexes":[{"Name":"A","Maps":["map('Users', u => ({ Name: u.Name }))"],"Fields":{},"AdditionalSources":{}},{"Name":"B","Maps":["map('Users', u => ({ Age: u.Age }))"],"Fields":{"Age":{"Storage":"Yes"}},"AdditionalSources":{}}]}""",
            request.Body);
    }

    [Fact]
    public async Task ResetAndDeleteNameTheIndexInTheQuery()
    {
        _fake.Intercept = _ => new HttpResponseMessage(HttpStatusCode.NoContent);

        await _store.Maintenance.ResetIndexAsync("Orders/Totals");
        await _store.Maintenance.DeleteIndexAsync("Orders/Totals");

        Assert.Equal(
            [("RESET", "/databases/db/indexes?name=Orders%2FTotals"), ("DELETE", "/databases/db/indexes?name=Orders%2FTotals")],
            _fake.Requests.Select(r => (r.Method, r.PathAndQuery)));
    }

    [Fact]
    public async Task ForDatabaseSendsIndexOperationsToThatDatabase()
    {
        AnswerWith(new JsonObject { ["Results"] = new JsonArray() });

        Assert.Empty(await _store.Maintenance.ForDatabase("other db").GetIndexStatisticsAsync());

        Assert.Equal("/databases/other%20db/indexes/stats", _fake.Requests.Single().PathAndQuery);
    }

    [Fact]
    public async Task IndexOperationsWithoutADatabaseSayHowToGiveOne()
    {
        using var store = new DocumentStore { Urls = ["http://jackdaw.test"], HttpMessageHandlerFactory = () => _fake }.Initialize();

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => store.Maintenance.GetIndexesAsync());

        Assert.Contains("ForDatabase", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AMissingIndexThrowsIndexDoesNotExist()
    {
        _fake.Intercept = _ => FakeJackdaw.Error(HttpStatusCode.NotFound, "IndexDoesNotExistException", "There is no index named 'Nope' in this database.");

        var error = await Assert.ThrowsAsync<IndexDoesNotExistException>(() => _store.Maintenance.DeleteIndexAsync("Nope"));

        Assert.Equal(HttpStatusCode.NotFound, error.StatusCode);
    }

    [Fact]
    public async Task AnalyzersArePutListedAndDeletedWithRavenDbsShapes()
    {
        _fake.Intercept = request => request.Method switch
        {
            "PUT" => new HttpResponseMessage(HttpStatusCode.Created),
            "DELETE" => new HttpResponseMessage(HttpStatusCode.NoContent),
            _ => FakeJackdaw.Json(HttpStatusCode.OK, JsonNode.Parse("""{"Analyzers":[{"Name":"Folding","Code":"WhitespaceAnalyzer"}]}""")!),
        };

        await _store.Maintenance.PutAnalyzersAsync(new AnalyzerDefinition { Name = "Folding", Code = "{\"Tokenizer\":\"Whitespace\"}" });
        var listed = Assert.Single(await _store.Maintenance.GetAnalyzersAsync());
        await _store.Maintenance.DeleteAnalyzerAsync("My Analyzer/2");

        Assert.Equal(
            [("PUT", "/databases/db/admin/analyzers"), ("GET", "/databases/db/analyzers"), ("DELETE", "/databases/db/admin/analyzers?name=My%20Analyzer%2F2")],
            _fake.Requests.Select(r => (r.Method, r.PathAndQuery)));
        Assert.Equal("""{"Analyzers":[{"Name":"Folding","Code":"{\"Tokenizer\":\"Whitespace\"}"}]}""", _fake.Requests.First().Body);
        Assert.Equal(("Folding", "WhitespaceAnalyzer"), (listed.Name, listed.Code));
        await Assert.ThrowsAsync<ArgumentException>(() => _store.Maintenance.PutAnalyzersAsync());
        await Assert.ThrowsAsync<ArgumentException>(() => _store.Maintenance.DeleteAnalyzerAsync(" "));
    }

    [Fact]
    public async Task AFieldsAnalyzerIsSentWithItsOptions()
    {
        _fake.Intercept = _ => FakeJackdaw.Json(HttpStatusCode.Created, JsonNode.Parse("""{"Results":[{"Index":"A"}]}""")!);

        await _store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "A", Maps = ["map('Users', u => ({ Name: u.Name }))"], Fields = { ["Name"] = new IndexFieldOptions { Analyzer = "Folding" } } });

        Assert.Equal("""{"Analyzer":"Folding"}""", _fake.Requests.Single().BodyJson["Indexes"]![0]!["Fields"]!["Name"]!.ToJsonString());
    }
}
