using System.Net;
using System.Net.Http.Headers;
using System.Text;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>What a person typing curl commands meets first: malformed JSON, a PUT without metadata, a bulk insert of exported lines or of nothing.</summary>
public sealed class NewcomerInputTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Theory]
    [InlineData("{\"Name\": }", "'}' is an invalid start of a value (line 1, column 10).")]
    [InlineData("{\n  \"Name\": \"x\",\n  \"Tags\": [1, 2,]\n}", "the JSON array contains a trailing comma at the end, which JSON does not allow (line 3, column 17).")]
    [InlineData("{\n  \"Name\": \"x\",\n}", "the JSON object contains a trailing comma at the end, which JSON does not allow (line 3, column 1).")]
    [InlineData("{\"Name\": \"x\"", "the input ends before every object and array in it is closed (line 1, column 13).")]
    [InlineData("{\"A\": 1, \"A\": 2}", "(line 1, column 10).")]
    [InlineData("{\"A\": 1} {}", "(line 1, column 10).")]
    [InlineData("{\"A\": /* note */ 1}", "(line 1, column 7).")]
    public async Task MalformedJsonIsNamedWithItsLineAndColumnAndNothingAboutReaderOptions(string body, string ending)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json(body));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "InvalidJsonException");
        Assert.StartsWith("The request body is not valid JSON: ", message, StringComparison.Ordinal);
        Assert.EndsWith(ending, message, StringComparison.Ordinal);
        Assert.DoesNotContain("reader options", message, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("LineNumber", message, StringComparison.Ordinal);
        Assert.DoesNotContain("isFinalBlock", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task MalformedJsonInABatchEnvelopeIsNamedWithItsLineAndColumn()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[\n  {\"Type\":\"PUT\",}]}"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Equal("The body is not valid JSON: the JSON object contains a trailing comma at the end, which JSON does not allow (line 2, column 17).", message);
    }

    [Fact]
    public async Task APutWithoutMetadataKeepsTheDocumentInItsCollection()
    {
        var db = await fixture.CreateDatabaseAsync();
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"Name":"Ada","@metadata":{"@collection":"Users"}}"""))).StatusCode);
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"Name":"Ada L."}"""))).StatusCode);
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"Name":"Ada M.","@metadata":{"Custom":1}}"""))).StatusCode);

        var doc = (await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/docs?id=users/1"))).GetProperty("Results")[0];
        Assert.Equal("Ada M.", doc.GetProperty("Name").GetString());
        Assert.Equal("Users", doc.GetProperty("@metadata").GetProperty("@collection").GetString());
        Assert.Equal(1, doc.GetProperty("@metadata").GetProperty("Custom").GetInt32());
        var stats = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/collections/stats"));
        Assert.Equal(1, stats.GetProperty("Collections").GetProperty("Users").GetInt64());
        var users = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/collections/docs?name=Users"));
        Assert.Equal(1, users.GetProperty("Results").GetArrayLength());

        // A body that names another collection still moves it there.
        Assert.Equal(HttpStatusCode.Created, (await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"Name":"Ada","@metadata":{"@collection":"People"}}"""))).StatusCode);
        stats = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/collections/stats"));
        Assert.Equal(1, stats.GetProperty("Collections").GetProperty("People").GetInt64());
        Assert.False(stats.GetProperty("Collections").TryGetProperty("Users", out _));
    }

    [Fact]
    public async Task BulkInsertTakesExportLinesThatCarryTheirIdInMetadataBesideEnvelopes()
    {
        var db = await fixture.CreateDatabaseAsync();
        var body = string.Join("\n",
            """{"Name":"Corvid","@metadata":{"@id":"companies/1","@collection":"Companies"}}""",
            """{"Id":"users/1","Document":{"Name":"Ada","@metadata":{"@collection":"Users"}}}""",
            """{"Id":"not-the-id","Name":"Id is a property here","@metadata":{"@id":"users/2","@collection":"Users"}}""",
            """{"Type":"Premium","Name":"A document whose Type is its own","@metadata":{"@id":"users/3","@collection":"Users"}}""",
            """{"Document":"a string","@metadata":{"@id":"notes/1"}}""") + "\n";
        using var response = await Client.PostAsync($"/databases/{db}/bulk_insert", new StringContent(body, Encoding.UTF8, "application/x-ndjson"));
        Assert.Equal("""{"Count":5}""", await response.Content.ReadAsStringAsync());

        var loaded = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/docs?id=companies/1&id=users/1&id=users/2&id=users/3&id=notes/1"));
        var results = loaded.GetProperty("Results");
        Assert.Equal("Corvid", results[0].GetProperty("Name").GetString());
        Assert.Equal("Companies", results[0].GetProperty("@metadata").GetProperty("@collection").GetString());
        Assert.Equal("Ada", results[1].GetProperty("Name").GetString());
        Assert.Equal("not-the-id", results[2].GetProperty("Id").GetString());
        Assert.Equal("users/2", results[2].GetProperty("@metadata").GetProperty("@id").GetString());
        Assert.Equal("Premium", results[3].GetProperty("Type").GetString());
        Assert.Equal("a string", results[4].GetProperty("Document").GetString());
        var stats = await Api.JsonAsync(await Client.GetAsync($"/databases/{db}/collections/stats"));
        Assert.Equal(3, stats.GetProperty("Collections").GetProperty("Users").GetInt64());
    }

    [Theory]
    [InlineData("""{"Name":"no id anywhere"}""", "Line 1 has no 'Document' object: send {\"Id\":...,\"Document\":{...}} or a document with its id in @metadata.@id")]
    [InlineData("""{"Name":"x","@metadata":{"@collection":"Users"}}""", "no '@metadata.@id'")]
    [InlineData("""{"Name":"x","@metadata":{"@id":7}}""", "'@metadata.@id' must be a string")]
    [InlineData("""{"Name":,"@metadata":{"@id":"a/1"}}""", "is not valid JSON")]
    [InlineData("""{"Id":"a/1","Type":"PUT"}""", "has no 'Document' object")]
    [InlineData("""{"Id":"a/1","Type":"Counters"}""", "not 'Counters'")]
    public async Task ABulkInsertLineThatIsNeitherShapeSaysWhatALineMustHold(string line, string mentions)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/bulk_insert", new StringContent(line + "\n", Encoding.UTF8, "application/x-ndjson"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains(mentions, message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AnEmptyBulkInsertBodyIsRefusedButAnEmptyStreamIsNot()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var empty = await Client.PostAsync($"/databases/{db}/bulk_insert", new ByteArrayContent([]));
        var message = await Api.AssertErrorAsync(empty, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains("check that the file exists", message, StringComparison.Ordinal);

        // The client streams (no Content-Length): with nothing to store, it is a count of 0.
        var streamed = new StreamContent(new MemoryStream());
        streamed.Headers.ContentType = new MediaTypeHeaderValue("application/x-ndjson");
        using var request = new HttpRequestMessage(HttpMethod.Post, $"/databases/{db}/bulk_insert") { Content = streamed };
        request.Headers.TransferEncodingChunked = true;
        using var response = await Client.SendAsync(request);
        Assert.Equal("""{"Count":0}""", await response.Content.ReadAsStringAsync());
    }
}
