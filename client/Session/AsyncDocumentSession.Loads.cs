using System.Diagnostics.CodeAnalysis;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Queries;

namespace Jackdaw.Client.Session;

/// <summary>
/// Loads by id: the identity map first, then <c>GET /databases/{db}/docs?id=...</c> for the rest,
/// whose answer is tracked in place (the documents stay slices of the body).
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    // GET URLs stay well under common 8 KiB request-line limits; more ids go in further requests.
    private const int MaxLoadUrlLength = 6000;

    public async Task<T?> LoadAsync<T>(string id, CancellationToken token = default)
        where T : class
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        if (TryGetLocal<T>(id, out var local))
        {
            return local;
        }
        if (TrackIncluded(id, typeof(T)))
        {
            TryGetLocal<T>(id, out local);
            return local;
        }

        await LoadFromServerAsync<T>([id], null, token).ConfigureAwait(false);
        TryGetLocal<T>(id, out local);
        return local;
    }

    public Task<Dictionary<string, T?>> LoadAsync<T>(IEnumerable<string> ids, CancellationToken token = default)
        where T : class =>
        LoadAsync<T>(ids, null, token);

    /// <summary>A load of several ids, with the documents they reference at <paramref name="includes"/> when given.</summary>
    internal async Task<Dictionary<string, T?>> LoadAsync<T>(IEnumerable<string> ids, IncludePaths? includes, CancellationToken token)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(ids);
        var requested = ids.ToList();
        foreach (var id in requested)
        {
            ArgumentException.ThrowIfNullOrEmpty(id, nameof(ids));
        }

        var toFetch = IdsToFetch(requested, typeof(T), includes);
        var start = 0;
        while (start < toFetch.Count)
        {
            var count = 0;
            var length = _databasePath.Length + 6 + (includes?.QueryLength() ?? 0);
            while (start + count < toFetch.Count)
            {
                var escaped = Uri.EscapeDataString(toFetch[start + count]).Length + 4;
                if (count > 0 && length + escaped > MaxLoadUrlLength)
                {
                    break;
                }

                length += escaped;
                count++;
            }

            await LoadFromServerAsync<T>(toFetch.GetRange(start, count), includes, token).ConfigureAwait(false);
            start += count;
        }

        return LocalResults<T>(requested);
    }

    /// <summary>
    /// The ids a load must ask the server for, each once: not tracked, deleted or known missing,
    /// and not kept from a query's includes (those are tracked now, as <paramref name="type"/>).
    /// With <paramref name="includes"/>, a document the server has and the session holds is asked
    /// for again when it references (at those paths) an id the session knows nothing of: the
    /// answer brings the included documents (see <see cref="IncludesHeld"/>).
    /// </summary>
    internal List<string> IdsToFetch(IReadOnlyList<string> ids, Type type, IncludePaths? includes = null)
    {
        var toFetch = new List<string>();
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var id in ids)
        {
            if (!seen.Add(id) || _deletes.ContainsKey(id) || _knownMissing.Contains(id))
            {
                continue;
            }

            if (!_byId.TryGetValue(id, out var held) && !TrackIncluded(id, type))
            {
                toFetch.Add(id);
            }
            else if (includes is not null && (held ?? _byId.GetValueOrDefault(id)) is { } info && !IncludesHeld(info, includes))
            {
                toFetch.Add(id);
            }
        }

        return toFetch;
    }

    /// <summary>What the session holds for each id, after a load: the tracked entity, or null.</summary>
    internal Dictionary<string, T?> LocalResults<T>(IReadOnlyList<string> ids)
        where T : class
    {
        var results = new Dictionary<string, T?>(StringComparer.OrdinalIgnoreCase);
        foreach (var id in ids)
        {
            TryGetLocal<T>(id, out var entity);
            results[id] = entity;
        }

        return results;
    }

    /// <summary>Whether a load of <paramref name="id"/> would be answered without the server.</summary>
    internal bool IsKnownLocally(string id) =>
        _byId.ContainsKey(id) || _deletes.ContainsKey(id) || _knownMissing.Contains(id) || _included.ContainsKey(id);

    internal void RegisterMissing(string id) => _knownMissing.Add(id);

    /// <summary>The same for an answer inside a larger body, read where it lies (see <see cref="TrackResults{T}(ref Utf8JsonReader, ReadOnlyMemory{byte}, IReadOnlyList{string}, IncludePaths?)"/>).</summary>
    internal void TrackLoaded<T>(ref Utf8JsonReader reader, ReadOnlyMemory<byte> body, IReadOnlyList<string> ids, IncludePaths? includes)
        where T : class
    {
        try
        {
            TrackResults<T>(ref reader, body, ids, includes);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to GET docs is not JSON: {e.Message}", e);
        }
    }

    /// <summary>Tracks a GET docs answer for <paramref name="ids"/> (and what it includes at <paramref name="includes"/>), as a load does.</summary>
    internal void TrackLoaded<T>(ReadOnlyMemory<byte> body, IReadOnlyList<string> ids, IncludePaths? includes)
        where T : class
    {
        try
        {
            var reader = new Utf8JsonReader(body.Span);
            TrackResults<T>(ref reader, body, ids, includes);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to GET docs is not JSON: {e.Message}", e);
        }
    }

    private bool TryGetLocal<T>(string id, out T? entity)
        where T : class
    {
        entity = null;
        if (_deletes.ContainsKey(id) || _knownMissing.Contains(id))
        {
            return true;
        }
        if (!_byId.TryGetValue(id, out var info))
        {
            return false;
        }
        entity = info.Entity as T ?? throw new InvalidOperationException(
            $"Document '{info.Id}' is already loaded in this session as {info.Entity.GetType().FullName}, which is not a {typeof(T).FullName}.");
        return true;
    }

    private async Task LoadFromServerAsync<T>(List<string> ids, IncludePaths? includes, CancellationToken token)
        where T : class
    {
        string url;
        if (ids.Count == 1 && includes is null)
        {
            url = string.Concat(_databasePath, "/docs?id=", Uri.EscapeDataString(ids[0]));
        }
        else
        {
            var builder = new StringBuilder(_databasePath).Append("/docs");
            for (var i = 0; i < ids.Count; i++)
            {
                builder.Append(i == 0 ? "?id=" : "&id=").Append(Uri.EscapeDataString(ids[i]));
            }

            includes?.AppendQuery(builder);
            url = builder.ToString();
        }

        NumberOfRequests++;
        HttpResponseMessage response;
        try
        {
            response = await _store.Executor.SendAsync(HttpMethod.Get, url, null, null, _sessionInfo, token).ConfigureAwait(false);
        }
        catch (DocumentDoesNotExistException) when (ids.Count == 1)
        {
            _knownMissing.Add(ids[0]);
            return;
        }

        byte[] body;
        using (response)
        {
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }
        TrackLoaded<T>(body, ids, includes);
    }

    /// <summary>
    /// Walks GET docs' answer <c>{"Results":[document or null, ...],"Includes":{id: document},...}</c>
    /// with one reader, tracks each document and keeps the included ones for later loads; the
    /// documents keep slices of <paramref name="body"/>, not copies. An id the results reference at
    /// <paramref name="includes"/> that the answer did not include has no document: it is
    /// remembered as missing. <paramref name="reader"/> reads all of <paramref name="body"/> (an
    /// answer alone, or an item of a <c>multi_get</c>) and is on the answer's <c>{</c> (or before
    /// it, at the start); it is left on the answer's <c>}</c>.
    /// </summary>
    private void TrackResults<T>(ref Utf8JsonReader reader, ReadOnlyMemory<byte> body, IReadOnlyList<string> ids, IncludePaths? includes)
        where T : class
    {
        var count = -1;
        List<(string Id, Range? Document)>? included = null;
        List<Range>? loaded = includes is null ? null : [];
        if (reader.TokenType == JsonTokenType.None && !reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            ThrowUnexpectedDocsAnswer(body[(int)reader.TokenStartIndex..], ids.Count);
        }
        // Documents are kept as slices of body at the reader's offsets; errors quote the answer itself.
        var answer = body[(int)reader.TokenStartIndex..];
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var isResults = reader.ValueTextEquals("Results"u8);
            var isIncludes = reader.ValueTextEquals("Includes"u8);
            reader.Read();
            if (isIncludes)
            {
                // Most loads include nothing: "Includes":{} costs no list.
                var afterStart = reader;
                if (reader.TokenType == JsonTokenType.StartObject && afterStart.Read() && afterStart.TokenType == JsonTokenType.EndObject)
                {
                    reader = afterStart;
                    continue;
                }

                QueryAnswer.ReadIncludes(ref reader, included ??= []);
                continue;
            }

            if (!isResults || reader.TokenType != JsonTokenType.StartArray)
            {
                reader.Skip();
                continue;
            }

            count = 0;
            while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
            {
                if (count == ids.Count)
                {
                    ThrowUnexpectedDocsAnswer(answer, ids.Count);
                }
                var requestedId = ids[count++];
                if (reader.TokenType == JsonTokenType.Null)
                {
                    _knownMissing.Add(requestedId);
                }
                else if (reader.TokenType == JsonTokenType.StartObject)
                {
                    var start = (int)reader.TokenStartIndex;
                    Track(ref reader, body, requestedId, typeof(T));
                    loaded?.Add(start..(int)reader.BytesConsumed);
                }
                else
                {
                    ThrowUnexpectedDocsAnswer(answer, ids.Count);
                }
            }
        }

        if (count != ids.Count)
        {
            ThrowUnexpectedDocsAnswer(answer, ids.Count);
        }
        if (included is not null)
        {
            KeepIncludes(body, included);
        }
        if (includes is not null)
        {
            RegisterMissingIncludes(body, loaded!, includes);
        }
    }

    [DoesNotReturn]
    private static void ThrowUnexpectedDocsAnswer(ReadOnlyMemory<byte> body, int count)
    {
        var text = Encoding.UTF8.GetString(body.Span[..Math.Min(body.Length, 200)]);
        throw new JackdawException($"GET docs answered with {text}{(body.Length > 200 ? "..." : "")} instead of one result per id ({count}).");
    }
}
