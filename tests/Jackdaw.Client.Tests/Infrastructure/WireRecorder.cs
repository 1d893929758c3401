using System.Collections.Concurrent;
using System.Net;
using System.Text;
using System.Text.Json.Nodes;

namespace Jackdaw.Client.Tests.Infrastructure;

/// <summary>
/// A handler that records each request exactly as the client wrote it (body bytes through the
/// content's own serialization, headers of the request and of its content) and answers with
/// <see cref="Answer"/>: for wire shapes the fake server does not speak (multipart, attachments, revisions).
/// </summary>
public sealed class WireRecorder : HttpMessageHandler
{
    public ConcurrentQueue<WireRequest> Requests { get; } = new();

    /// <summary>The answer to each request; by default 404.</summary>
    public Func<WireRequest, HttpResponseMessage> Answer { get; set; } = _ => new HttpResponseMessage(HttpStatusCode.NotFound);

    public DocumentStore CreateStore()
    {
        var store = new DocumentStore { Urls = ["http://jackdaw.test"], Database = TestStores.Database, HttpMessageHandlerFactory = () => this };
        // No topology to ask for: the recorder sees only the requests a test makes.
        store.Conventions.DisableTopologyUpdates = true;
        return store.Initialize();
    }

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        byte[]? body = null;
        if (request.Content is not null)
        {
            // As the socket handler does: asking for the length computes it (and adds the header when known).
            _ = request.Content.Headers.ContentLength;
            var buffer = new MemoryStream();
            await request.Content.CopyToAsync(buffer, cancellationToken);
            body = buffer.ToArray();
        }

        var headers = request.Headers.Concat(request.Content?.Headers ?? Enumerable.Empty<KeyValuePair<string, IEnumerable<string>>>())
            .ToDictionary(h => h.Key, h => string.Join(",", h.Value), StringComparer.OrdinalIgnoreCase);
        var recorded = new WireRequest(request.Method.Method, request.RequestUri!.PathAndQuery, headers, body);
        Requests.Enqueue(recorded);
        return Answer(recorded);
    }

    public static HttpResponseMessage Json(string json, HttpStatusCode status = HttpStatusCode.OK) =>
        new(status) { Content = new StringContent(json, Encoding.UTF8, "application/json") };
}

public sealed record WireRequest(string Method, string PathAndQuery, Dictionary<string, string> Headers, byte[]? Body)
{
    public string BodyText => Body is null ? "" : Encoding.UTF8.GetString(Body);

    public JsonNode BodyJson => JsonNode.Parse(Body!)!;

    public string? Header(string name) => Headers.GetValueOrDefault(name);
}
