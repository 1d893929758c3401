using System.Runtime.CompilerServices;
using System.Text;
using Jackdaw.Client.Json;
using Jackdaw.Client.Queries;
using Jackdaw.Client.Queries.Linq;
using Jackdaw.Client.Streaming;

namespace Jackdaw.Client.Session;

/// <summary>
/// Streams (<c>streams/docs</c>, <c>streams/queries</c>): results read one at a time as the
/// answer arrives (<see cref="StreamAnswerReader"/>), each deserialized and handed out before the
/// next is read. As in RavenDB, streamed documents are not tracked.
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    public IAsyncEnumerable<StreamResult<T>> StreamAsync<T>(IQueryable<T> query, CancellationToken token = default) =>
        StreamAsync(query, out _, token);

    public IAsyncEnumerable<StreamResult<T>> StreamAsync<T>(IQueryable<T> query, out StreamQueryStatistics statistics, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(query);
        var provider = query.Provider as JackdawQueryProvider ?? throw new InvalidOperationException(
            $"StreamAsync streams queries made by IAsyncDocumentSession.Query<T>(); this IQueryable comes from {query.Provider.GetType().Name}.");
        var (request, shape) = provider.CreateStreamRequest(query.Expression);
        statistics = new StreamQueryStatistics();
        return StreamQueryAsync<T>(request, shape, statistics, token);
    }

    public IAsyncEnumerable<StreamResult<T>> StreamAsync<T>(IAsyncRawDocumentQuery<T> query, CancellationToken token = default) =>
        StreamAsync(query, out _, token);

    public IAsyncEnumerable<StreamResult<T>> StreamAsync<T>(IAsyncRawDocumentQuery<T> query, out StreamQueryStatistics statistics, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(query);
        var raw = query as AsyncRawDocumentQuery<T> ?? throw new InvalidOperationException("StreamAsync streams raw queries made by IAdvancedSessionOperations.AsyncRawQuery<T>().");
        statistics = new StreamQueryStatistics();
        return StreamQueryAsync<T>(raw.CreateRequest(), new QueryResultShape(QueryResultMode.NoTracking), statistics, token);
    }

    public IAsyncEnumerable<StreamResult<T>> StreamAsync<T>(string? startsWith, string? matches = null, int start = 0, int pageSize = int.MaxValue, string? startAfter = null, string? exclude = null, CancellationToken token = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(start);
        ArgumentOutOfRangeException.ThrowIfNegative(pageSize);
        var url = new StringBuilder(_databasePath).Append("/streams/docs?");
        Append(url, "startsWith", startsWith);
        Append(url, "matches", matches);
        Append(url, "exclude", exclude);
        Append(url, "startAfter", startAfter);
        if (start != 0)
        {
            url.Append("start=").Append(start).Append('&');
        }
        if (pageSize != int.MaxValue)
        {
            url.Append("pageSize=").Append(pageSize).Append('&');
        }
        return StreamCoreAsync<T>(HttpMethod.Get, url.ToString(0, url.Length - 1), null, new QueryResultShape(QueryResultMode.NoTracking), null, token);

        static void Append(StringBuilder url, string name, string? value)
        {
            if (!string.IsNullOrEmpty(value))
            {
                url.Append(name).Append('=').Append(Uri.EscapeDataString(value)).Append('&');
            }
        }
    }

    private IAsyncEnumerable<StreamResult<T>> StreamQueryAsync<T>(QueryRequest request, QueryResultShape shape, StreamQueryStatistics statistics, CancellationToken token) =>
        StreamCoreAsync<T>(HttpMethod.Post, _databasePath + "/streams/queries", request.ToJson(_conventions.SerializerOptions), shape, statistics, token);

    /// <summary>
    /// One request per enumeration. Leaving the enumeration early (break, an exception,
    /// cancellation) disposes the response: the connection closes and the server stops.
    /// </summary>
    private async IAsyncEnumerable<StreamResult<T>> StreamCoreAsync<T>(HttpMethod method, string pathAndQuery, ReadOnlyMemory<byte>? body, QueryResultShape shape, StreamQueryStatistics? statistics, [EnumeratorCancellation] CancellationToken token)
    {
        NumberOfRequests++;
        using var response = await _store.Executor.SendForStreamAsync(method, pathAndQuery, body, _sessionInfo, token).ConfigureAwait(false);
        Stream content;
        try
        {
            content = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            throw Http.RequestExecutor.TranslateTransportFailure(e, method, pathAndQuery);
        }

        await using var reader = new StreamAnswerReader(content);
        await Guard(reader.StartAsync(statistics, token), method, pathAndQuery).ConfigureAwait(false);
        while (await Guard(reader.NextAsync(token), method, pathAndQuery).ConfigureAwait(false) is { } result)
        {
            // Results already received are not read once the caller cancels.
            token.ThrowIfCancellationRequested();
            yield return CreateStreamResult<T>(result, shape);
        }
    }

    private StreamResult<T> CreateStreamResult<T>(ReadOnlyMemory<byte> result, QueryResultShape shape)
    {
        string? id = null, changeVector = null;
        byte[]? metadata = null;
        if (LoadedMetadataReader.TryRead(result.Span, "", default, out var found))
        {
            id = found.Id;
            changeVector = found.ChangeVector;
            metadata = result.Span.Slice(found.Offset, found.Length).ToArray();
        }

        return new StreamResult<T>(id, changeVector, metadata, Materialize<T>(result, shape));
    }

    /// <summary>A broken connection while reading the answer is the client's <see cref="ServerUnavailableException"/>, as for any request.</summary>
    private static async ValueTask<TResult> Guard<TResult>(ValueTask<TResult> pending, HttpMethod method, string pathAndQuery)
    {
        try
        {
            return await pending.ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            throw Http.RequestExecutor.TranslateTransportFailure(e, method, pathAndQuery);
        }
    }

    private static async ValueTask Guard(ValueTask pending, HttpMethod method, string pathAndQuery)
    {
        try
        {
            await pending.ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            throw Http.RequestExecutor.TranslateTransportFailure(e, method, pathAndQuery);
        }
    }
}
