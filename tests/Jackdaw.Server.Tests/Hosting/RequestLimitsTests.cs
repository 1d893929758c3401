using System.Net;
using System.Text;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>
/// A request over a limit of <c>Limits:*</c> (body size per route, headers, body data rate) is
/// refused with its status and a message naming the setting, and the server goes on serving.
/// </summary>
public sealed class RequestLimitsTests(LimitsFixture fixture) : IClassFixture<LimitsFixture>
{
    private static readonly TimeSpan Answered = TimeSpan.FromSeconds(60);

    private HttpClient Client => fixture.Client;

    private static string Document(int bytes) => "{\"Text\":\"" + new string('x', bytes - 11) + "\"}";

    /// <summary>Sends with Expect: 100-continue, so that the server may refuse before the body is sent.</summary>
    private async Task<HttpResponseMessage> SendAsync(HttpMethod method, string url, string body, string contentType = "application/json")
    {
        using var request = new HttpRequestMessage(method, url) { Content = new StringContent(body, Encoding.UTF8, contentType) };
        request.Headers.ExpectContinue = true;
        return await Client.SendAsync(request);
    }

    private static async Task AssertTooLargeAsync(HttpResponseMessage response, string setting, int bytes)
    {
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException");
        Assert.Contains($"over {bytes:N0} bytes", message, StringComparison.Ordinal);
        Assert.Contains($"({setting}; set it with --{setting} or JACKDAW_{setting.Replace(":", "__", StringComparison.Ordinal).ToUpperInvariant()})", message, StringComparison.Ordinal);
    }

    private static string BatchOf(int bytes) =>
        "{\"Commands\":[{\"Type\":\"PUT\",\"Id\":\"batch/1\",\"Document\":" + Document(bytes - 60) + "}]}";

    [Fact]
    public async Task ADocumentOverItsLimitIs413NamingTheSetting()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await SendAsync(HttpMethod.Put, $"/databases/{db}/docs?id=big", Document(LimitsFixture.MaxDocument + 1));
        await AssertTooLargeAsync(response, "Limits:MaxDocumentBodySize", LimitsFixture.MaxDocument);

        using var small = await Client.PutAsync($"/databases/{db}/docs?id=small", Api.Json("{}"));
        Assert.Equal(HttpStatusCode.Created, small.StatusCode);
    }

    [Fact]
    public async Task ADocumentSentInChunksIsHeldToTheSameLimit()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var connection = await RawConnection.OpenAsync(Client.BaseAddress!);
        var body = Document(LimitsFixture.MaxDocument + 50_000);
        await connection.SendAsync($"PUT /databases/{db}/docs?id=chunked HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{body.Length:X}\r\n{body}\r\n0\r\n\r\n");
        var response = await connection.ReadResponseAsync(Answered);
        Assert.StartsWith("HTTP/1.1 413 ", response, StringComparison.Ordinal);
        Assert.Contains("\"Type\":\"PayloadTooLargeException\"", response, StringComparison.Ordinal);
        Assert.Contains("Limits:MaxDocumentBodySize", response, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ADocumentMayBeLargerThanAQuery()
    {
        var db = await fixture.CreateDatabaseAsync();
        var between = (LimitsFixture.MaxOther + LimitsFixture.MaxDocument) / 2;
        using (var put = await SendAsync(HttpMethod.Put, $"/databases/{db}/docs?id=between", Document(between)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        var query = "{\"Query\":\"from Orders where Name = $name\",\"QueryParameters\":{\"name\":\"" + new string('y', between) + "\"}}";
        using var response = await SendAsync(HttpMethod.Post, $"/databases/{db}/queries", query);
        await AssertTooLargeAsync(response, "Limits:MaxOtherBodySize", LimitsFixture.MaxOther);
    }

    [Fact]
    public async Task ABatchOverItsLimitIs413NamingTheSetting()
    {
        var db = await fixture.CreateDatabaseAsync();
        // Larger than a document may be, within a batch's limit.
        using (var fits = await SendAsync(HttpMethod.Post, $"/databases/{db}/bulk_docs", BatchOf(LimitsFixture.MaxBatch - 1000)))
        {
            Assert.Equal(HttpStatusCode.OK, fits.StatusCode);
        }

        using (var response = await SendAsync(HttpMethod.Post, $"/databases/{db}/bulk_docs", BatchOf(LimitsFixture.MaxBatch + 1000)))
        {
            await AssertTooLargeAsync(response, "Limits:MaxBatchBodySize", LimitsFixture.MaxBatch);
        }

        var gets = "{\"Requests\":[{\"Url\":\"/docs\",\"Query\":\"?id=" + new string('z', LimitsFixture.MaxBatch) + "\"}]}";
        using (var response = await SendAsync(HttpMethod.Post, $"/databases/{db}/multi_get", gets))
        {
            await AssertTooLargeAsync(response, "Limits:MaxBatchBodySize", LimitsFixture.MaxBatch);
        }
    }

    [Fact]
    public async Task ABulkInsertOverItsLimitIs413AndEachLineIsHeldToTheDocumentLimit()
    {
        var db = await fixture.CreateDatabaseAsync();
        static string Lines(int count, int documentBytes) =>
            string.Concat(Enumerable.Range(0, count).Select(i => $"{{\"Id\":\"items/{i}\",\"Document\":{Document(documentBytes)}}}\n"));

        // Over the limit of a batch, within a bulk insert's.
        var fits = Lines(25, 10_000);
        Assert.InRange(fits.Length, LimitsFixture.MaxBatch, LimitsFixture.MaxBulkInsert);
        using (var response = await SendAsync(HttpMethod.Post, $"/databases/{db}/bulk_insert", fits, "application/x-ndjson"))
        {
            Assert.Equal(25, (await Api.JsonAsync(response)).GetProperty("Count").GetInt64());
        }

        using (var response = await SendAsync(HttpMethod.Post, $"/databases/{db}/bulk_insert", Lines(35, 10_000), "application/x-ndjson"))
        {
            await AssertTooLargeAsync(response, "Limits:MaxBulkInsertBodySize", LimitsFixture.MaxBulkInsert);
        }

        using (var response = await SendAsync(HttpMethod.Post, $"/databases/{db}/bulk_insert", Lines(1, LimitsFixture.MaxDocument + 1000), "application/x-ndjson"))
        {
            var message = await Api.AssertErrorAsync(response, HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException");
            Assert.Contains($"Bulk insert line 1 is longer than {LimitsFixture.MaxDocument:N0} bytes, the largest document allowed (Limits:MaxDocumentBodySize)", message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task TooManyOrTooLargeHeadersAre431AndTheServerGoesOn()
    {
        using (var many = new HttpRequestMessage(HttpMethod.Get, "/build/version"))
        {
            for (var i = 0; i <= LimitsFixture.MaxHeaderCount; i++)
            {
                many.Headers.TryAddWithoutValidation($"X-Header-{i}", "x");
            }
            using var response = await Client.SendAsync(many);
            Assert.Equal(HttpStatusCode.RequestHeaderFieldsTooLarge, response.StatusCode);
        }
        using (var large = new HttpRequestMessage(HttpMethod.Get, "/build/version"))
        {
            large.Headers.TryAddWithoutValidation("X-Large", new string('h', LimitsFixture.MaxHeadersTotal));
            using var response = await Client.SendAsync(large);
            Assert.Equal(HttpStatusCode.RequestHeaderFieldsTooLarge, response.StatusCode);
        }
        using var fine = await Client.GetAsync("/build/version");
        Assert.Equal(HttpStatusCode.OK, fine.StatusCode);
    }

    [Fact]
    public async Task HeadersThatTakeTooLongAreCutOffWith408()
    {
        using var slow = await RawConnection.OpenAsync(Client.BaseAddress!);
        // A slowloris: the head begun, never ended (3 s allowed here).
        await slow.SendAsync("GET /build/version HTTP/1.1\r\nHost: test\r\nX-Slow: ");
        using (var other = await Client.GetAsync("/build/version"))
        {
            Assert.Equal(HttpStatusCode.OK, other.StatusCode);
        }
        Assert.StartsWith("HTTP/1.1 408 ", await slow.ReadResponseAsync(Answered), StringComparison.Ordinal);
        Assert.True(await slow.ClosedByServerAsync(Answered), "the connection is closed after the 408");
    }

    [Fact]
    public async Task ASlowSenderIsCutOffWith408NamingTheSettingWhileOthersAreServed()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var slow = await RawConnection.OpenAsync(Client.BaseAddress!);
        // The head and the start of a body, then nothing: below 1,000 bytes/s once the 2 s of grace are over.
        await slow.SendAsync($"PUT /databases/{db}/docs?id=slow HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 50000\r\n\r\n{{\"Text\":\"");

        using (var other = await Client.PutAsync($"/databases/{db}/docs?id=other", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, other.StatusCode);
        }

        var response = await slow.ReadResponseAsync(Answered);
        Assert.StartsWith("HTTP/1.1 408 ", response, StringComparison.Ordinal);
        Assert.Contains("Limits:MinRequestBodyDataRate", response, StringComparison.Ordinal);
        Assert.True(await slow.ClosedByServerAsync(Answered), "the connection is closed after the 408");
        using var missing = await Client.GetAsync($"/databases/{db}/docs?id=slow");
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
    }
}
