using System.Net;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Attachment commands in <c>bulk_docs</c>, sent as RavenDB's clients send a session's <c>SaveChanges</c>.</summary>
public sealed class AttachmentBatchTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private AttachmentStorageStats Stats(string db)
    {
        using var reader = fixture.Server.Host.Server.Databases.GetDatabase(db).BeginRead();
        return reader.GetAttachmentStorageStats();
    }

    /// <summary>The Node.js client's body: multipart/form-data, a "main" part then "attachment_N" blobs.</summary>
    private static MultipartFormDataContent FormData(string commands, params byte[][] attachments)
    {
        var content = new MultipartFormDataContent { { new StringContent(commands, Encoding.UTF8, "application/json"), "main" } };
        for (var i = 0; i < attachments.Length; i++)
        {
            var part = new ByteArrayContent(attachments[i]);
            part.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
            content.Add(part, $"attachment_{i}", "blob");
        }
        return content;
    }

    /// <summary>The .NET client's body: multipart/mixed, the commands then parts with Command-Type: AttachmentStream.</summary>
    private static MultipartContent Mixed(string commands, params byte[][] attachments)
    {
        var content = new MultipartContent("mixed") { new StringContent(commands, Encoding.UTF8, "application/json") };
        foreach (var attachment in attachments)
        {
            var part = new ByteArrayContent(attachment);
            part.Headers.Add("Command-Type", "AttachmentStream");
            content.Add(part);
        }
        return content;
    }

    private async Task<JsonElement[]> PostAsync(string db, HttpContent body, HttpStatusCode expected = HttpStatusCode.OK)
    {
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", body);
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == expected, json.ToString());
        return expected == HttpStatusCode.OK ? [.. json.GetProperty("Results").EnumerateArray()] : [json];
    }

    private async Task<JsonElement> MetadataAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/docs?id={id}");
        return (await Api.JsonAsync(response)).GetProperty("Results")[0].GetProperty("@metadata");
    }

    [Fact]
    public async Task ASessionsDocumentAndAttachmentsAreStoredTogetherFromFormData()
    {
        var db = await fixture.CreateDatabaseAsync();
        var photo = Bytes(1_500_000, 1);
        var text = "hello"u8.ToArray();
        var results = await PostAsync(db, FormData("""
            {"Commands":[
              {"Type":"PUT","Id":"users/1","Document":{"Name":"Ada","@metadata":{"@collection":"Users"}}},
              {"Type":"AttachmentPUT","Id":"users/1","Name":"photo.jpg","ContentType":"image/jpeg","ChangeVector":null},
              {"Type":"AttachmentPUT","Id":"users/1","Name":"note.txt","ContentType":"text/plain","ChangeVector":null}
            ]}
            """, photo, text));

        Assert.Equal("PUT", results[0].GetProperty("Type").GetString());
        var put = results[1];
        Assert.Equal("AttachmentPUT", put.GetProperty("Type").GetString());
        Assert.Equal("users/1", put.GetProperty("Id").GetString());
        Assert.Equal("photo.jpg", put.GetProperty("Name").GetString());
        Assert.Equal(Convert.ToBase64String(SHA256.HashData(photo)), put.GetProperty("Hash").GetString());
        Assert.Equal("image/jpeg", put.GetProperty("ContentType").GetString());
        Assert.Equal(photo.Length, put.GetProperty("Size").GetInt64());
        var metadata = await MetadataAsync(db, "users/1");
        var finalChangeVector = metadata.GetProperty("@change-vector").GetString();
        // Both results carry the document's change vector as the batch left it.
        Assert.Equal(finalChangeVector, put.GetProperty("DocumentChangeVector").GetString());
        Assert.Equal(finalChangeVector, results[2].GetProperty("DocumentChangeVector").GetString());
        Assert.Equal(["note.txt", "photo.jpg"], metadata.GetProperty("@attachments").EnumerateArray().Select(a => a.GetProperty("Name").GetString()));

        using var get = await Client.GetAsync($"/databases/{db}/attachments?id=users/1&name=photo.jpg");
        Assert.Equal(photo, await get.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task MultipartMixedAsTheDotNetClientSendsItWorksToo()
    {
        var db = await fixture.CreateDatabaseAsync();
        var results = await PostAsync(db, Mixed("""
            {"Commands":[{"Type":"PUT","Id":"a","Document":{}},{"Type":"AttachmentPUT","Id":"a","Name":"x","ContentType":"","ChangeVector":null}]}
            """, [1, 2, 3]));
        Assert.Equal(3, results[1].GetProperty("Size").GetInt64());
        using var get = await Client.GetAsync($"/databases/{db}/attachments?id=a&name=x");
        Assert.Equal([1, 2, 3], await get.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task DeleteMoveAndCopyAnswerInRavenDbsShapes()
    {
        var db = await fixture.CreateDatabaseAsync();
        var content = Bytes(1000, 2);
        await PostAsync(db, FormData("""
            {"Commands":[{"Type":"PUT","Id":"a","Document":{}},{"Type":"PUT","Id":"b","Document":{}},
              {"Type":"AttachmentPUT","Id":"a","Name":"one","ContentType":"t/1"},{"Type":"AttachmentPUT","Id":"a","Name":"two","ContentType":"t/2"}]}
            """, content, content));
        Assert.Equal(1, Stats(db).Contents);

        var results = await PostAsync(db, Api.Json("""
            {"Commands":[
              {"Type":"AttachmentMOVE","Id":"a","Name":"one","DestinationId":"b","DestinationName":"moved","ChangeVector":null},
              {"Type":"AttachmentCOPY","Id":"a","Name":"two","DestinationId":"b","DestinationName":"copied","ChangeVector":null},
              {"Type":"AttachmentDELETE","Id":"a","Name":"two","ChangeVector":null}
            ]}
            """));
        var move = results[0];
        Assert.Equal("AttachmentMOVE", move.GetProperty("Type").GetString());
        Assert.Equal("a", move.GetProperty("Id").GetString());
        Assert.Equal("one", move.GetProperty("Name").GetString());
        Assert.Equal("b", move.GetProperty("DestinationId").GetString());
        Assert.Equal("moved", move.GetProperty("DestinationName").GetString());
        Assert.Equal("t/1", move.GetProperty("ContentType").GetString());
        var copy = results[1];
        Assert.Equal("AttachmentCOPY", copy.GetProperty("Type").GetString());
        Assert.Equal("b", copy.GetProperty("Id").GetString());
        Assert.Equal("copied", copy.GetProperty("Name").GetString());
        var delete = results[2];
        Assert.Equal("AttachmentDELETE", delete.GetProperty("Type").GetString());
        Assert.Equal("a", delete.GetProperty("@id").GetString());
        Assert.Equal("two", delete.GetProperty("Name").GetString());

        var a = await MetadataAsync(db, "a");
        var b = await MetadataAsync(db, "b");
        Assert.False(a.TryGetProperty("@attachments", out _));
        Assert.Equal(a.GetProperty("@change-vector").GetString(), delete.GetProperty("DocumentChangeVector").GetString());
        Assert.Equal(b.GetProperty("@change-vector").GetString(), move.GetProperty("DestinationDocumentChangeVector").GetString());
        Assert.Equal(["copied", "moved"], b.GetProperty("@attachments").EnumerateArray().Select(x => x.GetProperty("Name").GetString()));
        using var reader = fixture.Server.Host.Server.Databases.GetDatabase(db).BeginRead();
        Assert.Equal(2, reader.GetAttachmentContent(Convert.ToBase64String(SHA256.HashData(content)))!.Value.References);
    }

    [Fact]
    public async Task AFailingCommandStoresNothingOfTheBatchAndItsStagedUploadsGo()
    {
        var db = await fixture.CreateDatabaseAsync();
        var big = Bytes(3_000_000, 3);
        var response = await PostAsync(db, FormData("""
            {"Commands":[{"Type":"PUT","Id":"a","Document":{}},
              {"Type":"AttachmentPUT","Id":"a","Name":"big","ContentType":""},
              {"Type":"DELETE","Id":"a","ChangeVector":"A:999-nope"}]}
            """, big), HttpStatusCode.Conflict);
        Assert.Equal("ConcurrencyException", response[0].GetProperty("Type").GetString());
        using (var get = await Client.GetAsync($"/databases/{db}/docs?id=a"))
        {
            Assert.Equal(HttpStatusCode.NotFound, get.StatusCode);
        }
        await Poll.UntilAsync(() => Task.FromResult(Stats(db) == new AttachmentStorageStats(0, 0, 0, 0)), TimeSpan.FromSeconds(30), "the staged upload to be deleted");

        // An attachment on a document the batch does not create fails it too, naming the document.
        response = await PostAsync(db, FormData("""{"Commands":[{"Type":"AttachmentPUT","Id":"ghost","Name":"x","ContentType":""}]}""", [1]), HttpStatusCode.UnprocessableEntity);
        Assert.Contains("ghost", response[0].GetProperty("Message").GetString(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{"Type":"AttachmentPUT","Id":"users/none","Name":"x","ContentType":""}""", "users/none")]
    [InlineData("""{"Type":"AttachmentCOPY","Id":"users/none","Name":"x","DestinationId":"a","DestinationName":"y"}""", "users/none")]
    [InlineData("""{"Type":"AttachmentMOVE","Id":"a","Name":"kept","DestinationId":"users/none","DestinationName":"y"}""", "users/none")]
    public async Task AnAttachmentCommandOnAMissingDocumentRefusesTheBatchWith422NamingIt(string command, string missing)
    {
        // 422, not 404: RavenDB's clients read a 404 from bulk_docs as "no result" and a 409 as a
        // ConcurrencyException; from 422 they throw the body's DocumentDoesNotExistException.
        var db = await fixture.CreateDatabaseAsync();
        await PostAsync(db, FormData("""{"Commands":[{"Type":"PUT","Id":"a","Document":{}},{"Type":"AttachmentPUT","Id":"a","Name":"kept","ContentType":""}]}""", [7]));
        var commands = "{\"Commands\":[{\"Type\":\"PUT\",\"Id\":\"b\",\"Document\":{}}," + command + "]}";
        var attachments = command.Contains("AttachmentPUT", StringComparison.Ordinal) ? new[] { new byte[] { 1 } } : [];
        var error = (await PostAsync(db, FormData(commands, attachments), HttpStatusCode.UnprocessableEntity))[0];
        Assert.Equal("DocumentDoesNotExistException", error.GetProperty("Type").GetString());
        Assert.Contains(missing, error.GetProperty("Message").GetString(), StringComparison.Ordinal);

        // Nothing of the batch is stored: not the PUT beside it, nor a change to "a".
        using (var get = await Client.GetAsync($"/databases/{db}/docs?id=b"))
        {
            Assert.Equal(HttpStatusCode.NotFound, get.StatusCode);
        }
        var attached = (await MetadataAsync(db, "a")).GetProperty("@attachments");
        Assert.Equal(["kept"], attached.EnumerateArray().Select(a => a.GetProperty("Name").GetString()));

        // The single-attachment route keeps its 404 naming the document.
        using var single = await Client.PutAsync($"/databases/{db}/attachments?id=users/none&name=x", new ByteArrayContent([1]));
        Assert.Contains("users/none", await Api.AssertErrorAsync(single, HttpStatusCode.NotFound, "DocumentDoesNotExistException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task MalformedAttachmentBatchesAreBadRequests()
    {
        var db = await fixture.CreateDatabaseAsync();
        // An AttachmentPUT without its part.
        await PostAsync(db, FormData("""{"Commands":[{"Type":"PUT","Id":"a","Document":{}},{"Type":"AttachmentPUT","Id":"a","Name":"x"}]}"""), HttpStatusCode.BadRequest);
        // Not multipart at all.
        await PostAsync(db, Api.Json("""{"Commands":[{"Type":"PUT","Id":"a","Document":{}},{"Type":"AttachmentPUT","Id":"a","Name":"x"}]}"""), HttpStatusCode.BadRequest);
        // A bad name, a move without a destination.
        await PostAsync(db, Api.Json("""{"Commands":[{"Type":"AttachmentDELETE","Id":"a","Name":""}]}"""), HttpStatusCode.BadRequest);
        await PostAsync(db, Api.Json("""{"Commands":[{"Type":"AttachmentMOVE","Id":"a","Name":"x","DestinationName":"y"}]}"""), HttpStatusCode.BadRequest);
        using (var get = await Client.GetAsync($"/databases/{db}/docs?id=a"))
        {
            Assert.Equal(HttpStatusCode.NotFound, get.StatusCode);
        }
    }
}
