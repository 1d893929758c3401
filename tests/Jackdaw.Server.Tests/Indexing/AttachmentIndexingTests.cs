using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// A JavaScript index over attachments on a real server: an attachment put or deleted stores its
/// document again, so the index maps it again and queries see the change.
/// </summary>
public sealed class AttachmentIndexingTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task PutAsync(string db, string id, string json)
    {
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private async Task PutIndexAsync(string db, string name, string map, string fields = "{}")
    {
        var definition = JsonSerializer.Serialize(new { Indexes = new[] { new { Name = name, Maps = new[] { map }, Fields = JsonDocument.Parse(fields).RootElement } } });
        using var response = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(definition));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private async Task<List<string>> QueryIdsAsync(string db, string rql)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:01:00" });
        using var response = await Client.PostAsync($"/databases/{db}/queries", new StringContent(body, Encoding.UTF8, "application/json"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{rql}: {json}");
        return json.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()!).Order(StringComparer.Ordinal).ToList();
    }

    [Fact]
    public async Task PuttingAndDeletingAnAttachmentChangesWhatTheIndexAnswers()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "employees/1", """{"Name":"Ada","@metadata":{"@collection":"Employees"}}""");
        await PutAsync(db, "employees/2", """{"Name":"Grace","@metadata":{"@collection":"Employees"}}""");
        await PutIndexAsync(db, "Employees/ByAttachment", "map('Employees', e => ({ Names: attachmentsFor(e).map(a => a.Name), Types: attachmentsFor(e).map(a => a.ContentType), Count: attachmentsFor(e).length }))");
        Assert.Empty(await QueryIdsAsync(db, "from index 'Employees/ByAttachment' where Names = 'photo.png'"));
        Assert.Equal(["employees/1", "employees/2"], await QueryIdsAsync(db, "from index 'Employees/ByAttachment' where Count = 0"));

        await DirectAttachments.PutAsync(fixture.Server, db, "employees/1", "photo.png", [1, 2, 3], "image/png");
        Assert.Equal(["employees/1"], await QueryIdsAsync(db, "from index 'Employees/ByAttachment' where Names = 'photo.png'"));
        Assert.Equal(["employees/1"], await QueryIdsAsync(db, "from index 'Employees/ByAttachment' where Types = 'image/png'"));
        Assert.Equal(["employees/2"], await QueryIdsAsync(db, "from index 'Employees/ByAttachment' where Count = 0"));

        Assert.True(await DirectAttachments.DeleteAsync(fixture.Server, db, "employees/1", "photo.png"));
        Assert.Empty(await QueryIdsAsync(db, "from index 'Employees/ByAttachment' where Names = 'photo.png'"));
        Assert.Equal(["employees/1", "employees/2"], await QueryIdsAsync(db, "from index 'Employees/ByAttachment' where Count = 0"));
    }

    [Fact]
    public async Task AnIndexSearchesTheTextOfAnAttachmentAndSeesItReplaced()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "companies/1", """{"Name":"Acme","@metadata":{"@collection":"Companies"}}""");
        await PutAsync(db, "companies/2", """{"Name":"Globex","@metadata":{"@collection":"Companies"}}""");
        await DirectAttachments.PutAsync(fixture.Server, db, "companies/1", "notes.txt", Encoding.UTF8.GetBytes("the quick brown fox"));
        await DirectAttachments.PutAsync(fixture.Server, db, "companies/2", "notes.txt", Encoding.UTF8.GetBytes("a lazy dog sleeps"));
        await PutIndexAsync(db, "Companies/Notes",
            "map('Companies', c => { const n = loadAttachment(c, 'notes.txt'); return { Notes: n ? n.getContentAsString('utf8') : null, All: loadAttachments(c).map(a => a.getContentAsString()) }; })",
            """{"Notes":{"Indexing":"Search"},"All":{"Indexing":"Search"}}""");
        Assert.Equal(["companies/1"], await QueryIdsAsync(db, "from index 'Companies/Notes' where search(Notes, 'fox')"));
        Assert.Equal(["companies/2"], await QueryIdsAsync(db, "from index 'Companies/Notes' where search(All, 'dog')"));

        // The same name with other bytes: the document is stored again and mapped again.
        await DirectAttachments.PutAsync(fixture.Server, db, "companies/1", "notes.txt", Encoding.UTF8.GetBytes("now about a dog too"));
        Assert.Empty(await QueryIdsAsync(db, "from index 'Companies/Notes' where search(Notes, 'fox')"));
        Assert.Equal(["companies/1", "companies/2"], await QueryIdsAsync(db, "from index 'Companies/Notes' where search(Notes, 'dog')"));
    }
}
