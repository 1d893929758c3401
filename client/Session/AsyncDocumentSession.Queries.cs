using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Jackdaw.Client.Json;
using Jackdaw.Client.Queries;
using Jackdaw.Client.Queries.Linq;

namespace Jackdaw.Client.Session;

/// <summary>
/// Queries: LINQ and raw RQL go through <see cref="QueryAsync{TResult}"/>, which tracks queried
/// documents exactly as loaded ones (same instance per id, change tracking from the bytes received)
/// and keeps included documents until a load asks for them.
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    /// <summary>Documents a query included, by id, as received; a load tracks one without a request.</summary>
    private readonly Dictionary<string, ReadOnlyMemory<byte>> _included = new(StringComparer.OrdinalIgnoreCase);

    public IJackdawQueryable<T> Query<T>(string? indexName = null, string? collectionName = null)
        where T : class
    {
        if (indexName is not null && collectionName is not null)
        {
            throw new ArgumentException("A query reads either an index or a collection; give indexName or collectionName, not both.", nameof(collectionName));
        }

        if (indexName is not null)
        {
            ArgumentException.ThrowIfNullOrWhiteSpace(indexName);
        }

        var from = indexName is not null
            ? "from index " + Rql.Quote(indexName)
            : "from " + Rql.Quote(collectionName ?? _conventions.GetEntityTypeInfo(typeof(T)).Collection);
        return new JackdawQueryable<T>(new JackdawQueryProvider(this, _conventions, from, typeof(T)));
    }

    public IJackdawQueryable<T> Query<T, TIndexCreator>()
        where T : class
        where TIndexCreator : AbstractJavaScriptIndexCreationTask, new() =>
        Query<T>(new TIndexCreator().IndexName);

    public IAsyncRawDocumentQuery<T> AsyncRawQuery<T>(string query)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(query);
        return new AsyncRawDocumentQuery<T>(this, query);
    }

    /// <summary>Sends one query and turns its results into objects as <paramref name="shape"/> says.</summary>
    internal async Task<QueryResult<TResult>> QueryAsync<TResult>(QueryRequest request, QueryResultShape shape, IReadOnlyList<QueryStatistics> statistics, CancellationToken token)
    {
        var body = request.ToJson(_conventions.SerializerOptions);
        NumberOfRequests++;
        byte[] answerBody;
        using (var response = await _store.Executor.SendAsync(HttpMethod.Post, _databasePath + "/queries", body, request.ServerWait, _sessionInfo, token).ConfigureAwait(false))
        {
            answerBody = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }

        var reader = new Utf8JsonReader(answerBody);
        return ReadQueryAnswer<TResult>(answerBody, ref reader, shape, statistics);
    }

    /// <summary>
    /// A query's answer (a response body, or an item of a <c>multi_get</c>: <paramref name="reader"/>
    /// over all of <paramref name="buffer"/>, before the answer's first token) as objects, in one pass:
    /// each result is deserialized as the reader reaches it, then statistics are filled, includes
    /// kept, and documents tracked unless <paramref name="shape"/> says otherwise. The results are
    /// tracked before the answer's includes are kept, so an included document that is also a result
    /// is the tracked one.
    /// </summary>
    internal QueryResult<TResult> ReadQueryAnswer<TResult>(ReadOnlyMemory<byte> buffer, ref Utf8JsonReader reader, QueryResultShape shape, IReadOnlyList<QueryStatistics> statistics)
    {
        var results = new List<TResult>();
        var answer = QueryAnswer.Parse(buffer, ref reader, (ref Utf8JsonReader result, ReadOnlyMemory<byte> body) => results.Add(ReadResult<TResult>(ref result, body, shape)));
        foreach (var target in statistics)
        {
            answer.FillStatistics(target);
        }

        if (shape.Mode != QueryResultMode.NoTracking)
        {
            KeepIncludes(answer.Body, answer.Includes);
        }

        return new QueryResult<TResult>(results, answer.TotalResults);
    }

    /// <summary>
    /// Reads the result whose first token <paramref name="reader"/> (over <paramref name="buffer"/>)
    /// is on and leaves the reader on its last token. A document of an object type is deserialized
    /// straight from the reader, and its <c>@metadata</c> (which the server writes last) found from
    /// the end of its bytes, which decides whether it is a projection, its id and its stored type;
    /// only a stored subtype is deserialized again. Projections and other types are read from the
    /// result's bytes.
    /// </summary>
    private TResult ReadResult<TResult>(ref Utf8JsonReader reader, ReadOnlyMemory<byte> buffer, QueryResultShape shape)
    {
        var start = (int)reader.TokenStartIndex;
        var entityType = shape.EntityType ?? typeof(TResult);
        if (shape.Mode == QueryResultMode.Projection || _conventions.SerializerOptions.GetTypeInfo(entityType).Kind != JsonTypeInfoKind.Object)
        {
            reader.Skip();
            return Materialize<TResult>(buffer[start..(int)reader.BytesConsumed], shape);
        }

        var requested = _conventions.GetEntityTypeInfo(entityType);
        var entity = DeserializeFromReader(ref reader, entityType, requested);
        var result = buffer[start..(int)reader.BytesConsumed];
        var hasMetadata = LoadedMetadataReader.TryRead(result.Span, "", requested.ClrTypeNameUtf8, out var metadata);
        // As IsProjection says: marked @projection, or @metadata without @id; without @metadata, a raw query's result is one.
        var isProjection = hasMetadata ? metadata.IsProjection || metadata.Id is null : shape.Mode == QueryResultMode.Auto;
        if (shape.Mode != QueryResultMode.NoTracking && !isProjection)
        {
            return (TResult)Track(entity, result, hasMetadata, metadata, "", entityType, requested, out _);
        }

        var type = metadata.Id is null || metadata.IsRequestedType ? requested : _conventions.GetEntityTypeInfo(ResolveType(entityType, metadata.Id, metadata.ClrTypeName));
        if (entity is null || type != requested)
        {
            entity = Deserialize(result.Span, type, metadata.Id ?? "(query result)");
        }

        if (metadata.Id is not null)
        {
            type.SetId?.Invoke(entity, metadata.Id);
        }

        return (TResult)entity;
    }

    private TResult Materialize<TResult>(ReadOnlyMemory<byte> result, QueryResultShape shape)
    {
        switch (shape.Mode)
        {
            case QueryResultMode.Projection:
                return ProjectionReader.Read<TResult>(result, shape.Projection!, _conventions.SerializerOptions);
            case QueryResultMode.NoTracking:
            case QueryResultMode.Auto when IsProjection(result.Span, withoutMetadata: true):
            // A map-reduce result row (its @metadata has no @id) is no document: as in RavenDB, not tracked.
            case QueryResultMode.Track when IsProjection(result.Span, withoutMetadata: false):
                return ReadUntracked<TResult>(result.Span, shape.EntityType ?? typeof(TResult));
            default:
                var reader = new Utf8JsonReader(result.Span);
                reader.Read();
                try
                {
                    return (TResult)Track(ref reader, result, "", shape.EntityType ?? typeof(TResult));
                }
                catch (JsonException e)
                {
                    throw new JackdawException($"A query result cannot be read as a {typeof(TResult).Name}: {e.Message}", e);
                }
        }
    }

    /// <summary>A document or projection deserialized on its own, with the id property set from <c>@metadata.@id</c> when it has one.</summary>
    private TResult ReadUntracked<TResult>(ReadOnlySpan<byte> result, Type entityType)
    {
        var typeInfo = _conventions.SerializerOptions.GetTypeInfo(entityType);
        if (typeInfo.Kind != System.Text.Json.Serialization.Metadata.JsonTypeInfoKind.Object)
        {
            return JsonSerializer.Deserialize<TResult>(result, _conventions.SerializerOptions)!;
        }

        var requested = _conventions.GetEntityTypeInfo(entityType);
        LoadedMetadataReader.TryRead(result, "", requested.ClrTypeNameUtf8, out var metadata);
        var type = metadata.Id is null || metadata.IsRequestedType ? requested : _conventions.GetEntityTypeInfo(ResolveType(entityType, metadata.Id, metadata.ClrTypeName));
        var entity = Deserialize(result, type, metadata.Id ?? "(query result)");
        if (metadata.Id is not null)
        {
            type.SetId?.Invoke(entity, metadata.Id);
        }

        return (TResult)entity;
    }

    /// <summary>
    /// Whether a query's result is a projection: marked <c>@projection</c> by the server, or with
    /// <c>@metadata</c> but no <c>@id</c> (a map-reduce row); <paramref name="withoutMetadata"/> is
    /// the answer for a result with no <c>@metadata</c> object.
    /// </summary>
    private static bool IsProjection(ReadOnlySpan<byte> result, bool withoutMetadata)
    {
        var reader = new Utf8JsonReader(result);
        reader.Read();
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var isMetadata = reader.ValueTextEquals(MetadataKeys.Metadata);
            reader.Read();
            if (!isMetadata || reader.TokenType != JsonTokenType.StartObject)
            {
                reader.Skip();
                continue;
            }

            var hasId = false;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var isProjection = reader.ValueTextEquals("@projection"u8);
                hasId |= reader.ValueTextEquals(MetadataKeys.Id);
                reader.Read();
                if (isProjection && reader.TokenType == JsonTokenType.True)
                {
                    return true;
                }

                reader.Skip();
            }

            return !hasId;
        }

        return withoutMetadata;
    }

    /// <summary>
    /// Keeps the documents a query or a load included (ranges of <paramref name="body"/>) for later
    /// loads; an included id with no document is remembered as missing.
    /// </summary>
    private void KeepIncludes(ReadOnlyMemory<byte> body, List<(string Id, Range? Document)> includes)
    {
        foreach (var (id, document) in includes)
        {
            if (_byId.ContainsKey(id) || _deletes.ContainsKey(id))
            {
                continue;
            }

            if (document is { } range)
            {
                _included[id] = body[range];
                _knownMissing.Remove(id);
            }
            else
            {
                _knownMissing.Add(id);
            }
        }
    }

    /// <summary>Tracks a document a query included, if one is kept for <paramref name="id"/>; false when none is.</summary>
    private bool TrackIncluded(string id, Type type)
    {
        if (!_included.Remove(id, out var document))
        {
            return false;
        }

        var reader = new Utf8JsonReader(document.Span);
        reader.Read();
        Track(ref reader, document, id, type);
        return true;
    }
}
