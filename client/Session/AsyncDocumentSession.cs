using System.Buffers;
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
    private readonly DocumentStore _store;
    private readonly DocumentConventions _conventions;
    private readonly string _databasePath;
    private readonly Http.SessionInfo _sessionInfo;
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
        _sessionInfo = store.Executor.NewSession();
        UseOptimisticConcurrency = useOptimisticConcurrency;
    }

    public IAdvancedSessionOperations Advanced => this;

    internal DocumentConventions Conventions => _conventions;

    public bool UseOptimisticConcurrency { get; set; }

    private string _indexWaitQuery = "";
    private TimeSpan _indexWait;
    private string _replicationWaitQuery = "";
    private TimeSpan _replicationWait;

    public void WaitForIndexesAfterSaveChanges(TimeSpan? timeout = null, bool throwOnTimeout = true, params string[] indexes)
    {
        _indexWait = timeout ?? TimeSpan.FromSeconds(15);
        var query = new System.Text.StringBuilder("waitForIndexesTimeout=")
            .Append(TimeSpanParameter(_indexWait))
            .Append("&waitForIndexThrow=").Append(throwOnTimeout ? "true" : "false");
        foreach (var index in indexes ?? [])
        {
            query.Append("&waitForSpecificIndex=").Append(Uri.EscapeDataString(index));
        }
        _indexWaitQuery = query.ToString();
    }

    public void WaitForReplicationAfterSaveChanges(TimeSpan? timeout = null, bool throwOnTimeout = true, int replicas = 1, bool majority = false)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(replicas);
        _replicationWait = timeout ?? _conventions.WaitForReplicationAfterSaveChangesTimeout;
        _replicationWaitQuery = "waitForReplicasTimeout=" + TimeSpanParameter(_replicationWait)
            + "&throwOnTimeoutInWaitForReplicas=" + (throwOnTimeout ? "true" : "false")
            + "&numberOfReplicasToWaitFor=" + (majority ? "majority" : replicas.ToString(System.Globalization.CultureInfo.InvariantCulture));
    }

    public void WaitForReplicationAfterSaveChanges(Action<ReplicationWaitOptionsBuilder> options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var builder = new ReplicationWaitOptionsBuilder();
        options(builder);
        WaitForReplicationAfterSaveChanges(builder.Timeout, builder.ThrowOnTimeoutValue, builder.Replicas, builder.MajorityValue);
    }

    /// <summary>A wait as RavenDB's C# client writes a <see cref="TimeSpan"/> into a query (<c>[d.]hh:mm:ss[.fffffff]</c>), escaped.</summary>
    private static string TimeSpanParameter(TimeSpan value) =>
        Uri.EscapeDataString(value.ToString("c", System.Globalization.CultureInfo.InvariantCulture));

    /// <summary>The query string of every <c>bulk_docs</c> of the session: the replicas to wait for, then the indexes, as RavenDB's clients write them.</summary>
    private string SaveQuery => (_replicationWaitQuery.Length, _indexWaitQuery.Length) switch
    {
        (0, 0) => "",
        (0, _) => "?" + _indexWaitQuery,
        (_, 0) => "?" + _replicationWaitQuery,
        _ => "?" + _replicationWaitQuery + "&" + _indexWaitQuery,
    };

    /// <summary>How long the server may wait before it answers a save: for the replicas, then for the indexes.</summary>
    private TimeSpan? SaveServerWait => _replicationWait + _indexWait is { Ticks: > 0 } wait ? wait : null;

    public int NumberOfRequests { get; private set; }

    public bool HasChanges => _deletes.Count > 0 || _deferred.Count > 0 || _forceRevisions.Count > 0 || _byEntity.Values.Any(HasChanged);

    public Task StoreAsync(object entity, CancellationToken token = default) => StoreAsync(entity, null, null, token);

    public Task StoreAsync(object entity, string? id, CancellationToken token = default) => StoreAsync(entity, null, id, token);

    public Task StoreAsync(object entity, string? changeVector, string? id, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(entity);
        token.ThrowIfCancellationRequested();
        if (_byEntity.TryGetValue(entity, out var tracked))
        {
            if (id is not null && !string.Equals(id, tracked.Id ?? tracked.IdPrefix, StringComparison.OrdinalIgnoreCase))
            {
                throw new InvalidOperationException($"This entity is already tracked by the session as '{tracked.Id ?? tracked.IdPrefix}'; it cannot be stored again as '{id}'.");
            }
            if (changeVector is not null)
            {
                tracked.ExpectedChangeVector = changeVector;
            }
            return Task.CompletedTask;
        }

        var type = _conventions.GetEntityTypeInfo(entity.GetType());
        if (string.IsNullOrEmpty(id))
        {
            id = type.GetId?.Invoke(entity);
        }
        if (string.IsNullOrEmpty(id))
        {
            id = type.IdPrefix;
        }

        var info = new DocumentInfo(entity, type) { ExpectedChangeVector = changeVector };
        if (id.EndsWith('/') || id.EndsWith('|'))
        {
            info.IdPrefix = id;
        }
        else
        {
            if (_byId.TryGetValue(id, out var other))
            {
                throw new InvalidOperationException($"The session already tracks a different object with id '{other.Id}'; evict it first or load and change that one.");
            }
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
        {
            throw new InvalidOperationException($"This {entity.GetType().Name} is not tracked by the session; load it first or use Delete(id).");
        }
        Untrack(info);
        if (info.Id is not null)
        {
            _deletes[info.Id] = info.ExpectedChangeVector ?? (UseOptimisticConcurrency ? info.ChangeVector : null);
        }
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

    public string? GetChangeVectorFor(object entity) => GetInfoOrRevision(entity).ChangeVector;

    public string? GetDocumentId(object entity) => GetInfoOrRevision(entity).Id;

    public MetadataDictionary GetMetadataFor(object entity)
    {
        var info = GetInfoOrRevision(entity);
        if (info.Metadata is null)
        {
            using (var loaded = !info.LoadedMetadata.IsEmpty ? JsonDocument.Parse(info.LoadedMetadata) : null)
            {
                info.Metadata = new MetadataDictionary(loaded?.RootElement, info.Type.Collection, info.Type.ClrTypeName);
            }
            if (info.Id is not null)
            {
                info.Metadata.SetServerValue(MetadataKeys.Id, info.Id);
            }
            if (info.ChangeVector is not null)
            {
                info.Metadata.SetServerValue(MetadataKeys.ChangeVector, info.ChangeVector);
            }
            if (info.LastModified is not null)
            {
                info.Metadata.SetServerValue(MetadataKeys.LastModified, info.LastModified);
            }

            // Attachments this session's saves changed are newer than the loaded metadata says.
            if (info.Attachments is { } attachments)
            {
                info.Metadata.SetServerValue(MetadataKeys.Attachments, JsonSerializer.SerializeToElement(attachments, WireJson.Options));
            }
        }

        return info.Metadata;
    }

    public bool IsLoaded(string id) => _byId.ContainsKey(id) || _included.ContainsKey(id);

    public bool HasChanged(object entity) => !_revisions.ContainsKey(entity) && HasChanged(GetInfo(entity));

    public void Evict(object entity)
    {
        if (_byEntity.TryGetValue(entity, out var info))
        {
            Untrack(info);
        }
    }

    public void Clear()
    {
        _byId.Clear();
        _byEntity.Clear();
        _knownMissing.Clear();
        _deletes.Clear();
        _included.Clear();
        ClearDeferred();
        _forceRevisions.Clear();
        _revisions.Clear();
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
        {
            return current.SequenceEqual(snapshot);
        }
        if (info.LoadedDocument.IsEmpty)
        {
            return false;
        }
        if (DocumentJson.MatchesStored(current, info.Type, info.Id, info.LoadedDocument.Span, info.LoadedMetadataProperty))
        {
            return true;
        }

        var loaded = JsonSerializer.Deserialize(info.LoadedDocument.Span, info.Type.JsonTypeInfo) ?? throw new JackdawException($"Document '{info.Id}' deserialized to null.");
        info.Type.SetId?.Invoke(loaded, info.Id);
        _rebuilt ??= new EntityJsonBuffer(_conventions.SerializerOptions);
        info.Snapshot = _rebuilt.Serialize(loaded, info.Type.JsonTypeInfo).ToArray();
        info.LoadedDocument = default;
        return current.SequenceEqual(info.Snapshot);
    }

    /// <summary>
    /// Tracks the document whose <c>{</c> <paramref name="reader"/> (reading <paramref name="buffer"/>)
    /// is on, moves the reader past its <c>}</c> and returns its entity; an id the session tracks
    /// already returns the tracked instance. A concrete <paramref name="requested"/> type is
    /// deserialized first, straight from the reader, so the document is tokenized once; only a
    /// stored subtype (its <c>Jackdaw-Clr-Type</c>) is deserialized again, as that type.
    /// <paramref name="requestedId"/> is empty for a query result, whose id only its metadata gives.
    /// </summary>
    private object Track(ref Utf8JsonReader reader, ReadOnlyMemory<byte> buffer, string requestedId, Type requested) =>
        Track(ref reader, buffer, requestedId, requested, out _);

    /// <summary>The same, giving the document's id (its <c>@metadata.@id</c>, else <paramref name="requestedId"/>).</summary>
    private object Track(ref Utf8JsonReader reader, ReadOnlyMemory<byte> buffer, string requestedId, Type requested, out string id)
    {
        var start = (int)reader.TokenStartIndex;
        var requestedType = _conventions.GetEntityTypeInfo(requested);
        var entity = DeserializeFromReader(ref reader, requested, requestedType);
        var document = buffer.Slice(start, (int)reader.BytesConsumed - start);
        var hasMetadata = LoadedMetadataReader.TryRead(document.Span, requestedId, requestedType.ClrTypeNameUtf8, out var metadata);
        return Track(entity, document, hasMetadata, metadata, requestedId, requested, requestedType, out id);
    }

    /// <summary>
    /// Deserializes the value whose first token <paramref name="reader"/> is on as a concrete
    /// <paramref name="requested"/> type, moving the reader past it; null when the type is abstract
    /// or the value is not one (the stored type decides later), and Skip throws for broken JSON.
    /// </summary>
    private static object? DeserializeFromReader(ref Utf8JsonReader reader, Type requested, EntityTypeInfo requestedType)
    {
        if (requested.IsAbstract)
        {
            reader.Skip();
            return null;
        }

        var atStart = reader;
        try
        {
            return JsonSerializer.Deserialize(ref reader, requestedType.JsonTypeInfo);
        }
        catch (Exception e) when (e is JsonException or NotSupportedException)
        {
            reader = atStart;
            reader.Skip();
            return null;
        }
    }

    /// <summary>
    /// Tracks <paramref name="document"/> (its <paramref name="metadata"/> read when <paramref name="hasMetadata"/>),
    /// given the <paramref name="entity"/> read as the requested type from the same bytes, or null.
    /// </summary>
    private object Track(object? entity, ReadOnlyMemory<byte> document, bool hasMetadata, in LoadedMetadata metadata, string requestedId, Type requested, EntityTypeInfo requestedType, out string id)
    {
        if (!hasMetadata)
        {
            throw new JackdawException(requestedId.Length > 0 ? $"Document '{requestedId}' came without @metadata." : "A query result came without @metadata; documents carry it, projections need a Select.");
        }

        id = metadata.Id ?? (requestedId.Length > 0 ? requestedId : throw new JackdawException("A query result came without @metadata.@id, so the session cannot track it."));
        if (_byId.TryGetValue(id, out var tracked))
        {
            return requested.IsInstanceOfType(tracked.Entity) ? tracked.Entity : throw new InvalidOperationException(
                $"Document '{tracked.Id}' is already loaded in this session as {tracked.Entity.GetType().FullName}, which is not a {requested.FullName}.");
        }

        var type = metadata.IsRequestedType ? requestedType : _conventions.GetEntityTypeInfo(ResolveType(requested, id, metadata.ClrTypeName));
        if (entity is null || type != requestedType)
        {
            entity = Deserialize(document.Span, type, id);
        }
        type.SetId?.Invoke(entity, id);

        // A document this session deletes at its next save is handed back as it is stored, untracked:
        // tracking it would undo the delete.
        if (_deletes.ContainsKey(id))
        {
            return entity;
        }
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

    /// <summary>
    /// The stored <c>Jackdaw-Clr-Type</c> decides the type when it names a loaded subtype of
    /// <paramref name="requested"/>; a known type that is not one is an error.
    /// </summary>
    private Type ResolveType(Type requested, string id, string? clrTypeName)
    {
        if (clrTypeName is null || _conventions.ResolveClrType(clrTypeName) is not { } stored || stored == requested)
        {
            return requested;
        }
        if (requested.IsAssignableFrom(stored))
        {
            return stored;
        }
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
        {
            _byId.Remove(info.Id);
        }
    }

    /// <summary>A tracked entity's info, or a revision's (read from the server, never saved: for its metadata, id and change vector).</summary>
    private DocumentInfo GetInfoOrRevision(object entity) =>
        entity is not null && _revisions.TryGetValue(entity, out var revision) ? revision : GetInfo(entity!);

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
        {
            writer.WriteNull("ChangeVector");
        }
        else
        {
            writer.WriteString("ChangeVector", changeVector);
        }
    }

    private static string? GetString(JsonElement element, string name) =>
        element.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;

    /// <summary>Reads a buffered response's body, disposes the response and parses the body in place.</summary>
    private static async Task<JsonDocument> ReadJsonAsync(HttpResponseMessage response, string what, CancellationToken token)
    {
        byte[] body;
        using (response)
        {
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }
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
