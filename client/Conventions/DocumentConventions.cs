using System.Collections.Concurrent;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using Jackdaw.Client.Conventions;

namespace Jackdaw.Client;

/// <summary>
/// How entities map to documents: the id property, the collection, the stored CLR type name and
/// the JSON serializer options. Set before <see cref="DocumentStore.Initialize"/>; frozen after it.
/// </summary>
public sealed class DocumentConventions
{
    private readonly ConcurrentDictionary<Type, EntityTypeInfo> _entityTypes = new();
    private readonly ConcurrentDictionary<string, Type?> _clrTypesByName = new(StringComparer.Ordinal);
    private string _idPropertyName = "Id";
    private Func<Type, string> _findCollectionName = DefaultFindCollectionName;
    private Func<string, string> _transformCollectionNameToDocumentIdPrefix = DefaultTransformCollectionNameToDocumentIdPrefix;
    private Func<Type, string> _findClrTypeName = DefaultFindClrTypeName;
    private JsonSerializerOptions _serializerOptions = CreateDefaultSerializerOptions();
    private TimeSpan _requestTimeout = TimeSpan.FromSeconds(30);
    private ReadBalanceBehavior _readBalanceBehavior = ReadBalanceBehavior.None;
    private bool _disableTopologyUpdates;
    private TimeSpan _waitForReplicationAfterSaveChangesTimeout = TimeSpan.FromSeconds(15);
    private bool _frozen;

    /// <summary>Name of the string property that holds the document id (default <c>Id</c>).</summary>
    public string IdPropertyName
    {
        get => _idPropertyName;
        set => Set(ref _idPropertyName, value);
    }

    /// <summary>Collection of an entity type; default pluralizes the type name (<c>User</c> → <c>Users</c>, <c>Company</c> → <c>Companies</c>).</summary>
    public Func<Type, string> FindCollectionName
    {
        get => _findCollectionName;
        set => Set(ref _findCollectionName, value);
    }

    /// <summary>Id prefix for a collection when the server generates the id; default lower-cases it and appends <c>/</c> (<c>Users</c> → <c>users/</c>).</summary>
    public Func<string, string> TransformCollectionNameToDocumentIdPrefix
    {
        get => _transformCollectionNameToDocumentIdPrefix;
        set => Set(ref _transformCollectionNameToDocumentIdPrefix, value);
    }

    /// <summary>The value stored in <c>@metadata["Jackdaw-Clr-Type"]</c>; default <c>"Namespace.Type, Assembly"</c>.</summary>
    public Func<Type, string> FindClrTypeName
    {
        get => _findClrTypeName;
        set => Set(ref _findClrTypeName, value);
    }

    /// <summary>
    /// Serializer options for documents. Defaults: property names as declared, enums as strings,
    /// ISO 8601 dates. Made read-only by <see cref="DocumentStore.Initialize"/>.
    /// </summary>
    public JsonSerializerOptions SerializerOptions
    {
        get => _serializerOptions;
        set => Set(ref _serializerOptions, value);
    }

    /// <summary>Time limit of one request (bulk insert has none); default 30 s.</summary>
    public TimeSpan RequestTimeout
    {
        get => _requestTimeout;
        set => Set(ref _requestTimeout, value);
    }

    /// <summary>
    /// Which node a session reads from (RavenDB's convention of the name): the preferred node
    /// (<see cref="ReadBalanceBehavior.None"/>, the default), one node per session in turn
    /// (<see cref="ReadBalanceBehavior.RoundRobin"/>) or the fastest node
    /// (<see cref="ReadBalanceBehavior.FastestNode"/>). Writes, and the store's own operations, go
    /// to the preferred node whatever this says. A session reading from another node than the one
    /// it wrote to may not see its write yet: <c>WaitForReplicationAfterSaveChanges</c> waits for it.
    /// </summary>
    public ReadBalanceBehavior ReadBalanceBehavior
    {
        get => _readBalanceBehavior;
        set => Set(ref _readBalanceBehavior, value);
    }

    /// <summary>
    /// Do not ask the servers for the database's topology (RavenDB's convention of the name): the
    /// store's URLs are the nodes, in the order given, and requests fail over among them. Off by
    /// default: the first URL that answers gives the topology, refreshed when the server says so.
    /// </summary>
    public bool DisableTopologyUpdates
    {
        get => _disableTopologyUpdates;
        set => Set(ref _disableTopologyUpdates, value);
    }

    /// <summary>How long a save waits for replicas when <c>WaitForReplicationAfterSaveChanges</c> names no timeout; default 15 s, as RavenDB's.</summary>
    public TimeSpan WaitForReplicationAfterSaveChangesTimeout
    {
        get => _waitForReplicationAfterSaveChangesTimeout;
        set => Set(ref _waitForReplicationAfterSaveChangesTimeout, value);
    }

    public static string DefaultFindCollectionName(Type type)
    {
        var name = type.Name;
        var tick = name.IndexOf('`', StringComparison.Ordinal);
        if (tick >= 0)
        {
            name = name[..tick];
        }
        return Inflector.Pluralize(name);
    }

    public static string DefaultTransformCollectionNameToDocumentIdPrefix(string collectionName) => collectionName.ToLowerInvariant() + "/";

    public static string DefaultFindClrTypeName(Type type) => $"{type.FullName}, {type.Assembly.GetName().Name}";

    public static JsonSerializerOptions CreateDefaultSerializerOptions() => new(JsonSerializerDefaults.General)
    {
        Converters = { new JsonStringEnumConverter() },
        TypeInfoResolver = new DefaultJsonTypeInfoResolver(),
    };

    internal void Freeze()
    {
        if (_frozen)
        {
            return;
        }
        if (string.IsNullOrWhiteSpace(_idPropertyName))
        {
            throw new InvalidOperationException("DocumentConventions.IdPropertyName must name a property, e.g. \"Id\".");
        }
        _serializerOptions.MakeReadOnly(populateMissingResolver: true);
        _frozen = true;
    }

    /// <summary>The cached mapping of <paramref name="type"/>; computed once per type.</summary>
    internal EntityTypeInfo GetEntityTypeInfo(Type type) =>
        _entityTypes.TryGetValue(type, out var info) ? info : _entityTypes.GetOrAdd(type, static (t, self) => EntityTypeInfo.Create(t, self), this);

    /// <summary>Resolves a stored <c>Jackdaw-Clr-Type</c> to a loaded type, or null; cached per name.</summary>
    internal Type? ResolveClrType(string clrTypeName) =>
        _clrTypesByName.TryGetValue(clrTypeName, out var type) ? type : _clrTypesByName.GetOrAdd(clrTypeName, static name => Type.GetType(name, throwOnError: false));

    private void Set<T>(ref T field, T value)
    {
        if (_frozen)
        {
            throw new InvalidOperationException("Conventions cannot change after DocumentStore.Initialize(); set them before.");
        }
        ArgumentNullException.ThrowIfNull(value);
        field = value;
    }
}
