using System.Text.Json;
using Jackdaw.Client.Http;

namespace Jackdaw.Client.Session;

/// <summary>
/// A lazy load by id prefix: <c>GET /docs?startsWith=...</c> (<paramref name="query"/>, built and
/// checked when the operation was made), its page tracked as
/// <see cref="AsyncDocumentSession.LoadStartingWithAsync{T}"/> tracks it. The value maps each id to
/// its document, in the page's order. Unlike a load by id, the session cannot answer it: it is
/// always sent.
/// </summary>
internal sealed class LazyStartsWithOperation<T>(AsyncDocumentSession session, string query) : LazyOperation<Dictionary<string, T>>
    where T : class
{
    public override GetRequest? CreateRequest() => new GetRequest("/docs", query, "GET", default);

    protected override void HandleResponse(GetRequest request, int statusCode, ReadOnlyMemory<byte> result)
    {
        ThrowIfError(request, statusCode, result);
        var reader = new Utf8JsonReader(result.Span);
        SetValue(ToDictionary(session.TrackPage<T>(ref reader, result)));
    }

    protected override void HandleResponse(GetRequest request, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body)
    {
        if (statusCode != 200)
        {
            base.HandleResponse(request, statusCode, ref reader, body);
            return;
        }

        SetValue(ToDictionary(session.TrackPage<T>(ref reader, body)));
    }

    private static Dictionary<string, T> ToDictionary(List<(string Id, T Entity)> page)
    {
        var results = new Dictionary<string, T>(page.Count, StringComparer.OrdinalIgnoreCase);
        foreach (var (id, entity) in page)
        {
            results[id] = entity;
        }

        return results;
    }
}
