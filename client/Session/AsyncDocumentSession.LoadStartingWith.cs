using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Jackdaw.Client.Session;

/// <summary>
/// Loads by id prefix (RavenDB's <c>LoadStartingWith</c>): <c>GET /databases/{db}/docs?startsWith=</c>
/// with <c>matches</c>, <c>exclude</c>, <c>startAfter</c>, <c>start</c> and <c>pageSize</c>. The page
/// comes in id order and its documents join the session as loaded ones do.
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    public async Task<IEnumerable<T>> LoadStartingWithAsync<T>(string idPrefix, string? matches = null, int start = 0, int pageSize = 25, string? exclude = null, string? startAfter = null, CancellationToken token = default)
        where T : class
    {
        var query = StartingWithQuery(idPrefix, matches, start, pageSize, exclude, startAfter);
        NumberOfRequests++;
        byte[] body;
        using (var response = await _store.Executor.SendAsync(HttpMethod.Get, _databasePath + "/docs" + query, null, null, _sessionInfo, token).ConfigureAwait(false))
        {
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }

        var reader = new Utf8JsonReader(body);
        return [.. TrackPage<T>(ref reader, body).Select(result => result.Entity)];
    }

    /// <summary>The query of a load by prefix, from <c>?</c>; the arguments are checked here, before any request.</summary>
    internal static string StartingWithQuery(string idPrefix, string? matches, int start, int pageSize, string? exclude, string? startAfter)
    {
        // An empty prefix would page through every document by etag, where the server applies no filter.
        ArgumentException.ThrowIfNullOrEmpty(idPrefix);
        ArgumentOutOfRangeException.ThrowIfNegative(start);
        ArgumentOutOfRangeException.ThrowIfNegative(pageSize);
        var query = new StringBuilder("?startsWith=").Append(Uri.EscapeDataString(idPrefix));
        AppendIfGiven(query, "&matches=", matches);
        AppendIfGiven(query, "&exclude=", exclude);
        AppendIfGiven(query, "&startAfter=", startAfter);
        return query
            .Append("&start=").Append(start.ToString(CultureInfo.InvariantCulture))
            .Append("&pageSize=").Append(pageSize.ToString(CultureInfo.InvariantCulture))
            .ToString();
    }

    /// <summary>
    /// Tracks each document of a page answer <c>{"Results":[document, ...],...}</c> as a load does and
    /// returns them in order with their ids. A document the session holds already gives the held
    /// instance; one it deletes at its next save is given as stored, untracked (as a query gives it).
    /// <paramref name="reader"/> reads all of <paramref name="body"/> and is on the answer's <c>{</c>
    /// (or before it, at the start); it is left on the answer's <c>}</c>.
    /// </summary>
    internal List<(string Id, T Entity)> TrackPage<T>(ref Utf8JsonReader reader, ReadOnlyMemory<byte> body)
        where T : class
    {
        var start = reader.TokenType == JsonTokenType.None ? 0 : (int)reader.TokenStartIndex;
        var results = new List<(string Id, T Entity)>();
        try
        {
            if ((reader.TokenType == JsonTokenType.None && !reader.Read()) || reader.TokenType != JsonTokenType.StartObject)
            {
                ThrowUnexpectedPage(body[start..]);
            }

            var sawResults = false;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var isResults = reader.ValueTextEquals("Results"u8);
                reader.Read();
                if (!isResults || reader.TokenType != JsonTokenType.StartArray)
                {
                    reader.Skip();
                    continue;
                }

                sawResults = true;
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    if (reader.TokenType != JsonTokenType.StartObject)
                    {
                        ThrowUnexpectedPage(body[start..]);
                    }

                    var entity = (T)Track(ref reader, body, "", typeof(T), out var id);
                    results.Add((id, entity));
                }
            }

            if (!sawResults)
            {
                ThrowUnexpectedPage(body[start..]);
            }
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to GET docs?startsWith is not JSON: {e.Message}", e);
        }

        return results;
    }

    private static void AppendIfGiven(StringBuilder query, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            query.Append(name).Append(Uri.EscapeDataString(value));
        }
    }

    [DoesNotReturn]
    private static void ThrowUnexpectedPage(ReadOnlyMemory<byte> answer)
    {
        var text = Encoding.UTF8.GetString(answer.Span[..Math.Min(answer.Length, 200)]);
        throw new JackdawException($"GET docs?startsWith answered with {text}{(answer.Length > 200 ? "..." : "")} instead of {{\"Results\":[documents]}}.");
    }
}
