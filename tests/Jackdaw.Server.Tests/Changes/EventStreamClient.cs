using System.Net;
using System.Text;
using System.Text.Json;

namespace Jackdaw.Server.Tests.Changes;

/// <summary>An open event stream, read event by event.</summary>
public sealed class EventStreamClient : IDisposable
{
    private readonly HttpResponseMessage _response;
    private readonly StreamReader _reader;

    private EventStreamClient(HttpResponseMessage response, Stream body)
    {
        _response = response;
        _reader = new StreamReader(body, Encoding.UTF8);
    }

    public HttpResponseMessage Response => _response;

    public static async Task<EventStreamClient> OpenAsync(HttpClient client, string url, string? lastEventId = null)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, url);
        if (lastEventId is not null)
        {
            request.Headers.TryAddWithoutValidation("Last-Event-ID", lastEventId);
        }
        var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/event-stream", response.Content.Headers.ContentType?.MediaType);
        return new EventStreamClient(response, await response.Content.ReadAsStreamAsync());
    }

    /// <summary>The next event (an id-only event is the stream's position); null at the end of the stream.</summary>
    public async Task<ServerSentEvent?> NextAsync()
    {
        using var timeout = new CancellationTokenSource(ChangesSocket.Timeout);
        long? id = null;
        string? name = null;
        StringBuilder? data = null;
        var any = false;
        while (await _reader.ReadLineAsync(timeout.Token) is { } line)
        {
            if (line.Length == 0)
            {
                if (any)
                {
                    return new ServerSentEvent(id, name, data is null ? null : JsonDocument.Parse(data.ToString()).RootElement.Clone());
                }
                continue;
            }
            if (line.StartsWith(':') || line.StartsWith("retry:", StringComparison.Ordinal))
            {
                continue;
            }
            any = true;
            var colon = line.IndexOf(':');
            var value = line[(colon + 1)..].TrimStart();
            switch (line[..colon])
            {
                case "id":
                    id = long.Parse(value);
                    break;
                case "event":
                    name = value;
                    break;
                case "data":
                    (data ??= new StringBuilder()).Append(value);
                    break;
            }
        }
        return null;
    }

    /// <summary>The change events up to and including the one of <paramref name="lastId"/>.</summary>
    public async Task<List<ServerSentEvent>> ChangesUntilAsync(string lastId)
    {
        var events = new List<ServerSentEvent>();
        while (true)
        {
            var next = await NextAsync() ?? throw new InvalidOperationException("The stream ended before " + lastId);
            if (next.Data is null)
            {
                continue;
            }
            events.Add(next);
            if (next.Data.Value.GetProperty("Id").GetString() == lastId)
            {
                return events;
            }
        }
    }

    public void Dispose()
    {
        _reader.Dispose();
        _response.Dispose();
    }
}
