using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Patching;

/// <summary><c>PATCH /docs?id=</c>: every feature of a patch script, and failures that store nothing.</summary>
public sealed class PatchDocumentTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task PutAsync(string db, string id, string json)
    {
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private async Task<JsonElement?> GetAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        if (response.StatusCode == HttpStatusCode.NotFound)
        {
            return null;
        }
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    private async Task<(HttpStatusCode Status, JsonElement Body)> PatchAsync(string db, string id, string body, string query = "", string? ifMatch = null)
    {
        using var request = Api.Request(HttpMethod.Patch, $"/databases/{db}/docs?id={Uri.EscapeDataString(id)}{query}", body, ifMatch: ifMatch);
        using var response = await Client.SendAsync(request);
        var text = await response.Content.ReadAsStringAsync();
        return (response.StatusCode, text.Length == 0 ? default : JsonDocument.Parse(text).RootElement.Clone());
    }

    private static string Script(string script, string values = "{}") =>
        "{\"Patch\":{\"Script\":" + JsonSerializer.Serialize(script) + ",\"Values\":" + values + "}}";

    [Fact]
    public async Task AScriptChangesAddsAndDeletesPropertiesWithArgs()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "orders/1", """{"Freight":10,"Old":"x","Lines":[{"P":"a"}],"@metadata":{"@collection":"Orders"}}""");
        var (status, body) = await PatchAsync(db, "orders/1", Script("this.Freight += args.Inc;\nthis.Lines.push({ P: args.P });\ndelete this.Old;\nthis.Note = `n${this.Lines.length}`;", """{"Inc":2.5,"P":"b"}"""));
        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("Patched", body.GetProperty("Status").GetString());
        Assert.Equal("Orders", body.GetProperty("Collection").GetString());
        Assert.StartsWith("A:", body.GetProperty("ChangeVector").GetString(), StringComparison.Ordinal);
        var stored = (await GetAsync(db, "orders/1"))!.Value;
        Assert.Equal(12.5, stored.GetProperty("Freight").GetDouble());
        Assert.Equal(2, stored.GetProperty("Lines").GetArrayLength());
        Assert.Equal("b", stored.GetProperty("Lines")[1].GetProperty("P").GetString());
        Assert.False(stored.TryGetProperty("Old", out _));
        Assert.Equal("n2", stored.GetProperty("Note").GetString());
        Assert.Equal(body.GetProperty("ChangeVector").GetString(), stored.GetProperty("@metadata").GetProperty("@change-vector").GetString());
        Assert.Equal(stored.GetProperty("Freight").GetDouble(), body.GetProperty("ModifiedDocument").GetProperty("Freight").GetDouble());
    }

    [Fact]
    public async Task PutLoadDelAndIdWorkInTheDocumentsTransaction()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "orders/1", """{"Company":"companies/1","@metadata":{"@collection":"Orders"}}""");
        await PutAsync(db, "companies/1", """{"Name":"Acme","@metadata":{"@collection":"Companies"}}""");
        await PutAsync(db, "trash/1", """{"X":1}""");
        var (status, body) = await PatchAsync(db, "orders/1", Script("""
            var company = load(this.Company);
            this.CompanyName = company.Name;
            this.Self = id(this);
            this.Missing = load('companies/none');
            put('audit/' + id(this), { Of: id(this), '@metadata': { '@collection': 'Audits' } });
            this.Loaded = load('audit/orders/1').Of;
            this.Deleted = del('trash/1');
            """));
        Assert.Equal(HttpStatusCode.OK, status);
        var stored = (await GetAsync(db, "orders/1"))!.Value;
        Assert.Equal("Acme", stored.GetProperty("CompanyName").GetString());
        Assert.Equal("orders/1", stored.GetProperty("Self").GetString());
        Assert.Equal(JsonValueKind.Null, stored.GetProperty("Missing").ValueKind);
        Assert.Equal("orders/1", stored.GetProperty("Loaded").GetString());
        Assert.True(stored.GetProperty("Deleted").GetBoolean());
        var audit = (await GetAsync(db, "audit/orders/1"))!.Value;
        Assert.Equal("Audits", audit.GetProperty("@metadata").GetProperty("@collection").GetString());
        Assert.Null(await GetAsync(db, "trash/1"));
    }

    [Fact]
    public async Task MetadataIsWritableButTheStampsAreTheServers()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "a", """{"V":1,"@metadata":{"@collection":"Things"}}""");
        var (status, _) = await PatchAsync(db, "a", Script("this['@metadata']['Tag'] = 'x';\nthis['@metadata']['@collection'] = 'Others';\nthis['@metadata']['@id'] = 'forged';\nthis['@metadata']['@change-vector'] = 'A:1-forged';"));
        Assert.Equal(HttpStatusCode.OK, status);
        var metadata = (await GetAsync(db, "a"))!.Value.GetProperty("@metadata");
        Assert.Equal("x", metadata.GetProperty("Tag").GetString());
        Assert.Equal("Others", metadata.GetProperty("@collection").GetString());
        Assert.Equal("a", metadata.GetProperty("@id").GetString());
        Assert.NotEqual("A:1-forged", metadata.GetProperty("@change-vector").GetString());
    }

    [Fact]
    public async Task AScriptThatChangesNothingIsNotModifiedAndAMissingDocumentIs404()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "a", """{"V":1,"D":1.5,"S":"s"}""");
        var before = (await GetAsync(db, "a"))!.Value.GetProperty("@metadata").GetProperty("@change-vector").GetString();
        var (status, body) = await PatchAsync(db, "a", Script("this.V = this.V * 1; this.D = args.d;", """{"d":1.5}"""));
        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("NotModified", body.GetProperty("Status").GetString());
        Assert.Equal(before, (await GetAsync(db, "a"))!.Value.GetProperty("@metadata").GetProperty("@change-vector").GetString());

        var (missing, _) = await PatchAsync(db, "none", Script("this.V = 1;"));
        Assert.Equal(HttpStatusCode.NotFound, missing);
        Assert.Null(await GetAsync(db, "none"));
    }

    [Fact]
    public async Task PatchIfMissingAndCreateIfMissingCreateTheDocument()
    {
        var db = await fixture.CreateDatabaseAsync();
        var (status, body) = await PatchAsync(db, "counters/1", """{"Patch":{"Script":"this.Count++;"},"PatchIfMissing":{"Script":"this.Count = args.start; this['@metadata'] = { '@collection': 'Counters' };","Values":{"start":1}}}""");
        Assert.Equal(HttpStatusCode.Created, status);
        Assert.Equal("Created", body.GetProperty("Status").GetString());
        Assert.Equal(1, (await GetAsync(db, "counters/1"))!.Value.GetProperty("Count").GetInt32());
        Assert.Equal("Counters", body.GetProperty("Collection").GetString());

        var (again, _) = await PatchAsync(db, "counters/1", """{"Patch":{"Script":"this.Count++;"},"PatchIfMissing":{"Script":"this.Count = 1;"}}""");
        Assert.Equal(HttpStatusCode.OK, again);
        Assert.Equal(2, (await GetAsync(db, "counters/1"))!.Value.GetProperty("Count").GetInt32());

        var (created, _) = await PatchAsync(db, "counters/2", """{"Patch":{"Script":"this.Count += 10;"},"CreateIfMissing":{"Count":5}}""");
        Assert.Equal(HttpStatusCode.Created, created);
        Assert.Equal(15, (await GetAsync(db, "counters/2"))!.Value.GetProperty("Count").GetInt32());
    }

    [Fact]
    public async Task TestAnswersTheResultAndDebugOutputAndStoresNothing()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "a", """{"V":1}""");
        var (status, body) = await PatchAsync(db, "a", Script("output('before', this.V);\nconsole.log({ v: this.V });\nthis.V = 2;\nput('b', { X: 1 });\nthis.SeesB = load('b').X;"), "&test=true");
        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("Patched", body.GetProperty("Status").GetString());
        Assert.Equal(2, body.GetProperty("ModifiedDocument").GetProperty("V").GetInt32());
        Assert.Equal(1, body.GetProperty("ModifiedDocument").GetProperty("SeesB").GetInt32());
        Assert.Equal(1, body.GetProperty("OriginalDocument").GetProperty("V").GetInt32());
        var info = body.GetProperty("Debug").GetProperty("Info");
        Assert.Equal("before 1", info[0].GetString());
        Assert.Equal("{\"v\":1}", info[1].GetString());
        Assert.Equal("b", body.GetProperty("Debug").GetProperty("Actions").GetProperty("PutDocument")[0].GetString());
        Assert.Equal(1, (await GetAsync(db, "a"))!.Value.GetProperty("V").GetInt32());
        Assert.Null(await GetAsync(db, "b"));

        var (debugStatus, debug) = await PatchAsync(db, "a", Script("output('x'); this.V = 3;"), "&debug=true");
        Assert.Equal(HttpStatusCode.OK, debugStatus);
        Assert.Equal("x", debug.GetProperty("Debug").GetProperty("Info")[0].GetString());
        Assert.Equal(JsonValueKind.Null, debug.GetProperty("OriginalDocument").ValueKind);
        Assert.Equal(3, (await GetAsync(db, "a"))!.Value.GetProperty("V").GetInt32());
    }

    [Fact]
    public async Task AChangeVectorMismatchIsAConflictOrSkipped()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "a", """{"V":1}""");
        var (conflict, body) = await PatchAsync(db, "a", Script("this.V = 2;"), ifMatch: "\"A:999-nope\"");
        Assert.Equal(HttpStatusCode.Conflict, conflict);
        Assert.Equal("ConcurrencyException", body.GetProperty("Type").GetString());
        var (skipped, _) = await PatchAsync(db, "a", Script("this.V = 2;"), "&skipPatchIfChangeVectorMismatch=true", ifMatch: "\"A:999-nope\"");
        Assert.Equal(HttpStatusCode.NotModified, skipped);
        Assert.Equal(1, (await GetAsync(db, "a"))!.Value.GetProperty("V").GetInt32());
    }

    [Theory]
    [InlineData("put('side', { X: 1 });\nthis.V = 2;\nthrow new Error('stop');", "Error: stop", "line 3")]
    [InlineData("put('side', { X: 1 });\nthis.V = 2;\nwhile (true) { }", "statements", "line 3")]
    [InlineData("put('side', { X: 1 });\nfunction f(n) { return f(n + 1); }\nf(0);", "nested calls", "line 2")]
    [InlineData("put('side', { X: 1 });\nvar s = 'x';\nwhile (true) { s = s + s; }", "memory", "line 3")]
    [InlineData("put('side', { X: 1 });\nthis.V = eval('2');", "TypeError", "line 2")]
    [InlineData("put('side', { X: 1 });\nthis.V = new Function('return 2')();", "", "line 2")]
    [InlineData("put('side', { X: 1 });\nthis.V = System.IO.File;", "System", "line 2")]
    [InlineData("this.V = ;", "", "line 1")]
    [InlineData("put('side', { X: 1 });\nthis.Self = this; this.Self.Self = this;", "nests deeper", "")]
    public async Task AScriptThatThrowsOrPassesALimitIs400NamingTheLineAndStoresNothing(string script, string mentions, string line)
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "a", """{"V":1}""");
        var (status, body) = await PatchAsync(db, "a", Script(script));
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("JavaScriptException", body.GetProperty("Type").GetString());
        var message = body.GetProperty("Message").GetString()!;
        Assert.Contains(mentions, message, StringComparison.Ordinal);
        Assert.Contains(line, message, StringComparison.Ordinal);
        Assert.Equal(1, (await GetAsync(db, "a"))!.Value.GetProperty("V").GetInt32());
        Assert.Null(await GetAsync(db, "side"));
    }

    [Fact]
    public async Task ABatchWithAFailingPatchStoresNoneOfItsCommands()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "a", """{"V":1}""");
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("""
            {"Commands":[{"Type":"PUT","Id":"b","Document":{"X":1}},
                         {"Type":"PATCH","Id":"a","Patch":{"Script":"this.V = 2; put('c', {}); this.V.x.y = 1;"}}]}
            """));
        await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "JavaScriptException");
        Assert.Null(await GetAsync(db, "b"));
        Assert.Null(await GetAsync(db, "c"));
        Assert.Equal(1, (await GetAsync(db, "a"))!.Value.GetProperty("V").GetInt32());
    }

    [Fact]
    public async Task ABatchPatchRunsAnyScriptWithPatchIfMissing()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("""
            {"Commands":[{"Type":"PATCH","Id":"n","ReturnDocument":true,"Patch":{"Script":"this.N++;"},"PatchIfMissing":{"Script":"this.N = args.n;","Values":{"n":7}}},
                         {"Type":"PATCH","Id":"n","ReturnDocument":true,"Patch":{"Script":"this.N++; this.List = [1, 2].map(x => x * this.N);"}}]}
            """));
        var body = await Api.JsonAsync(response);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("Created", body.GetProperty("Results")[0].GetProperty("PatchStatus").GetString());
        var second = body.GetProperty("Results")[1];
        Assert.Equal("Patched", second.GetProperty("PatchStatus").GetString());
        Assert.Equal(8, second.GetProperty("ModifiedDocument").GetProperty("N").GetInt32());
        Assert.Equal(16, second.GetProperty("ModifiedDocument").GetProperty("List")[1].GetInt32());
    }
}
