using System.Text;
using System.Text.Json;
using Jackdaw.Client.Http;

namespace Jackdaw.Client.Session;

/// <summary>
/// A lazy load of one or more ids: <c>GET /docs?id=a&amp;id=b</c> for those the session does not
/// hold when the batch is sent (with <c>&amp;include=path</c> for each of <paramref name="includes"/>,
/// also those whose included documents it lacks), tracked as a load tracks them.
/// </summary>
internal sealed class LazyLoadOperation<T>(AsyncDocumentSession session, IReadOnlyList<string> ids, IncludePaths? includes = null) : LazyOperation<Dictionary<string, T?>>
    where T : class
{
    private List<string> _toFetch = [];

    public override GetRequest? CreateRequest()
    {
        _toFetch = session.IdsToFetch(ids, typeof(T), includes);
        if (_toFetch.Count == 0)
        {
            SetValue(session.LocalResults<T>(ids));
            return null;
        }

        // No URL length limit here: the ids travel in the multi_get body.
        var query = new StringBuilder();
        foreach (var id in _toFetch)
        {
            query.Append(query.Length == 0 ? "?id=" : "&id=").Append(Uri.EscapeDataString(id));
        }

        includes?.AppendQuery(query);

        return new GetRequest("/docs", query.ToString(), "GET", default);
    }

    protected override void HandleResponse(GetRequest request, int statusCode, ReadOnlyMemory<byte> result)
    {
        // One id the server does not have is a 404, as for a load.
        if (statusCode == 404 && _toFetch.Count == 1)
        {
            session.RegisterMissing(_toFetch[0]);
        }
        else
        {
            ThrowIfError(request, statusCode, result);
            session.TrackLoaded<T>(result, _toFetch, includes);
        }

        SetValue(session.LocalResults<T>(ids));
    }

    protected override void HandleResponse(GetRequest request, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body)
    {
        if (statusCode != 200)
        {
            base.HandleResponse(request, statusCode, ref reader, body);
            return;
        }

        session.TrackLoaded<T>(ref reader, body, _toFetch, includes);
        SetValue(session.LocalResults<T>(ids));
    }
}
