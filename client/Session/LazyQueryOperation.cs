using System.Text.Json;
using Jackdaw.Client.Http;
using Jackdaw.Client.Queries;

namespace Jackdaw.Client.Session;

/// <summary>
/// A lazy query: <c>POST /queries</c> with the query's body, its answer read as a query's is
/// (documents tracked, includes kept, statistics filled), then turned into the value by <paramref name="select"/>.
/// </summary>
internal sealed class LazyQueryOperation<TResult, TValue>(
    AsyncDocumentSession session,
    ReadOnlyMemory<byte> body,
    QueryResultShape shape,
    IReadOnlyList<QueryStatistics> statistics,
    Func<QueryResult<TResult>, TValue> select) : LazyOperation<TValue>
{
    public override GetRequest? CreateRequest() => new GetRequest("/queries", string.Empty, "POST", body);

    protected override void HandleResponse(GetRequest request, int statusCode, ReadOnlyMemory<byte> result)
    {
        ThrowIfError(request, statusCode, result);
        var reader = new Utf8JsonReader(result.Span);
        SetValue(select(session.ReadQueryAnswer<TResult>(result, ref reader, shape, statistics)));
    }

    protected override void HandleResponse(GetRequest request, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body)
    {
        if (statusCode != 200)
        {
            base.HandleResponse(request, statusCode, ref reader, body);
            return;
        }

        SetValue(select(session.ReadQueryAnswer<TResult>(body, ref reader, shape, statistics)));
    }
}
