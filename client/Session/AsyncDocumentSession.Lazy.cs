using System.Buffers;
using System.Runtime.ExceptionServices;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Client.Http;

namespace Jackdaw.Client.Session;

/// <summary>
/// Lazy operations: loads and queries recorded now and sent later, all pending ones in one
/// <c>POST /databases/{db}/multi_get</c> (RavenDB's shape; the server runs each item as the request
/// alone would run). Each operation reads its own item, so one that fails does not take the others' values.
/// </summary>
internal sealed partial class AsyncDocumentSession : IEagerSessionOperations
{
    // Ids and RQL go into the body as written (no \u0026 for '&'): it is read by the server, never by a browser.
    private static readonly JsonWriterOptions MultiGetWriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true };

    private readonly List<LazyOperation> _pendingLazy = [];
    private LazySessionOperations? _lazily;

    public ILazySessionOperations Lazily => _lazily ??= new LazySessionOperations(this);

    public IEagerSessionOperations Eagerly => this;

    public Task ExecuteAllPendingLazyOperationsAsync(CancellationToken token = default) => ExecuteLazyOperationsAsync(throwOnFailure: true, token);

    /// <summary>Records <paramref name="operation"/>; its value runs every pending operation first, unless they ran already.</summary>
    internal Lazy<Task<TValue>> AddLazyOperation<TValue>(LazyOperation<TValue> operation, CancellationToken token)
    {
        _pendingLazy.Add(operation);
        return new Lazy<Task<TValue>>(() => EvaluateAsync(operation, token));
    }

    private async Task<TValue> EvaluateAsync<TValue>(LazyOperation<TValue> operation, CancellationToken token)
    {
        if (!operation.IsDone)
        {
            await ExecuteLazyOperationsAsync(throwOnFailure: false, token).ConfigureAwait(false);
        }

        return operation.GetValue();
    }

    private async Task ExecuteLazyOperationsAsync(bool throwOnFailure, CancellationToken token)
    {
        if (_pendingLazy.Count == 0)
        {
            return;
        }

        LazyOperation[] operations = [.. _pendingLazy];
        _pendingLazy.Clear();
        var sent = new List<(LazyOperation Operation, GetRequest Request)>(operations.Length);
        try
        {
            foreach (var operation in operations)
            {
                GetRequest? request;
                try
                {
                    request = operation.CreateRequest();
                }
                catch (Exception e) when (e is not OperationCanceledException)
                {
                    // Answered from the session and failed there (a type mismatch, say): that operation only.
                    operation.Fail(e);
                    continue;
                }

                if (request is { } toSend)
                {
                    sent.Add((operation, toSend));
                }
            }

            if (sent.Count > 0)
            {
                await SendMultiGetAsync(sent, token).ConfigureAwait(false);
            }
        }
        catch (Exception e)
        {
            // Nothing came back (or nothing readable): every operation not done has this error.
            foreach (var operation in operations)
            {
                if (!operation.IsDone)
                {
                    operation.Fail(e);
                }
            }

            if (throwOnFailure)
            {
                throw;
            }

            return;
        }

        if (throwOnFailure && Array.Find(operations, o => o.Error is not null) is { } failed)
        {
            ExceptionDispatchInfo.Throw(failed.Error!);
        }
    }

    private async Task SendMultiGetAsync(List<(LazyOperation Operation, GetRequest Request)> sent, CancellationToken token)
    {
        var body = new ArrayBufferWriter<byte>(256 * sent.Count);
        using (var writer = new Utf8JsonWriter(body, MultiGetWriterOptions))
        {
            writer.WriteStartObject();
            writer.WriteStartArray("Requests");
            foreach (var (_, request) in sent)
            {
                writer.WriteStartObject();
                writer.WriteString("Url", string.Concat(_databasePath, request.Url));
                writer.WriteString("Query", request.Query);
                writer.WriteString("Method", request.Method);
                writer.WriteStartObject("Headers");
                writer.WriteEndObject();
                if (!request.Content.IsEmpty)
                {
                    writer.WritePropertyName("Content");
                    writer.WriteRawValue(request.Content.Span, skipInputValidation: true);
                }

                writer.WriteEndObject();
            }

            writer.WriteEndArray();
            writer.WriteEndObject();
        }

        NumberOfRequests++;
        byte[] answer;
        using (var response = await _store.Executor.SendAsync(HttpMethod.Post, _databasePath + "/multi_get", body.WrittenMemory, token).ConfigureAwait(false))
        {
            answer = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }

        MultiGetAnswer.Read(answer, sent.Count, new Batch(sent));
    }

    /// <summary>Gives each item of the answer to the operation that asked for it.</summary>
    private sealed class Batch(List<(LazyOperation Operation, GetRequest Request)> sent) : IMultiGetResultReader
    {
        public void ReadResult(int index, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body) =>
            sent[index].Operation.Complete(sent[index].Request, statusCode, ref reader, body);

        public void TakeResult(int index, int statusCode, ReadOnlyMemory<byte> result) =>
            sent[index].Operation.Complete(sent[index].Request, statusCode, result);
    }
}
