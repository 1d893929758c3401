using System.Net;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Indexes;

public sealed class IndexTaskTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database, "other");
    private readonly DocumentStore _store;

    public IndexTaskTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    private RecordedRequest ThePut() => Assert.Single(_fake.Requests, r => r.Method == "PUT");

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
        var deployed = await new Orders_Totals().ExecuteAsync(_store);

        Assert.Equal(new IndexDeployment("Orders/Totals", IndexDeploymentOutcome.Created), deployed);
        var request = ThePut();
        Assert.Equal("/databases/db/admin/indexes", request.PathAndQuery);
        Assert.Equal(
            """{"Indexes":[{"Name":"Orders/Totals","Maps":["map('CorpusOrders', o => ({ Company: o.Company, Freight: o.Freight, City: o.ShipTo.City }))"],"Fields":{"Company":{"Indexing":"Exact","Storage":"Yes"}},"AdditionalSources":{}}]}""",
            request.Body);
    }

    [Fact]
    public async Task ADeploymentReadsTheDefinitionsAndLockModesBeforeItsPut()
    {
        await new Orders_Totals().ExecuteAsync(_store);

        var requests = _fake.Requests.Select(r => (r.Method, r.PathAndQuery)).ToList();
        Assert.Equal(3, requests.Count);
        Assert.Equal(
            [("GET", "/databases/db/indexes"), ("GET", "/databases/db/indexes/stats")],
            requests.Take(2).Order());
        Assert.Equal(("PUT", "/databases/db/admin/indexes"), requests[2]);
    }

    [Fact]
    public async Task FieldOptionsLeftNullAreNotSent()
    {
        await new UsersSearch().ExecuteAsync(_store, "other");

        var request = ThePut();
        Assert.Equal("/databases/other/admin/indexes", request.PathAndQuery);
        Assert.Equal("""{"Indexing":"Search"}""", request.BodyJson["Indexes"]![0]!["Fields"]!["Name"]!.ToJsonString());
    }

    [Fact]
    public async Task AMapReduceTaskSendsItsReduceAndOutputAndAMapTaskSendsNone()
    {
        var task = new Orders_ByCompany("CorpusOrders") { OutputReduceToCollection = "CompanyTotals", PatternForOutputReduceToCollectionReferences = "reports/{Company}" };
        await task.ExecuteAsync(_store);
        var mapReduce = ThePut().BodyJson["Indexes"]![0]!.AsObject();
        await new UsersSearch().ExecuteAsync(_store);
        var map = _fake.Requests.Last(r => r.Method == "PUT").BodyJson["Indexes"]![0]!.AsObject();

        Assert.Equal(task.Reduce, (string?)mapReduce["Reduce"]);
        Assert.Equal("CompanyTotals", (string?)mapReduce["OutputReduceToCollection"]);
        Assert.Equal("reports/{Company}", (string?)mapReduce["PatternForOutputReduceToCollectionReferences"]);
        Assert.False(mapReduce.ContainsKey("PatternReferencesCollectionName"));
        Assert.False(map.ContainsKey("Reduce"));
        Assert.False(map.ContainsKey("OutputReduceToCollection"));
    }

    [Fact]
    public async Task CreateIndexesPutsEveryTaskOfTheAssemblyInOneRequest()
    {
        var deployed = await IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, _store);

        Assert.Equal(["Orders/Totals", "Users/Search", "Users/ByNameAndAge"], deployed.Select(d => d.Name));
        Assert.All(deployed, d => Assert.Equal(IndexDeploymentOutcome.Created, d.Outcome));
        Assert.Equal(deployed.Select(d => d.Name), ThePut().BodyJson["Indexes"]!.AsArray().Select(i => (string?)i!["Name"]));
    }

    [Fact]
    public async Task CreateIndexesReportsCreatedUnchangedReplacedAndIgnoredPerIndex()
    {
        await _store.Maintenance.PutIndexesAsync(
            new IndexDefinition { Name = "Orders/Totals", Maps = ["map('CorpusOrders', o => ({ Company: o.Company }))"] },
            new Users_ByNameAndAge().CreateIndexDefinition(),
            new IndexDefinition { Name = "Users/Search", Maps = ["map('Users', u => ({ Name: u.Name, Age: u.Age }))"] });
        await _store.Maintenance.SetIndexLockAsync(IndexLockMode.LockedIgnore, "Users/Search");

        var deployed = await IndexCreation.CreateIndexesAsync([new Orders_Totals(), new Users_ByNameAndAge(), new UsersSearch(), NewIndex.Create()], _store);

        Assert.Equal(
            [
                new IndexDeployment("Orders/Totals", IndexDeploymentOutcome.Replaced),
                new IndexDeployment("Users/ByNameAndAge", IndexDeploymentOutcome.Unchanged),
                new IndexDeployment("Users/Search", IndexDeploymentOutcome.Ignored),
                new IndexDeployment("New/Index", IndexDeploymentOutcome.Created),
            ],
            deployed);
        Assert.Equal(4, _fake.RequestsTo("/admin/indexes").Last().BodyJson["Indexes"]!.AsArray().Count);
    }

    [Fact]
    public async Task WhitespaceInMapsAndFieldOptionsAtTheirDefaultsAreNoChange()
    {
        await _store.Maintenance.PutIndexesAsync(new IndexDefinition
        {
            Name = "Users/ByNameAndAge",
            Maps = ["  map('Users',\n\tu => ({ Name: u.Name,   Age: u.Age }))\n"],
            Fields = { ["Name"] = new IndexFieldOptions { Indexing = FieldIndexing.Default, Storage = FieldStorage.No } },
        });

        var deployed = await new Users_ByNameAndAge().ExecuteAsync(_store);

        Assert.Equal(IndexDeploymentOutcome.Unchanged, deployed.Outcome);
    }

    [Fact]
    public async Task AChangedFieldOptionIsAReplacement()
    {
        await new UsersSearch().ExecuteAsync(_store);
        var changed = new UsersSearch();
        changed.Fields["Name"].Storage = FieldStorage.Yes;

        var deployed = await changed.ExecuteAsync(_store);

        Assert.Equal(IndexDeploymentOutcome.Replaced, deployed.Outcome);
    }

    [Fact]
    public async Task CreateIndexesWithNoTasksSendsNothing()
    {
        Assert.Empty(await IndexCreation.CreateIndexesAsync([], _store));

        Assert.Empty(_fake.Requests);
    }

    [Fact]
    public async Task AChangedIndexLockedWithLockedErrorThrowsIndexLockedException()
    {
        await _store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "Users/Search", Maps = ["map('Users', u => ({ Age: u.Age }))"] });
        await _store.Maintenance.SetIndexLockAsync(IndexLockMode.LockedError, "Users/Search");

        var error = await Assert.ThrowsAsync<IndexLockedException>(() => IndexCreation.CreateIndexesAsync(typeof(Orders_Totals).Assembly, _store));

        Assert.Equal((HttpStatusCode.Conflict, "IndexLockedException"), (error.StatusCode, error.ServerErrorType));
        Assert.Contains("Users/Search", error.Message, StringComparison.Ordinal);
        Assert.Null(_fake.Index(TestStores.Database, "Orders/Totals"));
    }

    [Fact]
    public async Task AnIndexTheServerCannotCompileThrowsIndexCompilationException()
    {
        _fake.Intercept = r => r.Method == "PUT"
            ? FakeJackdaw.Error(HttpStatusCode.BadRequest, "IndexCompilationException", "Index 'Orders/Totals' cannot be compiled (line 1, column 9): unexpected token")
            : null;

        var error = await Assert.ThrowsAsync<IndexCompilationException>(() => new Orders_Totals().ExecuteAsync(_store));

        Assert.Contains("line 1, column 9", error.Message, StringComparison.Ordinal);
    }

    // Not a task of the assembly (no public constructor), so CreateIndexesAsync(assembly) leaves it out.
    private sealed class NewIndex : AbstractJavaScriptIndexCreationTask
    {
        private NewIndex() => Maps = ["map('Users', u => ({ Email: u.Email }))"];

        public override string IndexName => "New/Index";

        public static NewIndex Create() => new();
    }
}
