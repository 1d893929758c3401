using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Conventions;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Session;

/// <summary>
/// The unit of work: identity map, change tracking by serialized snapshot, one transaction per save.
/// A load keeps the document's bytes instead of serializing the entity again: a comparison first
/// checks the entity's JSON against those bytes and rebuilds the snapshot from them only when they differ.
/// </summary>
internal sealed partial class AsyncDocumentSession : IAsyncDocumentSession, IAdvancedSessionOperations
{
    // GET URLs stay well under common 8 KiB request-line limits; more ids go in further requests.
    private const int MaxLoadUrlLength = 6000;

    private readonly DocumentStore _store;
    private readonly DocumentConventions _conventions;
    private readonly string _databasePath;
    private readonly Dictionary<string, DocumentInfo> _byId = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<object, DocumentInfo> _byEntity = new(ReferenceEqualityComparer.Instance);
    private readonly HashSet<string> _knownMissing = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, string?> _deletes = new(StringComparer.OrdinalIgnoreCase);
    private ArrayBufferWriter<byte>? _documentScratch;
    private EntityJsonBuffer? _current;
    private EntityJsonBuffer? _rebuilt;

    public AsyncDocumentSession(DocumentStore store, string database, bool useOptimisticConcurrency)
    {
        _store = store;
        _conventions = store.Conventions;
        _databasePath = DocumentStore.DatabasePath(database);
        UseOptimisticConcurrency = useOptimisticConcurrency;
    }

    public IAdvancedSessionOperations Advanced => this;

    internal DocumentConventions Conventions => _conventions;

    public bool UseOptimisticConcurrency { get; set; }

    private string _saveQuery = "";

    public void WaitForIndexesAfterSaveChanges(TimeSpan? timeout = null, bool throwOnTimeout = true, params string[] indexes)
    {
        var query = new System.Text.StringBuilder("?waitForIndexesTimeout=")
            .Append(Uri.EscapeDataString((timeout ?? TimeSpan.FromSeconds(15)).ToString("c", System.Globalization.CultureInfo.InvariantCulture)))
            .Append("&waitForIndexThrow=").Append(throwOnTimeout ? "true" : "false");
        foreach (var index in indexes ?? [])
            query.Append("&waitForSpecificIndex=").Append(Uri.EscapeDataString(index));
        _saveQuery = query.ToString();
    }

    public int NumberOfRequests { get; private set; }

    public bool HasChanges => _deletes.Count > 0 || _byEntity.Values.Any(HasChanged);

    public async Task<T?> LoadAsync<T>(string id, CancellationToken token = default)
        where T : class
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        if (TryGetLocal<T>(id, out var local))
            return local;
        if (TrackIncluded(id, typeof(T)))
        {
            TryGetLocal<T>(id, out local);
            return local;
        }

        await LoadFromServerAsync<T>([id], token).ConfigureAwait(false);
        TryGetLocal<T>(id, out local);
        return local;
    }

    public async Task<Dictionary<string, T?>> LoadAsync<T>(IEnumerable<string> ids, CancellationToken token = default)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(ids);
        var requested = ids.ToList();
        foreach (var id in requested)
            ArgumentException.ThrowIfNullOrEmpty(id, nameof(ids));
        var toFetch = IdsToFetch(requested, typeof(T));

        var start = 0;
        while (start < toFetch.Count)
        {
            var count = 0;
            var length = _databasePath.Length + 6;
            while (start + count < toFetch.Count)
            {
                var escaped = Uri.EscapeDataString(toFetch[start + count]).Length + 4;
                if (count > 0 && length + escaped > MaxLoadUrlLength)
                    break;
                length += escaped;
                count++;
            }

            await LoadFromServerAsync<T>(toFetch.GetRange(start, count), token).ConfigureAwait(false);
            start += count;
        }

        return LocalResults<T>(requested);
    }

    /// <summary>
    /// The ids a load must ask the server for, each once: not tracked, deleted or known missing,
    /// and not kept from a query's includes (those are tracked now, as <paramref name="type"/>).
    /// </summary>
    internal List<string> IdsToFetch(IReadOnlyList<string> ids, Type type)
    {
        var toFetch = new List<string>();
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var id in ids)
        {
            if (seen.Add(id) && !_deletes.ContainsKey(id) && !_byId.ContainsKey(id) && !_knownMissing.Contains(id) && !TrackIncluded(id, type))
                toFetch.Add(id);
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

    /// <summary>The same for an answer inside a larger body, read where it lies (see <see cref="TrackResults{T}(ref Utf8JsonReader, ReadOnlyMemory{byte}, IReadOnlyList{string})"/>).</summary>
    internal void TrackLoaded<T>(ref Utf8JsonReader reader, ReadOnlyMemory<byte> body, IReadOnlyList<string> ids)
        where T : class
    {
        try
        {
            TrackResults<T>(ref reader, body, ids);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to GET docs is not JSON: {e.Message}", e);
        }
    }

    /// <summary>Tracks a GET docs answer for <paramref name="ids"/>, as a load does.</summary>
    internal void TrackLoaded<T>(ReadOnlyMemory<byte> body, IReadOnlyList<string> ids)
        where T : class
    {
        try
        {
            TrackResults<T>(body, ids);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to GET docs is not JSON: {e.Message}", e);
        }
    }

    public Task StoreAsync(object entity, CancellationToken token = default) => StoreAsync(entity, null, null, token);

    public Task StoreAsync(object entity, string? id, CancellationToken token = default) => StoreAsync(entity, null, id, token);

    public Task StoreAsync(object entity, string? changeVector, string? id, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(entity);
        token.ThrowIfCancellationRequested();
        if (_byEntity.TryGetValue(entity, out var tracked))
        {
            if (id is not null && !string.Equals(id, tracked.Id ?? tracked.IdPrefix, StringComparison.OrdinalIgnoreCase))
                throw new InvalidOperationException($"This entity is already tracked by the session as '{tracked.Id ?? tracked.IdPrefix}'; it cannot be stored again as '{id}'.");
            if (changeVector is not null)
                tracked.ExpectedChangeVector = changeVector;
            return Task.CompletedTask;
        }

        var type = _conventions.GetEntityTypeInfo(entity.GetType());
        if (string.IsNullOrEmpty(id))
            id = type.GetId?.Invoke(entity);
        if (string.IsNullOrEmpty(id))
            id = type.IdPrefix;

        var info = new DocumentInfo(entity, type) { ExpectedChangeVector = changeVector };
        if (id.EndsWith('/') || id.EndsWith('|'))
        {
            info.IdPrefix = id;
        }
        else
        {
            if (_byId.TryGetValue(id, out var other))
                throw new InvalidOperationException($"The session already tracks a different object with id '{other.Id}'; evict it first or load and change that one.");
            info.Id = id;
            type.SetId?.Invoke(entity, id);
            _byId[id] = info;
            _knownMissing.Remove(id);
            _deletes.Remove(id);
        }

        _byEntity[entity] = info;
        return Task.CompletedTask;
    }

    public void Delete<T>(T entity)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(entity);
        if (!_byEntity.TryGetValue(entity, out var info))
            throw new InvalidOperationException($"This {entity.GetType().Name} is not tracked by the session; load it first or use Delete(id).");
        Untrack(info);
        if (info.Id is not null)
            _deletes[info.Id] = info.ExpectedChangeVector ?? (UseOptimisticConcurrency ? info.ChangeVector : null);
    }

    public void Delete(string id) => Delete(id, null);

    public void Delete(string id, string? changeVector)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        if (_byId.TryGetValue(id, out var info))
        {
            Untrack(info);
            changeVector ??= info.ExpectedChangeVector ?? (UseOptimisticConcurrency ? info.ChangeVector : null);
        }

        _deletes[id] = changeVector;
    }

    public async Task SaveChangesAsync(CancellationToken token = default)
    {
        token.ThrowIfCancellationRequested();
        var body = new ArrayBufferWriter<byte>(4096);
        var pending = new List<(DocumentInfo Info, byte[] Snapshot)>();
        var deletes = new List<string>();
        using (var writer = new Utf8JsonWriter(body, WriterOptions))
        {
            writer.WriteStartObject();
            writer.WriteStartArray("Commands");
            foreach (var (id, changeVector) in _deletes)
            {
                writer.WriteStartObject();
                writer.WriteString("Type", "DELETE");
                writer.WriteString("Id", id);
                WriteChangeVector(writer, changeVector);
                writer.WriteEndObject();
                deletes.Add(id);
            }

            foreach (var info in _byEntity.Values)
            {
                var current = Serialize(info);
                if (info.Metadata?.IsDirty != true && MatchesSnapshot(info, current))
                    continue;
                writer.WriteStartObject();
                writer.WriteString("Type", "PUT");
                writer.WriteString("Id", info.Id ?? info.IdPrefix);
                writer.WritePropertyName("Document");
                _documentScratch ??= new ArrayBufferWriter<byte>(1024);
                DocumentJson.WriteDocument(writer, _documentScratch, current, info.Type, info.LoadedMetadata.Span, info.Metadata, _conventions.SerializerOptions);
                WriteChangeVector(writer, info.ExpectedChangeVector ?? (UseOptimisticConcurrency ? info.ChangeVector : null));
                writer.WriteEndObject();
                pending.Add((info, current.ToArray()));
            }

            writer.WriteEndArray();
            writer.WriteEndObject();
        }

        if (deletes.Count == 0 && pending.Count == 0)
            return;

        NumberOfRequests++;
        var response = await _store.Executor.SendAsync(HttpMethod.Post, _databasePath + "/bulk_docs" + _saveQuery, body.WrittenMemory, token).ConfigureAwait(false);
        using var json = await ReadJsonAsync(response, "bulk_docs", token).ConfigureAwait(false);
        if (!json.RootElement.TryGetProperty("Results", out var results) || results.ValueKind != JsonValueKind.Array || results.GetArrayLength() != deletes.Count + pending.Count)
            throw new JackdawException($"bulk_docs answered with {Describe(json.RootElement)} instead of one result per command ({deletes.Count + pending.Count}).");

        // The transaction is committed: from here on only the session's bookkeeping changes.
        var index = 0;
        foreach (var result in results.EnumerateArray())
        {
            if (index < deletes.Count)
            {
                _deletes.Remove(deletes[index]);
                _knownMissing.Add(deletes[index]);
            }
            else
            {
                var (info, snapshot) = pending[index - deletes.Count];
                ApplyPutResult(info, snapshot, result);
            }

            index++;
        }
    }

    public string? GetChangeVectorFor(object entity) => GetInfo(entity).ChangeVector;

    public string? GetDocumentId(object entity) => GetInfo(entity).Id;

    public MetadataDictionary GetMetadataFor(object entity)
    {
        var info = GetInfo(entity);
        if (info.Metadata is null)
        {
            using (var loaded = !info.LoadedMetadata.IsEmpty ? JsonDocument.Parse(info.LoadedMetadata) : null)
                info.Metadata = new MetadataDictionary(loaded?.RootElement, info.Type.Collection, info.Type.ClrTypeName);
            if (info.Id is not null)
                info.Metadata.SetServerValue(MetadataKeys.Id, info.Id);
            if (info.ChangeVector is not null)
                info.Metadata.SetServerValue(MetadataKeys.ChangeVector, info.ChangeVector);
            if (info.LastModified is not null)
                info.Metadata.SetServerValue(MetadataKeys.LastModified, info.LastModified);
        }

        return info.Metadata;
    }

    public bool IsLoaded(string id) => _byId.ContainsKey(id) || _included.ContainsKey(id);

    public bool HasChanged(object entity) => HasChanged(GetInfo(entity));

    public void Evict(object entity)
    {
        if (_byEntity.TryGetValue(entity, out var info))
            Untrack(info);
    }

    public void Clear()
    {
        _byId.Clear();
        _byEntity.Clear();
        _knownMissing.Clear();
        _deletes.Clear();
        _included.Clear();
    }

    public void Dispose()
    {
        _current?.Dispose();
        _current = null;
        _rebuilt?.Dispose();
        _rebuilt = null;
    }

    private static JsonWriterOptions WriterOptions => new() { SkipValidation = true };

    private bool HasChanged(DocumentInfo info) =>
        (info.Snapshot is null && info.LoadedDocument.IsEmpty) || info.Metadata?.IsDirty == true || !MatchesSnapshot(info, Serialize(info));

    /// <summary>
    /// Whether <paramref name="current"/> (the entity's JSON now) equals its snapshot. A loaded
    /// entity has none until needed: JSON equal to the loaded document's (less id and metadata) is
    /// unchanged as it stands; otherwise the snapshot is rebuilt as the load would have taken it,
    /// by deserializing the loaded bytes again, and compared. That assumes deserializing the same
    /// bytes twice gives equal entities: a type whose constructor gives a property a fresh value
    /// (a new Guid, the current time) that the stored document lacks counts as changed.
    /// </summary>
    private bool MatchesSnapshot(DocumentInfo info, ReadOnlySpan<byte> current)
    {
        if (info.Snapshot is { } snapshot)
            return current.SequenceEqual(snapshot);
        if (info.LoadedDocument.IsEmpty)
            return false;
        if (DocumentJson.MatchesStored(current, info.Type, info.Id, info.LoadedDocument.Span, info.LoadedMetadataProperty))
            return true;

        var loaded = JsonSerializer.Deserialize(info.LoadedDocument.Span, info.Type.JsonTypeInfo) ?? throw new JackdawException($"Document '{info.Id}' deserialized to null.");
        info.Type.SetId?.Invoke(loaded, info.Id);
        _rebuilt ??= new EntityJsonBuffer(_conventions.SerializerOptions);
        info.Snapshot = _rebuilt.Serialize(loaded, info.Type.JsonTypeInfo).ToArray();
        info.LoadedDocument = default;
        return current.SequenceEqual(info.Snapshot);
    }

    private bool TryGetLocal<T>(string id, out T? entity)
        where T : class
    {
        entity = null;
        if (_deletes.ContainsKey(id) || _knownMissing.Contains(id))
            return true;
        if (!_byId.TryGetValue(id, out var info))
            return false;
        entity = info.Entity as T ?? throw new InvalidOperationException(
            $"Document '{info.Id}' is already loaded in this session as {info.Entity.GetType().FullName}, which is not a {typeof(T).FullName}.");
        return true;
    }

    private async Task LoadFromServerAsync<T>(List<string> ids, CancellationToken token)
        where T : class
    {
        string url;
        if (ids.Count == 1)
        {
            url = string.Concat(_databasePath, "/docs?id=", Uri.EscapeDataString(ids[0]));
        }
        else
        {
            var builder = new StringBuilder(_databasePath).Append("/docs");
            for (var i = 0; i < ids.Count; i++)
                builder.Append(i == 0 ? "?id=" : "&id=").Append(Uri.EscapeDataString(ids[i]));
            url = builder.ToString();
        }

        NumberOfRequests++;
        HttpResponseMessage response;
        try
        {
            response = await _store.Executor.SendAsync(HttpMethod.Get, url, null, token).ConfigureAwait(false);
        }
        catch (DocumentDoesNotExistException) when (ids.Count == 1)
        {
            _knownMissing.Add(ids[0]);
            return;
        }

        byte[] body;
        using (response)
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        TrackLoaded<T>(body, ids);
    }

    /// <summary>
    /// Walks GET docs' answer <c>{"Results":[document or null, ...],...}</c> with one reader and
    /// tracks each document; the tracked documents keep slices of <paramref name="body"/>, not copies.
    /// </summary>
    private void TrackResults<T>(ReadOnlyMemory<byte> body, IReadOnlyList<string> ids)
        where T : class
    {
        var reader = new Utf8JsonReader(body.Span);
        TrackResults<T>(ref reader, body, ids);
    }

    /// <summary>
    /// The same for an answer inside a larger body (an item of a <c>multi_get</c>): <paramref name="reader"/>
    /// reads all of <paramref name="body"/> and is on the answer's <c>{</c> (or before it, at the
    /// start); it is left on the answer's <c>}</c>.
    /// </summary>
    private void TrackResults<T>(ref Utf8JsonReader reader, ReadOnlyMemory<byte> body, IReadOnlyList<string> ids)
        where T : class
    {
        var count = -1;
        if (reader.TokenType == JsonTokenType.None && !reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            ThrowUnexpectedDocsAnswer(body[(int)reader.TokenStartIndex..], ids.Count);
        // Documents are kept as slices of body at the reader's offsets; errors quote the answer itself.
        var answer = body[(int)reader.TokenStartIndex..];
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var isResults = reader.ValueTextEquals("Results"u8);
            reader.Read();
            if (!isResults || reader.TokenType != JsonTokenType.StartArray)
            {
                reader.Skip();
                continue;
            }

            count = 0;
            while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
            {
                if (count == ids.Count)
                    ThrowUnexpectedDocsAnswer(answer, ids.Count);
                var requestedId = ids[count++];
                if (reader.TokenType == JsonTokenType.Null)
                    _knownMissing.Add(requestedId);
                else if (reader.TokenType == JsonTokenType.StartObject)
                    Track(ref reader, body, requestedId, typeof(T));
                else
                    ThrowUnexpectedDocsAnswer(answer, ids.Count);
            }
        }

        if (count != ids.Count)
            ThrowUnexpectedDocsAnswer(answer, ids.Count);
    }

    /// <summary>
    /// Tracks the document whose <c>{</c> <paramref name="reader"/> (reading <paramref name="buffer"/>)
    /// is on, moves the reader past its <c>}</c> and returns its entity; an id the session tracks
    /// already returns the tracked instance. A concrete <paramref name="requested"/> type is
    /// deserialized first, straight from the reader, so the document is tokenized once; only a
    /// stored subtype (its <c>Jackdaw-Clr-Type</c>) is deserialized again, as that type.
    /// <paramref name="requestedId"/> is empty for a query result, whose id only its metadata gives.
    /// </summary>
    private object Track(ref Utf8JsonReader reader, ReadOnlyMemory<byte> buffer, string requestedId, Type requested)
    {
        var start = (int)reader.TokenStartIndex;
        var requestedType = _conventions.GetEntityTypeInfo(requested);
        object? entity = null;
        if (!requested.IsAbstract)
        {
            var atStart = reader;
            try
            {
                entity = JsonSerializer.Deserialize(ref reader, requestedType.JsonTypeInfo);
            }
            catch (Exception e) when (e is JsonException or NotSupportedException)
            {
                // Not a T, or not JSON: the stored type decides below, or Skip throws for broken JSON.
                reader = atStart;
                reader.Skip();
                entity = null;
            }
        }
        else
        {
            reader.Skip();
        }

        var document = buffer.Slice(start, (int)reader.BytesConsumed - start);
        if (!LoadedMetadataReader.TryRead(document.Span, requestedId, requestedType.ClrTypeNameUtf8, out var metadata))
            throw new JackdawException(requestedId.Length > 0 ? $"Document '{requestedId}' came without @metadata." : "A query result came without @metadata; documents carry it, projections need a Select.");
        var id = metadata.Id ?? (requestedId.Length > 0 ? requestedId : throw new JackdawException("A query result came without @metadata.@id, so the session cannot track it."));
        if (_byId.TryGetValue(id, out var tracked))
        {
            return requested.IsInstanceOfType(tracked.Entity) ? tracked.Entity : throw new InvalidOperationException(
                $"Document '{tracked.Id}' is already loaded in this session as {tracked.Entity.GetType().FullName}, which is not a {requested.FullName}.");
        }

        var type = metadata.IsRequestedType ? requestedType : _conventions.GetEntityTypeInfo(ResolveType(requested, id, metadata.ClrTypeName));
        if (entity is null || type != requestedType)
            entity = Deserialize(document.Span, type, id);
        type.SetId?.Invoke(entity, id);

        // A document this session deletes at its next save is handed back as it is stored, untracked:
        // tracking it would undo the delete.
        if (_deletes.ContainsKey(id))
            return entity;
        var info = new DocumentInfo(entity, type)
        {
            Id = id,
            ChangeVector = metadata.ChangeVector,
            LastModified = metadata.LastModified,
            LoadedDocument = document,
            LoadedMetadata = document.Slice(metadata.Offset, metadata.Length),
            LoadedMetadataProperty = DocumentJson.FindMetadataProperty(document.Span, metadata.Offset, metadata.Length),
        };
        _byId[id] = info;
        _byEntity[entity] = info;
        _knownMissing.Remove(id);
        _included.Remove(id);
        return entity;
    }

    private static object Deserialize(ReadOnlySpan<byte> document, EntityTypeInfo type, string id)
    {
        object? entity;
        try
        {
            entity = JsonSerializer.Deserialize(document, type.JsonTypeInfo);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"Document '{id}' cannot be read as a {type.Type.FullName}: {e.Message}", e);
        }

        return entity ?? throw new JackdawException($"Document '{id}' deserialized to null.");
    }

    [DoesNotReturn]
    private static void ThrowUnexpectedDocsAnswer(ReadOnlyMemory<byte> body, int count)
    {
        var text = Encoding.UTF8.GetString(body.Span[..Math.Min(body.Length, 200)]);
        throw new JackdawException($"GET docs answered with {text}{(body.Length > 200 ? "..." : "")} instead of one result per id ({count}).");
    }

    /// <summary>
    /// The stored <c>Jackdaw-Clr-Type</c> decides the type when it names a loaded subtype of
    /// <paramref name="requested"/>; a known type that is not one is an error.
    /// </summary>
    private Type ResolveType(Type requested, string id, string? clrTypeName)
    {
        if (clrTypeName is null || _conventions.ResolveClrType(clrTypeName) is not { } stored || stored == requested)
            return requested;
        if (requested.IsAssignableFrom(stored))
            return stored;
        throw new InvalidOperationException($"Document '{id}' holds a {clrTypeName} (its Jackdaw-Clr-Type), which is not a {requested.FullName}.");
    }

    private void ApplyPutResult(DocumentInfo info, byte[] snapshot, JsonElement result)
    {
        // RavenDB's shape: the stored metadata's keys (@id, @change-vector, @last-modified, @collection).
        var id = GetString(result, "@id") ?? info.Id ?? throw new JackdawException("bulk_docs answered a PUT without an @id.");
        info.ChangeVector = GetString(result, "@change-vector");
        info.LastModified = GetString(result, "@last-modified");
        info.ExpectedChangeVector = null;
        if (info.Id is null)
        {
            info.Id = id;
            info.IdPrefix = null;
            _byId[id] = info;
            if (info.Type.SetId is { } setId)
            {
                setId(info.Entity, id);
                snapshot = Serialize(info).ToArray();
            }
        }

        info.Snapshot = snapshot;
        info.LoadedDocument = default;
        if (info.Metadata is { } metadata)
        {
            metadata.SetServerValue(MetadataKeys.Id, id);
            metadata.SetServerValue(MetadataKeys.ChangeVector, info.ChangeVector);
            metadata.SetServerValue(MetadataKeys.LastModified, info.LastModified);
            metadata.IsDirty = false;
        }
    }

    /// <summary>The entity's JSON now, in a buffer reused until the next call.</summary>
    private ReadOnlySpan<byte> Serialize(DocumentInfo info) =>
        (_current ??= new EntityJsonBuffer(_conventions.SerializerOptions)).Serialize(info.Entity, info.Type.JsonTypeInfo);

    private void Untrack(DocumentInfo info)
    {
        _byEntity.Remove(info.Entity);
        if (info.Id is not null)
            _byId.Remove(info.Id);
    }

    private DocumentInfo GetInfo(object entity)
    {
        ArgumentNullException.ThrowIfNull(entity);
        return _byEntity.TryGetValue(entity, out var info)
            ? info
            : throw new InvalidOperationException($"This {entity.GetType().Name} is not tracked by the session: load or store it first.");
    }

    private static void WriteChangeVector(Utf8JsonWriter writer, string? changeVector)
    {
        if (changeVector is null)
            writer.WriteNull("ChangeVector");
        else
            writer.WriteString("ChangeVector", changeVector);
    }

    private static string? GetString(JsonElement element, string name) =>
        element.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;

    /// <summary>Reads a buffered response's body, disposes the response and parses the body in place.</summary>
    private static async Task<JsonDocument> ReadJsonAsync(HttpResponseMessage response, string what, CancellationToken token)
    {
        byte[] body;
        using (response)
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        try
        {
            return JsonDocument.Parse(body);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to {what} is not JSON: {e.Message}", e);
        }
    }

    private static string Describe(JsonElement element)
    {
        var text = element.GetRawText();
        return text.Length > 200 ? text[..200] + "..." : text;
    }
}
