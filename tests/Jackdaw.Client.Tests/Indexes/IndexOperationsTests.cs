using System.Net;
using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Indexes;

/// <summary>The index controls of <c>store.Maintenance</c>: the request each sends and how its answer is read.</summary>
public sealed class IndexOperationsTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);
    private readonly DocumentStore _store;

    public IndexOperationsTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    private Task PutAsync(params string[] names) =>
        _store.Maintenance.PutIndexesAsync([.. names.Select(n => new IndexDefinition { Name = n, Maps = ["map('Users', u => ({ Name: u.Name }))"] })]);

    private void AnswerGet(string path, string json) =>
        _fake.Intercept = r => r.Method == "GET" && r.PathAndQuery.StartsWith(path, StringComparison.Ordinal) ? FakeJackdaw.Json(HttpStatusCode.OK, JsonNode.Parse(json)!) : null;

    private async Task<IndexStats> StatsAsync(string name) =>
        Assert.Single(await _store.Maintenance.GetIndexStatisticsAsync(), s => s.Name == name);

    [Fact]
    public async Task SetIndexLockPostsTheNamesAndTheMode()
    {
        await PutAsync("Orders/Totals", "Users/ByName");

        await _store.Maintenance.SetIndexLockAsync(IndexLockMode.LockedError, "Orders/Totals", "Users/ByName");

        var request = _fake.RequestsTo("/set-lock").Single();
        Assert.Equal(("POST", "/databases/db/indexes/set-lock"), (request.Method, request.PathAndQuery));
        Assert.Equal("""{"IndexNames":["Orders/Totals","Users/ByName"],"Mode":"LockedError"}""", request.Body);
        Assert.Equal(IndexLockMode.LockedError, (await StatsAsync("Users/ByName")).LockMode);
    }

    [Fact]
    public async Task SetIndexPriorityPostsTheNamesAndThePriority()
    {
        await PutAsync("Orders/Totals");

        await _store.Maintenance.SetIndexPriorityAsync(IndexPriority.High, "Orders/Totals");

        var request = _fake.RequestsTo("/set-priority").Single();
        Assert.Equal(("POST", "/databases/db/indexes/set-priority"), (request.Method, request.PathAndQuery));
        Assert.Equal("""{"IndexNames":["Orders/Totals"],"Priority":"High"}""", request.Body);
        Assert.Equal(IndexPriority.High, (await StatsAsync("Orders/Totals")).Priority);
    }

    [Fact]
    public async Task LockAndPriorityNeedAtLeastOneNameAndSendNothingWithout()
    {
        await Assert.ThrowsAsync<ArgumentException>(() => _store.Maintenance.SetIndexLockAsync(IndexLockMode.Unlock));
        await Assert.ThrowsAsync<ArgumentException>(() => _store.Maintenance.SetIndexPriorityAsync(IndexPriority.Low, "A", ""));

        Assert.Empty(_fake.Requests);
    }

    [Fact]
    public async Task LockingAnIndexTheDatabaseDoesNotHaveThrowsIndexDoesNotExist()
    {
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => _store.Maintenance.SetIndexLockAsync(IndexLockMode.LockedIgnore, "Nope"));
    }

    [Fact]
    public async Task DisableAndEnableNameTheIndexOnRavenDbsAdminRoutes()
    {
        await PutAsync("Orders/Totals");

        await _store.Maintenance.DisableIndexAsync("Orders/Totals");
        var disabled = await StatsAsync("Orders/Totals");
        await _store.Maintenance.EnableIndexAsync("Orders/Totals");
        var enabled = await StatsAsync("Orders/Totals");

        Assert.Equal(
            ["/databases/db/admin/indexes/disable?name=Orders%2FTotals", "/databases/db/admin/indexes/enable?name=Orders%2FTotals"],
            _fake.Requests.Where(r => r.Method == "POST").Select(r => r.PathAndQuery));
        Assert.Equal((IndexState.Disabled, IndexRunningStatus.Disabled), (disabled.State, disabled.Status));
        Assert.Equal((IndexState.Normal, IndexRunningStatus.Running), (enabled.State, enabled.Status));
    }

    [Fact]
    public async Task StopAndStartIndexingUseRavenDbsAdminRoutes()
    {
        await PutAsync("Orders/Totals");

        await _store.Maintenance.StopIndexingAsync();
        var stopped = await StatsAsync("Orders/Totals");
        await _store.Maintenance.StartIndexingAsync();

        Assert.Equal(
            [("POST", "/databases/db/admin/indexes/stop", null), ("POST", "/databases/db/admin/indexes/start", null)],
            _fake.Requests.Where(r => r.Method == "POST").Select(r => (r.Method, r.PathAndQuery, r.Body)));
        Assert.Equal(IndexRunningStatus.Paused, stopped.Status);
        Assert.Equal(IndexRunningStatus.Running, (await StatsAsync("Orders/Totals")).Status);
    }

    [Fact]
    public async Task ReplaceIndexPostsTheNameAndThrowsWhenNoReplacementBuilds()
    {
        var error = await Assert.ThrowsAsync<IndexDoesNotExistException>(() => _store.Maintenance.ReplaceIndexAsync("Orders/Totals"));

        var request = Assert.Single(_fake.Requests);
        Assert.Equal(("POST", "/databases/db/indexes/replace?name=Orders%2FTotals"), (request.Method, request.PathAndQuery));
        Assert.Contains("ReplacementOf/Orders/Totals", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task StatisticsReadAReplacementsProgressAndEveryIndexsStatusLockModeAndPriority()
    {
        AnswerGet("/databases/db/indexes/stats", """
            {"Results":[
              {"Name":"Orders/Totals","Type":"Map","State":"Normal","Status":"Running","LockMode":"LockedIgnore","Priority":"Low","EntriesCount":2000,"IsStale":false},
              {"Name":"ReplacementOf/Orders/Totals","Type":"Map","State":"Normal","Status":"Paused","LockMode":"Unlock","Priority":"High",
               "ReplacementOf":"Orders/Totals","Progress":{"ProcessedDocuments":500,"TotalDocuments":2000,"EstimatedTimeLeft":"00:00:03.5000000"},"EntriesCount":500,"IsStale":true},
              {"Name":"ReplacementOf/Users/ByName","Type":"Map","State":"Error","Status":"Disabled","LockMode":"LockedError","Priority":"Normal",
               "ReplacementOf":"Users/ByName","Progress":{"ProcessedDocuments":0,"TotalDocuments":0,"EstimatedTimeLeft":null},"IsStale":true}]}
            """);

        var stats = await _store.Maintenance.GetIndexStatisticsAsync();

        Assert.Equal((IndexRunningStatus.Running, IndexLockMode.LockedIgnore, IndexPriority.Low, null), (stats[0].Status, stats[0].LockMode, stats[0].Priority, stats[0].ReplacementOf));
        Assert.Null(stats[0].Progress);
        var replacement = stats[1];
        Assert.Equal(("Orders/Totals", IndexRunningStatus.Paused, IndexPriority.High), (replacement.ReplacementOf, replacement.Status, replacement.Priority));
        Assert.Equal((500L, 2000L, TimeSpan.FromSeconds(3.5)), (replacement.Progress!.ProcessedDocuments, replacement.Progress.TotalDocuments, replacement.Progress.EstimatedTimeLeft));
        Assert.Equal((IndexState.Error, IndexRunningStatus.Disabled, IndexLockMode.LockedError), (stats[2].State, stats[2].Status, stats[2].LockMode));
        Assert.Null(stats[2].Progress!.EstimatedTimeLeft);
    }

    [Fact]
    public async Task PerformanceNamesEachIndexAndReadsTheBatchesWithTheirOperationTree()
    {
        AnswerGet("/databases/db/indexes/performance", """
            {"Results":[{"Name":"Orders/Totals","Performance":[
              {"Id":7,"Started":"2026-11-23T10:00:00.0000000Z","Completed":"2026-11-23T10:00:00.0420000Z","DurationInMs":42.125,"HasCount":true,
               "InputCount":1000,"SuccessCount":998,"FailedCount":2,"OutputCount":998,"AllocatedBytes":123456,"DocumentsSize":{"SizeInBytes":654321},
               "Details":{"Name":"Indexing","DurationInMs":42.125,"Operations":[
                 {"Name":"Storage/DocumentRead","DurationInMs":3.5,"Operations":[]},
                 {"Name":"Map","DurationInMs":30,"Operations":[{"Name":"Collection_Orders","DurationInMs":29.75,"Operations":[]}]},
                 {"Name":"Lucene/Commit","DurationInMs":8,"Operations":[]}]}}]},
              {"Name":"Users/ByName","Performance":[]}]}
            """);

        var performance = await _store.Maintenance.GetIndexPerformanceAsync("Orders/Totals", "Users/ByName");

        Assert.Equal("/databases/db/indexes/performance?name=Orders%2FTotals&name=Users%2FByName", _fake.Requests.Single().PathAndQuery);
        Assert.Equal(["Orders/Totals", "Users/ByName"], performance.Select(p => p.Name));
        Assert.Empty(performance[1].Performance);
        var batch = Assert.Single(performance[0].Performance);
        Assert.Equal((7L, 42.125, 1000L, 998L, 2L, 998L, 123456L, 654321L), (batch.Id, batch.DurationInMs, batch.InputCount, batch.SuccessCount, batch.FailedCount, batch.OutputCount, batch.AllocatedBytes, batch.DocumentsSize.SizeInBytes));
        Assert.Equal(new DateTime(2026, 11, 23, 10, 0, 0, DateTimeKind.Utc), batch.Started);
        Assert.Equal(batch.Started.AddMilliseconds(42), batch.Completed);
        Assert.Equal(
            ["Indexing", "Storage/DocumentRead", "Map", "Collection_Orders", "Lucene/Commit"],
            batch.Details.Flatten().Select(o => o.Name));
        Assert.Equal(29.75, batch.Details.Operations[1].Operations[0].DurationInMs);
    }

    [Fact]
    public async Task PerformanceAndErrorsWithoutNamesAskForEveryIndex()
    {
        await PutAsync("Orders/Totals");

        var performance = await _store.Maintenance.GetIndexPerformanceAsync();
        var errors = await _store.Maintenance.GetIndexErrorsAsync();

        Assert.Equal(["/databases/db/indexes/performance", "/databases/db/indexes/errors"], _fake.Requests.Where(r => r.Method == "GET").Select(r => r.PathAndQuery));
        Assert.Equal("Orders/Totals", Assert.Single(performance).Name);
        Assert.Equal("Orders/Totals", Assert.Single(errors).Name);
    }

    [Fact]
    public async Task ErrorsOfNamedIndexesNameEachInTheQuery()
    {
        await PutAsync("A", "B", "C");

        var errors = await _store.Maintenance.GetIndexErrorsAsync("A", "C");

        Assert.Equal("/databases/db/indexes/errors?name=A&name=C", _fake.Requests.Last().PathAndQuery);
        Assert.Equal(["A", "C"], errors.Select(e => e.Name));
        await Assert.ThrowsAsync<IndexDoesNotExistException>(() => _store.Maintenance.GetIndexPerformanceAsync("Nope"));
    }

    [Fact]
    public async Task CleanupAdviceIsReadWithItsEvidenceAndMergedDefinition()
    {
        AnswerGet("/databases/db/indexes/cleanup", """
            {"Results":[
              {"Type":"Unused","Indexes":["Orders/Old"],"Reason":"Not queried for 12 days.","Evidence":{"LastQueryingTime":"2026-11-11T10:00:00.0000000Z","Days":12},"MergedDefinition":null},
              {"Type":"Covered","Indexes":["Auto/Orders/ByCompany","Auto/Orders/ByCompanyAndFreight"],"Reason":"Every field of the first is in the second.","Evidence":{"Fields":["Company"]},"MergedDefinition":null},
              {"Type":"Mergeable","Indexes":["Orders/A","Orders/B"],"Reason":"Both select fields of Orders.","Evidence":{"Collection":"Orders"},
               "MergedDefinition":{"Name":"Orders/A","Maps":["map('Orders', o => ({ Company: o.Company, Freight: o.Freight }))"],"Fields":{"Company":{"Indexing":"Exact","Storage":"No"}}}},
              {"Type":"Errored","Indexes":["Users/Broken"],"Reason":"The index is in the Error state.","Evidence":{"MapErrors":900,"MapAttempts":1000},"MergedDefinition":null}]}
            """);

        var advice = await _store.Maintenance.GetIndexCleanupAsync();

        Assert.Equal("/databases/db/indexes/cleanup", _fake.Requests.Single().PathAndQuery);
        Assert.Equal([IndexCleanupType.Unused, IndexCleanupType.Covered, IndexCleanupType.Mergeable, IndexCleanupType.Errored], advice.Select(a => a.Type));
        Assert.Equal(12, advice[0].Evidence["Days"].GetInt32());
        Assert.Equal(["Auto/Orders/ByCompany", "Auto/Orders/ByCompanyAndFreight"], advice[1].Indexes);
        Assert.Null(advice[1].MergedDefinition);
        var merged = advice[2].MergedDefinition!;
        Assert.Equal(("Orders/A", FieldIndexing.Exact), (merged.Name, merged.Fields["Company"].Indexing));
        Assert.Single(merged.Maps);
        Assert.Equal("The index is in the Error state.", advice[3].Reason);
    }

    [Fact]
    public async Task CleanupNamesTheUnusedThresholdWhenGiven()
    {
        await _store.Maintenance.GetIndexCleanupAsync(TimeSpan.FromDays(2.5));
        await _store.Maintenance.GetIndexCleanupAsync(TimeSpan.Zero);

        Assert.Equal(
            ["/databases/db/indexes/cleanup?unusedFor=2.12%3A00%3A00", "/databases/db/indexes/cleanup?unusedFor=00%3A00%3A00"],
            _fake.Requests.Select(r => r.PathAndQuery));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => _store.Maintenance.GetIndexCleanupAsync(TimeSpan.FromSeconds(-1)));
    }

    private const string TestAnswer = """
        {"IndexName":"Users/Try","DocumentsProcessed":3,
         "QueryResults":[{"Name":"Ann","Age":31,"@metadata":{"@id":"users/1","@collection":"Users"}},{"Name":"Cid","Age":40,"@metadata":{"@id":"users/3","@collection":"Users"}}],
         "TotalResults":2,
         "MapResults":[{"Document":"users/1","Entries":[{"Name":"ann","Age":31}]},{"Document":"users/2","Entries":[]}],
         "IndexErrors":[{"Document":"users/2","Action":"Map","Error":"TypeError: u.Address is undefined","Timestamp":"2026-11-23T10:00:00.0000000Z"}]}
        """;

    private static readonly IndexDefinition TryDefinition = new() { Name = "Users/Try", Maps = ["map('Users', u => ({ Name: u.Name, Age: u.Age, City: u.Address.City }))"] };

    [Fact]
    public async Task TestIndexSendsTheDefinitionQueryParametersLimitAndTimeout()
    {
        _fake.Intercept = r => r.PathAndQuery.EndsWith("/indexes/test", StringComparison.Ordinal) ? FakeJackdaw.Json(HttpStatusCode.OK, JsonNode.Parse(TestAnswer)!) : null;

        await _store.Maintenance.TestIndexAsync<User>(
            TryDefinition,
            "from index 'Users/Try' where Age > $min and Status = $status",
            new Dictionary<string, object?> { ["min"] = 30, ["status"] = Status.Shipped, ["none"] = null },
            maxDocuments: 50,
            timeout: TimeSpan.FromSeconds(90));

        var request = _fake.Requests.Single();
        Assert.Equal(("POST", "/databases/db/indexes/test"), (request.Method, request.PathAndQuery));
        Assert.Equal(
            """
            {"IndexDefinition":{"Name":"Users/Try","Maps":["map('Users', u => ({ Name: u.Name, Age: u.Age, City: u.Address.City }))"],"Fields":{},"AdditionalSources":{}},
            "Query":"from index 'Users/Try' where Age > $min and Status = $status","QueryParameters":{"min":30,"status":"Shipped","none":null},
            "MaxDocumentsToProcess":50,"WaitForNonStaleResultsTimeout":"00:01:30"}
            """.ReplaceLineEndings(""),
            request.Body);
    }

    [Fact]
    public async Task TestIndexWithoutAQueryLeavesItToTheServerAndSendsTheDefaults()
    {
        _fake.Intercept = _ => FakeJackdaw.Json(HttpStatusCode.OK, JsonNode.Parse(TestAnswer)!);

        await _store.Maintenance.TestIndexAsync(TryDefinition);

        var body = _fake.Requests.Single().BodyJson.AsObject();
        Assert.False(body.ContainsKey("Query"));
        Assert.Equal("{}", body["QueryParameters"]!.ToJsonString());
        Assert.Equal((1000, "00:00:15"), ((int)body["MaxDocumentsToProcess"]!, (string?)body["WaitForNonStaleResultsTimeout"]));
    }

    [Fact]
    public async Task TestIndexResultsAreReadAsTheTypeWithIdsFromMetadata()
    {
        _fake.Intercept = _ => FakeJackdaw.Json(HttpStatusCode.OK, JsonNode.Parse(TestAnswer)!);

        var result = await _store.Maintenance.TestIndexAsync<User>(TryDefinition, "from index 'Users/Try'");

        Assert.Equal(("Users/Try", 3L, 2L), (result.IndexName, result.DocumentsProcessed, result.TotalResults));
        Assert.Equal([("users/1", "Ann", 31), ("users/3", "Cid", 40)], result.QueryResults.Select(u => (u.Id, u.Name, u.Age)));
        Assert.Equal(["users/1", "users/2"], result.MapResults.Select(m => m.Document));
        var entry = Assert.Single(result.MapResults[0].Entries);
        Assert.Equal(("ann", 31), (entry["Name"].GetString(), entry["Age"].GetInt32()));
        Assert.Empty(result.MapResults[1].Entries);
        var error = Assert.Single(result.IndexErrors);
        Assert.Equal(("users/2", "Map"), (error.Document, error.Action));
    }

    [Fact]
    public async Task TestIndexResultsCanStayJson()
    {
        _fake.Intercept = _ => FakeJackdaw.Json(HttpStatusCode.OK, JsonNode.Parse(TestAnswer)!);

        var result = await _store.Maintenance.TestIndexAsync(TryDefinition);

        Assert.Equal(["users/1", "users/3"], result.QueryResults.Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()));
        Assert.Equal(JsonValueKind.Object, result.QueryResults[0].ValueKind);
    }

    [Fact]
    public async Task TestIndexChecksItsArgumentsBeforeSending()
    {
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => _store.Maintenance.TestIndexAsync(TryDefinition, maxDocuments: 0));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => _store.Maintenance.TestIndexAsync(TryDefinition, timeout: TimeSpan.Zero));
        await Assert.ThrowsAsync<ArgumentNullException>(() => _store.Maintenance.TestIndexAsync(null!));

        Assert.Empty(_fake.Requests);
    }

    [Fact]
    public async Task TestIndexServerErrorsAreTyped()
    {
        _fake.Intercept = _ => FakeJackdaw.Error(HttpStatusCode.BadRequest, "InvalidQueryException", "the query of an index test runs on the tested index");

        await Assert.ThrowsAsync<InvalidQueryException>(() => _store.Maintenance.TestIndexAsync(TryDefinition, "from Users"));
    }

    [Fact]
    public async Task PuttingAChangedDefinitionOfALockedErrorIndexThrowsIndexLockedException()
    {
        await PutAsync("Users/ByName");
        await _store.Maintenance.SetIndexLockAsync(IndexLockMode.LockedError, "Users/ByName");

        var error = await Assert.ThrowsAsync<IndexLockedException>(() =>
            _store.Maintenance.PutIndexesAsync(new IndexDefinition { Name = "Users/ByName", Maps = ["map('Users', u => ({ Age: u.Age }))"] }));

        Assert.Equal(HttpStatusCode.Conflict, error.StatusCode);
    }
}
