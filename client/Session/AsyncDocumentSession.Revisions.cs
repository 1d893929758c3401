using System.Globalization;
using System.Net;
using System.Text.Json;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Session;

/// <summary>
/// The session's side of revisions: the ids to force a revision of at the next save, and the
/// revisions it read (kept by entity, apart from the tracked documents, so that their metadata and
/// change vector can be asked for while a save never sends them). Revisions are read with
/// <c>GET /databases/{db}/revisions</c>, answered as GET docs is: <c>{"Results":[...]}</c>.
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    private readonly Dictionary<string, ForceRevisionStrategy> _forceRevisions = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<object, DocumentInfo> _revisions = new(ReferenceEqualityComparer.Instance);
    private SessionRevisions? _revisionOperations;

    public IRevisionsSessionOperations Revisions => _revisionOperations ??= new SessionRevisions(this);

    internal void ForceRevision(string id, ForceRevisionStrategy strategy)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        if (_forceRevisions.TryGetValue(id, out var existing))
        {
            if (existing != strategy)
            {
                throw new InvalidOperationException($"A revision of '{id}' is already to be forced by this session with strategy {existing}; it cannot be asked for again with {strategy}.");
            }
            return;
        }

        _forceRevisions[id] = strategy;
    }

    internal string IdForForcedRevision(object entity)
    {
        ArgumentNullException.ThrowIfNull(entity);
        if (!_byEntity.TryGetValue(entity, out var info))
        {
            throw new InvalidOperationException($"Cannot create a revision of this {entity.GetType().Name}: it is not tracked by the session.");
        }
        return info.Id ?? throw new InvalidOperationException($"Cannot create a revision of this {entity.GetType().Name}: it has no id yet (the server generates it at the save). Save it first.");
    }

    /// <summary>
    /// Sends <c>GET revisions{query}</c> and answers the body and where each of its results lies in it
    /// (null for a null result); no results when the server answers 404 (nothing of that id or change vector).
    /// </summary>
    internal async Task<(byte[] Body, List<Range?> Results)> GetRevisionsAsync(string query, CancellationToken token)
    {
        NumberOfRequests++;
        HttpResponseMessage response;
        try
        {
            response = await _store.Executor.SendAsync(HttpMethod.Get, _databasePath + "/revisions" + query, null, null, _sessionInfo, token).ConfigureAwait(false);
        }
        catch (JackdawException e) when (e.StatusCode == HttpStatusCode.NotFound && e is not DatabaseDoesNotExistException)
        {
            return ([], []);
        }

        byte[] body;
        using (response)
        {
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }
        return (body, FindResults(body));
    }

    internal async Task<long> GetRevisionsCountAsync(string id, CancellationToken token)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        NumberOfRequests++;
        var response = await _store.Executor.SendAsync(HttpMethod.Get, _databasePath + "/revisions/count?id=" + Uri.EscapeDataString(id), null, null, _sessionInfo, token).ConfigureAwait(false);
        using var json = await ReadJsonAsync(response, "GET revisions/count", token).ConfigureAwait(false);
        return json.RootElement.TryGetProperty("RevisionsCount", out var count) && count.TryGetInt64(out var value)
            ? value
            : throw new JackdawException($"GET revisions/count answered {Describe(json.RootElement)} without a \"RevisionsCount\".");
    }

    /// <summary>
    /// A revision as an entity of <typeparamref name="T"/> (or of the subtype its <c>Jackdaw-Clr-Type</c>
    /// names), with the id property set; kept for its metadata, never saved.
    /// </summary>
    internal T ReadRevision<T>(ReadOnlyMemory<byte> document)
        where T : class
    {
        var requested = _conventions.GetEntityTypeInfo(typeof(T));
        if (!LoadedMetadataReader.TryRead(document.Span, "", requested.ClrTypeNameUtf8, out var metadata))
        {
            throw new JackdawException("A revision came without @metadata.");
        }
        var id = metadata.Id ?? "(revision)";
        var type = metadata.IsRequestedType ? requested : _conventions.GetEntityTypeInfo(ResolveType(typeof(T), id, metadata.ClrTypeName));
        var entity = Deserialize(document.Span, type, id);
        if (metadata.Id is not null)
        {
            type.SetId?.Invoke(entity, metadata.Id);
        }
        _revisions[entity] = new DocumentInfo(entity, type)
        {
            Id = metadata.Id,
            ChangeVector = metadata.ChangeVector,
            LastModified = metadata.LastModified,
            LoadedMetadata = document.Slice(metadata.Offset, metadata.Length),
        };
        return (T)entity;
    }

    /// <summary>A metadata-only result: its <c>@metadata</c> object (or the result itself, if it is the metadata).</summary>
    internal static MetadataDictionary ReadRevisionMetadata(ReadOnlyMemory<byte> result)
    {
        using var json = JsonDocument.Parse(result);
        var root = json.RootElement;
        return new MetadataDictionary(root.TryGetProperty(MetadataKeys.Metadata, out var metadata) && metadata.ValueKind == JsonValueKind.Object ? metadata : root);
    }

    /// <summary>RavenDB's clients send a date as UTC with seven decimals; a local time is converted, an unspecified one taken as UTC.</summary>
    internal static string FormatDate(DateTime date)
    {
        var utc = date.Kind == DateTimeKind.Local ? date.ToUniversalTime() : DateTime.SpecifyKind(date, DateTimeKind.Utc);
        return utc.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", CultureInfo.InvariantCulture);
    }

    /// <summary>Where each item of the answer's <c>Results</c> array lies in <paramref name="body"/>.</summary>
    internal static List<Range?> FindResults(ReadOnlySpan<byte> body)
    {
        try
        {
            var reader = new Utf8JsonReader(body);
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                throw new JsonException("the answer is not an object");
            }
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var isResults = reader.ValueTextEquals("Results"u8);
                reader.Read();
                if (!isResults || reader.TokenType != JsonTokenType.StartArray)
                {
                    reader.Skip();
                    continue;
                }

                var results = new List<Range?>();
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    if (reader.TokenType == JsonTokenType.Null)
                    {
                        results.Add(null);
                        continue;
                    }

                    if (reader.TokenType != JsonTokenType.StartObject)
                    {
                        throw new JsonException($"a result is a {reader.TokenType}, not an object");
                    }
                    var start = (int)reader.TokenStartIndex;
                    reader.Skip();
                    results.Add(start..(int)reader.BytesConsumed);
                }

                return results;
            }

            throw new JsonException("it has no \"Results\" array");
        }
        catch (JsonException e)
        {
            var text = System.Text.Encoding.UTF8.GetString(body[..Math.Min(body.Length, 200)]);
            throw new JackdawException($"GET revisions answered {text}{(body.Length > 200 ? "..." : "")}, which cannot be read: {e.Message}", e);
        }
    }
}
