using System.Net;
using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Content types and multipart batches the server must refuse with a 400, storing nothing.</summary>
public sealed class AttachmentInputTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private AttachmentStorageStats Stats(string db)
    {
        using var reader = fixture.Server.Host.Server.Databases.GetDatabase(db).BeginRead();
        return reader.GetAttachmentStorageStats();
    }

    private async Task<string> DatabaseWithUserAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"@metadata":{"@collection":"Users"}}"""));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        return db;
    }

    private static ByteArrayContent Raw(string contentType, string body)
    {
        var content = new ByteArrayContent(Encoding.UTF8.GetBytes(body));
        Assert.True(content.Headers.TryAddWithoutValidation("Content-Type", contentType));
        return content;
    }

    private async Task AssertAllGoneAsync(string db) =>
        await Poll.UntilAsync(() => Task.FromResult(Stats(db) == new AttachmentStorageStats(0, 0, 0, 0)), TimeSpan.FromSeconds(30), "nothing to stay stored");

    public static TheoryData<string, string> BadContentTypes => new()
    {
        { "text/plain\u0001", "U+0001" },
        { "text/pl\u00e9in", "U+00E9" },
        { "text/\r\nX-Injected: 1", "U+000D" },
        { "x/" + new string('a', 1023), "1,024" },
    };

    [Theory]
    [MemberData(nameof(BadContentTypes))]
    public async Task AContentTypeThatIsNotShortVisibleAsciiIsRefusedOnPut(string contentType, string named)
    {
        var db = await DatabaseWithUserAsync();
        using var response = await Client.PutAsync($"/databases/{db}/attachments?id=users/1&name=a.bin&contentType={Uri.EscapeDataString(contentType)}", new ByteArrayContent([1, 2, 3]));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains("content type", message, StringComparison.OrdinalIgnoreCase);
        Assert.Contains(named, message, StringComparison.Ordinal);
        await AssertAllGoneAsync(db);
    }

    [Theory]
    [MemberData(nameof(BadContentTypes))]
    [InlineData("x/65536", "1,024")]
    public async Task AContentTypeThatIsNotShortVisibleAsciiIsRefusedInABatch(string contentType, string named)
    {
        if (contentType == "x/65536")
        {
            contentType = "x/" + new string('a', 70_000);
        }
        var db = await DatabaseWithUserAsync();
        var commands = $$"""{"Commands":[{"Type":"AttachmentPUT","Id":"users/1","Name":"a.bin","ContentType":{{System.Text.Json.JsonSerializer.Serialize(contentType)}},"ChangeVector":null}]}""";
        var body = $"--b\r\nContent-Type: application/json\r\n\r\n{commands}\r\n--b\r\nCommand-Type: AttachmentStream\r\n\r\nabc\r\n--b--\r\n";
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Raw("multipart/mixed; boundary=b", body));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains("content type", message, StringComparison.OrdinalIgnoreCase);
        Assert.Contains(named, message, StringComparison.Ordinal);
        await AssertAllGoneAsync(db);
    }

    private const string Commands = """{"Commands":[{"Type":"PUT","Id":"users/2","Document":{"@metadata":{"@collection":"Users"}}},{"Type":"AttachmentPUT","Id":"users/2","Name":"a.bin","ContentType":"x/y","ChangeVector":null}]}""";

    public static TheoryData<string, string, string> MalformedMultipart => new()
    {
        // Boundary over RFC 2046's 70 characters.
        { "multipart/mixed; boundary=" + new string('b', 71), $"--{new string('b', 71)}\r\n\r\n{Commands}\r\n--{new string('b', 71)}\r\n\r\nabc\r\n--{new string('b', 71)}--\r\n", "boundary" },
        // A header line longer than the reader allows.
        { "multipart/mixed; boundary=b", $"--b\r\nX-Long: {new string('a', 20_000)}\r\n\r\n{Commands}\r\n--b\r\n\r\nabc\r\n--b--\r\n", "multipart" },
        // More headers in a part than the reader allows.
        { "multipart/mixed; boundary=b", $"--b\r\n{string.Concat(Enumerable.Range(0, 20).Select(i => $"X-{i}: v\r\n"))}\r\n{Commands}\r\n--b\r\n\r\nabc\r\n--b--\r\n", "multipart" },
        // The commands part never closed.
        { "multipart/mixed; boundary=b", $"--b\r\n\r\n{Commands}", "multipart" },
        // The attachment part never closed.
        { "multipart/mixed; boundary=b", $"--b\r\n\r\n{Commands}\r\n--b\r\n\r\nabcdef", "multipart" },
    };

    [Theory]
    [MemberData(nameof(MalformedMultipart))]
    public async Task AMalformedMultipartBatchIsABadRequest(string contentType, string body, string named)
    {
        var db = await DatabaseWithUserAsync();
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Raw(contentType, body));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains(named, message, StringComparison.OrdinalIgnoreCase);
        using (var get = await Client.GetAsync($"/databases/{db}/docs?id=users/2"))
        {
            Assert.Equal(HttpStatusCode.NotFound, get.StatusCode);
        }
        await AssertAllGoneAsync(db);
    }
}
