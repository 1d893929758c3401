using System.Buffers;
using System.IO.Pipelines;
using System.Net.Http.Headers;
using System.Text.Json;
using Jackdaw.Client.BulkInsert;
using Jackdaw.Client.Http;
using Jackdaw.Client.Json;

namespace Jackdaw.Client;

/// <summary>
/// Streams documents to <c>POST /databases/{db}/bulk_insert</c> as newline-delimited JSON over one
/// chunked request; the server commits them in merged transactions as they arrive.
/// <see cref="DisposeAsync"/> ends the stream, waits for the server's final count and throws
/// <see cref="BulkInsertException"/> if the server failed (a secured server's refusal is the
/// <see cref="AuthorizationException"/>, a failed TLS handshake the <see cref="CertificateException"/>:
/// nothing was stored). Not thread-safe: one producer at a time.
/// With an <see cref="OnProgress"/> handler added before the first document, the insert runs as
/// an operation of the server, whose progress comes through the changes feed (as RavenDB's does).
/// </summary>
public sealed class BulkInsertOperation : IAsyncDisposable
{
    // Documents are handed to the connection in batches of about this many bytes; the pipe lets
    // the producer run at most PauseThreshold ahead of the network before StoreAsync waits.
    private const int FlushThreshold = 64 * 1024;
    private const int PauseThreshold = 1024 * 1024;

    private readonly DocumentStore _store;
    private readonly DocumentConventions _conventions;
    private readonly string _database;
    private readonly string _path;
    private readonly CancellationToken _token;
    private readonly Pipe _pipe = new(new PipeOptions(pauseWriterThreshold: PauseThreshold, resumeWriterThreshold: PauseThreshold / 2, minimumSegmentSize: 16 * 1024, useSynchronizationContext: false));
    private readonly ArrayBufferWriter<byte> _entityBuffer = new(4096);
    private readonly ArrayBufferWriter<byte> _documentBuffer = new(4096);
    private readonly Utf8JsonWriter _entityWriter;
    private readonly Utf8JsonWriter _lineWriter;
    private Task<HttpResponseMessage>? _request;

    /// <summary>The node the insert runs on, chosen once: its operation id and its stream go there.</summary>
    private string? _url;
    private IDisposable? _progress;
    private bool _disposed;
    private bool _failureReported;

    internal BulkInsertOperation(DocumentStore store, string database, CancellationToken token)
    {
        _store = store;
        _conventions = store.Conventions;
        _database = database;
        _path = DocumentStore.DatabasePath(database) + "/bulk_insert";
        _token = token;
        var options = new JsonWriterOptions { Encoder = _conventions.SerializerOptions.Encoder, SkipValidation = true };
        _entityWriter = new Utf8JsonWriter(_entityBuffer, options);
        _lineWriter = new Utf8JsonWriter(_pipe.Writer, options);
    }

    /// <summary>
    /// Raised with the server's progress, about once a second while it moves (RavenDB's
    /// <c>OnProgress</c>): documents read and committed, batches, the last id committed. Add the
    /// handler before the first <see cref="StoreAsync(object, CancellationToken)"/>: the insert then
    /// takes an operation id and watches it on <see cref="DocumentStore.Changes"/>. It is called on
    /// the changes connection's thread; a short insert may end before the first report.
    /// </summary>
    public event EventHandler<BulkInsertOnProgressEventArgs>? OnProgress;

    /// <summary>Documents handed to the stream so far.</summary>
    public long DocumentsSent { get; private set; }

    /// <summary>The server's final count, known once <see cref="DisposeAsync"/> completed without error.</summary>
    public long? DocumentsCommitted { get; private set; }

    public Task StoreAsync(object entity, CancellationToken token = default) => StoreAsync(entity, null, null, token);

    public Task StoreAsync(object entity, string? id, CancellationToken token = default) => StoreAsync(entity, id, null, token);

    /// <summary>
    /// Queues one document. The id is <paramref name="id"/>, else the entity's id property, else
    /// generated here (collection prefix plus a time-ordered unique suffix) and written back into the entity.
    /// </summary>
    public async Task StoreAsync(object entity, string? id, IReadOnlyDictionary<string, object?>? metadata, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(entity);
        ObjectDisposedException.ThrowIf(_disposed, this);
        token.ThrowIfCancellationRequested();
        if (_request is { IsCompleted: true })
        {
            await ThrowFailureAsync().ConfigureAwait(false);
        }
        if (_request is null)
        {
            _url = await _store.Executor.GetPreferredUrlAsync(_database, token).ConfigureAwait(false);
            _request = OnProgress is null ? Start(_url, null) : await StartFollowedAsync(_url, token).ConfigureAwait(false);
        }

        var type = _conventions.GetEntityTypeInfo(entity.GetType());
        if (string.IsNullOrEmpty(id))
        {
            id = type.GetId?.Invoke(entity);
        }
        if (string.IsNullOrEmpty(id) || id.EndsWith('/') || id.EndsWith('|'))
        {
            id = (string.IsNullOrEmpty(id) ? type.IdPrefix : id.TrimEnd('|') + "/") + Guid.CreateVersion7().ToString("N");
            type.SetId?.Invoke(entity, id);
        }

        _entityBuffer.ResetWrittenCount();
        _entityWriter.Reset();
        JsonSerializer.Serialize(_entityWriter, entity, type.JsonTypeInfo);
        _entityWriter.Flush();

        _lineWriter.Reset();
        _lineWriter.WriteStartObject();
        _lineWriter.WriteString("Id", id);
        _lineWriter.WritePropertyName("Document");
        var documentMetadata = metadata is null ? null : new Session.MetadataDictionary(null, type.Collection, type.ClrTypeName);
        if (metadata is not null)
        {
            foreach (var (key, value) in metadata)
            {
                documentMetadata![key] = value;
            }
        }

        DocumentJson.WriteDocument(_lineWriter, _documentBuffer, _entityBuffer.WrittenSpan, type, default, documentMetadata, _conventions.SerializerOptions);
        _lineWriter.WriteEndObject();
        _lineWriter.Flush();
        _pipe.Writer.GetSpan(1)[0] = (byte)'\n';
        _pipe.Writer.Advance(1);
        DocumentsSent++;

        if (_pipe.Writer.UnflushedBytes >= FlushThreshold)
        {
            await FlushAsync(token).ConfigureAwait(false);
        }
    }

    /// <summary>Ends the stream and waits for the server to commit everything; throws <see cref="BulkInsertException"/> on failure.</summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            await EndAsync().ConfigureAwait(false);
        }
        finally
        {
            // The final state came before the answer: nothing more to report.
            _progress?.Dispose();
            _progress = null;
        }
    }

    private async ValueTask EndAsync()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        _entityWriter.Dispose();
        if (_request is null)
        {
            await _pipe.Writer.CompleteAsync().ConfigureAwait(false);
            DocumentsCommitted = 0;
            return;
        }

        // Completing commits what is still unflushed and never waits, unlike a flush into a pipe
        // that is over its pause threshold because the request already failed.
        await _lineWriter.DisposeAsync().ConfigureAwait(false);
        await _pipe.Writer.CompleteAsync().ConfigureAwait(false);
        if (_failureReported)
        {
            // StoreAsync already threw the failure; do not replace it with a second exception.
            return;
        }

        using var response = await AwaitResponseAsync().ConfigureAwait(false);
        if (!response.IsSuccessStatusCode)
        {
            throw await CreateFailureAsync(response).ConfigureAwait(false);
        }
        byte[] body;
        try
        {
            body = await response.Content.ReadAsByteArrayAsync(_token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            throw new BulkInsertException(
                $"The connection broke while the server was answering, after all {DocumentsSent} documents were sent ({e.Message}). Committed batches stay; count the documents to know how many.",
                response.StatusCode,
                null,
                e);
        }

        try
        {
            using var json = JsonDocument.Parse(body);
            DocumentsCommitted = json.RootElement.TryGetProperty("Count", out var count) && count.TryGetInt64(out var n)
                ? n
                : throw new BulkInsertException($"bulk_insert answered {response.StatusCode} without a \"Count\".", response.StatusCode, null);
        }
        catch (JsonException e)
        {
            throw new BulkInsertException($"bulk_insert answered {response.StatusCode} with a body that is not JSON.", response.StatusCode, null, e);
        }

        if (DocumentsCommitted != DocumentsSent)
        {
            throw new BulkInsertException($"bulk_insert committed {DocumentsCommitted} documents but {DocumentsSent} were sent.", response.StatusCode, null);
        }
    }

    /// <summary>
    /// Takes an operation id of the node at <paramref name="url"/> (an id is its node's) and watches
    /// it on the changes feed, then starts the stream under it, to that node: lines still
    /// (<c>application/x-ndjson</c>), answered with their count, but tracked by the server.
    /// </summary>
    private async Task<Task<HttpResponseMessage>> StartFollowedAsync(string url, CancellationToken token)
    {
        long id;
        using (var response = await _store.Executor.SendToUrlAsync(_database, url, HttpMethod.Get, DocumentStore.DatabasePath(_database) + "/operations/next-operation-id", token).ConfigureAwait(false))
        {
            using var json = JsonDocument.Parse(await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false));
            id = json.RootElement.TryGetProperty("Id", out var value) && value.TryGetInt64(out var number)
                ? number
                : throw new JackdawException("operations/next-operation-id answered without a number \"Id\".");
        }
        _progress = _store.Changes(_database).ForOperationId(id).Subscribe(new ActionObserver<OperationStatusChange>(ReportProgress));
        return Start(url, id);
    }

    private void ReportProgress(OperationStatusChange change)
    {
        if (change.State is { Status: OperationStatus.InProgress, Progress: { } progress })
        {
            OnProgress?.Invoke(this, new BulkInsertOnProgressEventArgs(progress));
        }
    }

    /// <summary>
    /// The stream did not reach its node (refused, broken): the node is marked failed, so the next
    /// requests and inserts go to another. The stream cannot be sent twice, so this insert fails (as
    /// RavenDB's bulk insert does).
    /// </summary>
    private void ReportNodeFailed() => _store.Executor.OnConnectionFailed(_database, _url!);

    private Task<HttpResponseMessage> Start(string url, long? operationId)
    {
        var content = new PipeReaderContent(_pipe.Reader);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/x-ndjson");
        var path = operationId is { } id ? _path + "?id=" + id.ToString(System.Globalization.CultureInfo.InvariantCulture) : _path;
        var request = new HttpRequestMessage(HttpMethod.Post, url + path) { Content = content };
        request.Headers.TransferEncodingChunked = true;
        var task = _store.Executor.SendStreamingAsync(request, _token);

        // A response (or failure) before the stream ended means the server stopped reading: wake a
        // producer waiting on the full pipe so it sees that at once.
        _ = task.ContinueWith(static (_, pipe) => ((Pipe)pipe!).Writer.CancelPendingFlush(), _pipe, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        return task;
    }

    private async Task FlushAsync(CancellationToken token)
    {
        using var linked = token.CanBeCanceled ? CancellationTokenSource.CreateLinkedTokenSource(token, _token) : null;
        FlushResult result;
        try
        {
            result = await _pipe.Writer.FlushAsync(linked?.Token ?? _token).ConfigureAwait(false);
        }
        catch (Exception) when (!token.IsCancellationRequested && !_token.IsCancellationRequested)
        {
            // The request content failed (the connection broke or the server stopped reading).
            await ThrowFailureAsync().ConfigureAwait(false);
            throw;
        }

        if (result.IsCompleted || result.IsCanceled || _request!.IsCompleted)
        {
            await ThrowFailureAsync().ConfigureAwait(false);
        }
    }

    private async Task ThrowFailureAsync()
    {
        _failureReported = true;
        using var response = await AwaitResponseAsync().ConfigureAwait(false);
        throw response.IsSuccessStatusCode
            ? new BulkInsertException($"bulk_insert answered {(int)response.StatusCode} before the stream ended, after {DocumentsSent} documents were sent.", response.StatusCode, null)
            : await CreateFailureAsync(response).ConfigureAwait(false);
    }

    private async Task<HttpResponseMessage> AwaitResponseAsync()
    {
        try
        {
            return await _request!.ConfigureAwait(false);
        }
        catch (ServerUnavailableException e) when (e.InnerException is HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError })
        {
            _failureReported = true;
            ReportNodeFailed();
            throw;
        }
        catch (CertificateException)
        {
            // No TLS connection, so nothing was sent: the cause is the whole story.
            _failureReported = true;
            throw;
        }
        catch (JackdawException e)
        {
            _failureReported = true;
            if (e is ServerUnavailableException)
            {
                ReportNodeFailed();
            }

            throw new BulkInsertException(
                $"The bulk insert stream broke after {DocumentsSent} documents were sent ({e.Message}). The server keeps the batches it committed before the break and nothing after; count the documents and send the rest again.",
                null,
                null,
                e);
        }
    }

    /// <summary>The server's error as a <see cref="BulkInsertException"/>; a refusal (nothing of the stream was read) stays the <see cref="AuthorizationException"/> it is.</summary>
    private async Task<JackdawException> CreateFailureAsync(HttpResponseMessage response)
    {
        _failureReported = true;
        var error = await RequestExecutor.CreateErrorAsync(response, HttpMethod.Post, _path, CancellationToken.None).ConfigureAwait(false);
        return error is AuthorizationException ? error : new BulkInsertException(error.Message, error.StatusCode, error.ServerErrorType, error);
    }
}
