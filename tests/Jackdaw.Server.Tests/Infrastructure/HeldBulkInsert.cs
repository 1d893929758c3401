using System.IO.Pipelines;
using System.Net;
using System.Text;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// A bulk insert in RavenDB's form (a JSON array of commands under an operation id) whose body the
/// test writes as it goes and holds open as long as it likes: progress can be awaited while the
/// insert is still running, without guessing how long it takes.
/// </summary>
public sealed class HeldBulkInsert : IAsyncDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private readonly Pipe _body;
    private bool _first = true;
    private bool _completed;

    private HeldBulkInsert(long id, Pipe body, Task<HttpResponseMessage> response)
    {
        Id = id;
        _body = body;
        Response = response;
    }

    /// <summary>The operation id, from <c>operations/next-operation-id</c>.</summary>
    public long Id { get; }

    /// <summary>The server's answer: 204 once the array is closed, an error when it stopped.</summary>
    public Task<HttpResponseMessage> Response { get; }

    /// <summary>Starts the insert; returns once the server runs it (its operation is known), before any document.</summary>
    public static async Task<HeldBulkInsert> StartAsync(HttpClient client, string db)
    {
        using var next = await client.GetAsync($"/databases/{db}/operations/next-operation-id");
        var id = (await Api.JsonAsync(next)).GetProperty("Id").GetInt64();
        var body = new Pipe();
        var content = new BodyContent(body.Reader);
        content.Headers.ContentType = new("application/json");
        var request = new HttpRequestMessage(HttpMethod.Post, $"/databases/{db}/bulk_insert?id={id}&skipOverwriteIfUnchanged=false") { Content = content };
        var insert = new HeldBulkInsert(id, body, client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead));
        // The headers go out before any document: the operation exists once the handler runs.
        await Poll.UntilAsync(async () =>
        {
            using var state = await client.GetAsync($"/databases/{db}/operations/state?id={id}");
            return state.StatusCode == HttpStatusCode.OK;
        }, Timeout, $"bulk insert {id} started");
        return insert;
    }

    /// <summary>Sends documents <c>{prefix}{from}</c> to <c>{prefix}{from + count - 1}</c> (collection Items).</summary>
    public Task SendAsync(int from, int count, string prefix = "items/")
    {
        var text = new StringBuilder();
        for (var i = from; i < from + count; i++)
        {
            text.Append(_first ? "[" : ",");
            _first = false;
            text.Append("{\"Id\":\"").Append(prefix).Append(i).Append("\",\"Type\":\"PUT\",\"Document\":{\"N\":").Append(i).Append(",\"@metadata\":{\"@collection\":\"Items\"}}}");
        }
        return SendRawAsync(text.ToString());
    }

    /// <summary>Sends text as it is (a malformed command, say).</summary>
    public async Task SendRawAsync(string text)
    {
        await _body.Writer.WriteAsync(Encoding.UTF8.GetBytes(text));
    }

    /// <summary>Closes the array and the body; returns the server's answer.</summary>
    public async Task<HttpResponseMessage> EndAsync()
    {
        await SendRawAsync(_first ? "[]" : "]");
        await CompleteBodyAsync();
        return await Response.WaitAsync(Timeout);
    }

    public async ValueTask DisposeAsync()
    {
        await CompleteBodyAsync();
        try
        {
            (await Response.WaitAsync(Timeout)).Dispose();
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException or TimeoutException)
        {
        }
    }

    private async Task CompleteBodyAsync()
    {
        if (_completed)
        {
            return;
        }
        _completed = true;
        await _body.Writer.CompleteAsync();
    }

    /// <summary>Sends what the test writes as soon as it is written (chunked, flushed each time).</summary>
    private sealed class BodyContent(PipeReader reader) : HttpContent
    {
        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) => SerializeToStreamAsync(stream, context, CancellationToken.None);

        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        {
            // The headers now, so that the server starts the insert before the first document.
            await stream.FlushAsync(cancellationToken);
            while (true)
            {
                var result = await reader.ReadAsync(cancellationToken);
                foreach (var segment in result.Buffer)
                {
                    await stream.WriteAsync(segment, cancellationToken);
                }
                reader.AdvanceTo(result.Buffer.End);
                if (result.IsCompleted)
                {
                    break;
                }
                await stream.FlushAsync(cancellationToken);
            }
            await reader.CompleteAsync();
        }

        protected override bool TryComputeLength(out long length)
        {
            length = 0;
            return false;
        }
    }
}
