using System.Net;
using System.Text;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Diagnostics;

/// <summary>
/// Bodies without a Content-Length count in <c>jackdaw_http_request_bytes_total</c> and
/// <c>jackdaw_http_response_bytes_total</c>: a chunked upload by what the handler read, a streamed
/// answer by what it wrote.
/// </summary>
public sealed class StreamedBodyBytesTests
{
    private static double Counted(Dictionary<string, PrometheusTextParser.Family> families, string family, string route, string method) =>
        families.TryGetValue(family, out var found)
            ? found.Samples.Where(s => s.Labels["route"] == route && s.Labels["method"] == method).Sum(s => s.Value)
            : 0;

    private static async Task<HttpResponseMessage> SendChunkedAsync(HttpClient client, HttpMethod method, string url, byte[] body, string contentType)
    {
        var content = new StreamContent(new MemoryStream(body));
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue(contentType);
        using var request = new HttpRequestMessage(method, url) { Content = content };
        request.Headers.TransferEncodingChunked = true;
        return await client.SendAsync(request);
    }

    private static byte[] Orders(int count)
    {
        var lines = new StringBuilder();
        for (var i = 0; i < count; i++)
        {
            lines.Append("{\"Id\":\"orders/").Append(i).Append("\",\"Document\":{\"Name\":\"").Append('x', 50).Append("\",\"@metadata\":{\"@collection\":\"Orders\"}}}\n");
        }
        return Encoding.UTF8.GetBytes(lines.ToString());
    }

    [Fact]
    public async Task ChunkedUploadsCountInTheRequestBytesOfTheirRoute()
    {
        await using var server = await InProcessServer.StartAsync();
        using (var create = await server.Client.PutAsync("/admin/databases?name=Up", null))
        {
            Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        }
        using (var put = await server.Client.PutAsync("/databases/Up/docs?id=a", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        var before = await MetricsEndpointTests.ScrapeAsync(server.Client);
        var insert = Orders(2000);
        using (var response = await SendChunkedAsync(server.Client, HttpMethod.Post, "/databases/Up/bulk_insert", insert, "application/x-ndjson"))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Null(response.RequestMessage!.Content!.Headers.ContentLength);
        }
        var attachment = new byte[300_000];
        new Random(7).NextBytes(attachment);
        using (var response = await SendChunkedAsync(server.Client, HttpMethod.Put, "/databases/Up/attachments?id=a&name=photo", attachment, "application/octet-stream"))
        {
            Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        }
        var after = await MetricsEndpointTests.ScrapeAsync(server.Client);

        const string family = "jackdaw_http_request_bytes_total";
        Assert.Equal(insert.Length, Counted(after, family, "/databases/*/bulk_insert", "POST") - Counted(before, family, "/databases/*/bulk_insert", "POST"));
        Assert.Equal(attachment.Length, Counted(after, family, "/databases/*/attachments", "PUT") - Counted(before, family, "/databases/*/attachments", "PUT"));
    }

    [Fact]
    public async Task StreamedAnswersCountInTheResponseBytesOfTheirRoute()
    {
        await using var server = await InProcessServer.StartAsync();
        using (var create = await server.Client.PutAsync("/admin/databases?name=Down", null))
        {
            Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        }
        using (var insert = await server.Client.PostAsync("/databases/Down/bulk_insert", new ByteArrayContent(Orders(3000))))
        {
            Assert.Equal(HttpStatusCode.OK, insert.StatusCode);
        }
        var attachment = new byte[200_000];
        new Random(8).NextBytes(attachment);
        using (var put = await server.Client.PutAsync("/databases/Down/attachments?id=orders/1&name=photo", new ByteArrayContent(attachment)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        var before = await MetricsEndpointTests.ScrapeAsync(server.Client);
        long query, docs, download, bulk;
        using (var response = await server.Client.PostAsync("/databases/Down/streams/queries", Api.Json("{\"Query\":\"from Orders\"}")))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            query = (await response.Content.ReadAsByteArrayAsync()).Length;
        }
        using (var response = await server.Client.GetAsync("/databases/Down/streams/docs?startsWith=orders/&format=jsonl"))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            docs = (await response.Content.ReadAsByteArrayAsync()).Length;
        }
        using (var response = await server.Client.GetAsync("/databases/Down/attachments?id=orders/1&name=photo"))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            download = (await response.Content.ReadAsByteArrayAsync()).Length;
        }
        using (var response = await server.Client.PostAsync("/databases/Down/attachments/bulk", Api.Json("{\"AttachmentType\":\"Document\",\"Attachments\":[{\"DocumentId\":\"orders/1\",\"Name\":\"photo\"}]}")))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            bulk = (await response.Content.ReadAsByteArrayAsync()).Length;
        }
        var after = await MetricsEndpointTests.ScrapeAsync(server.Client);

        // Both streams are larger than one flush (64 KiB): every flush is counted, not only the last.
        Assert.True(query > 300_000, $"a streamed query of {query} bytes");
        Assert.True(docs > 300_000, $"a document stream of {docs} bytes");
        Assert.Equal(attachment.Length, download);
        Assert.True(bulk > attachment.Length, $"a bulk answer of {bulk} bytes");
        const string family = "jackdaw_http_response_bytes_total";
        Assert.Equal(query, Counted(after, family, "/databases/*/streams/queries", "POST") - Counted(before, family, "/databases/*/streams/queries", "POST"));
        Assert.Equal(docs, Counted(after, family, "/databases/*/streams/docs", "GET") - Counted(before, family, "/databases/*/streams/docs", "GET"));
        Assert.Equal(download, Counted(after, family, "/databases/*/attachments", "GET") - Counted(before, family, "/databases/*/attachments", "GET"));
        Assert.Equal(bulk, Counted(after, family, "/databases/*/attachments/bulk", "POST") - Counted(before, family, "/databases/*/attachments/bulk", "POST"));
    }
}
