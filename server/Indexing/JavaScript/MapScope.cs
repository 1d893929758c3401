using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Storage.Blittable;
using Jint;
using Jint.Native;
using Jint.Native.Object;
using Jint.Runtime;

namespace Jackdaw.Server.Indexing.JavaScript;

/// <summary>
/// The documents one <see cref="JavaScriptMapper.Map"/> call may read (the mapped one and those it
/// loads) and RavenDB's functions over them: <c>id(doc)</c>, <c>load(id[, collection])</c>,
/// <c>getMetadata(doc)</c>. Lazy document objects keep a slot number and a generation, not the
/// bytes: a document object a script kept in a global past its call finds the generation moved on
/// and fails with a TypeError instead of reading memory the storage has reused.
/// </summary>
internal sealed class MapScope
{
    // Property names looked up by scripts, with the position where each was found last: the
    // documents of a collection share a shape, so the hint usually hits and the binary search is
    // skipped. Bounded because a script may look up computed names without end.
    private const int MaxCachedNames = 1024;

    private readonly Engine _engine;
    private readonly List<ReadOnlyMemory<byte>> _documents = new();
    private readonly List<byte[]> _rented = new();
    private readonly Dictionary<string, JsValue> _loaded = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> _tracked = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, BlittablePropertyName> _names = new(StringComparer.Ordinal);
    private IMapDocumentLoader? _loader;
    private MapOutput? _output;

    public MapScope(Engine engine)
    {
        _engine = engine;
    }

    public Engine Engine => _engine;

    /// <summary>
    /// Whether <c>load()</c> reads documents: only for a map that calls it (<see cref="JavaScriptMapper.UsesLoad"/>),
    /// whose loads are tracked. Every map is given a loader (for its attachments), but a load through an
    /// alias the text does not show would not re-map on a change of the loaded document, so it finds nothing.
    /// </summary>
    public bool LoadsDocuments { get; set; } = true;

    /// <summary>The loader of the current call (documents and attachments of the batch's snapshot); null outside a call or when there is none.</summary>
    public IMapDocumentLoader? Loader => _loader;

    /// <summary>Whether a call is running (a map function may read documents and attachments).</summary>
    public bool InCall => _output is not null;

    /// <summary>Moves on at the end of every call: objects made before no longer read their bytes.</summary>
    public long Generation { get; private set; }

    /// <summary>Starts a call; the mapped document is slot 0.</summary>
    public void Begin(MapInput document, IMapDocumentLoader? loader, MapOutput output)
    {
        _documents.Add(document.Blittable);
        _loader = loader;
        _output = output;
    }

    /// <summary>A fresh object over the mapped document (one per map function, so one map's writes stay its own).</summary>
    public BlittableObjectInstance CreateRoot(MapInput document) =>
        new(this, 0, [], document.Id, document.Collection);

    /// <summary>Ends the call: every object made during it is stale from now on.</summary>
    public void End()
    {
        Generation++;
        _documents.Clear();
        foreach (var buffer in _rented)
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        _rented.Clear();
        _loaded.Clear();
        _tracked.Clear();
        _loader = null;
        _output = null;
    }

    /// <summary>The bytes of a document, or a TypeError when the object asking outlived its call.</summary>
    public ReadOnlySpan<byte> Read(int document, long generation)
    {
        if (generation != Generation)
        {
            ThrowStale();
        }

        return _documents[document].Span;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowStale() => throw new JavaScriptException(_engine.Intrinsics.TypeError,
        "This document belongs to an earlier map call and can no longer be read (a map must not keep documents in globals).");

    /// <summary>Insertion index of <paramref name="name"/> in <paramref name="obj"/>, or -1.</summary>
    public int IndexOf(BlittableObject obj, string name)
    {
        ref var cached = ref CollectionsMarshal.GetValueRefOrNullRef(_names, name);
        if (Unsafe.IsNullRef(ref cached))
        {
            if (_names.Count >= MaxCachedNames)
            {
                return IndexOfUncached(obj, name);
            }

            _names[name] = new BlittablePropertyName(name);
            cached = ref CollectionsMarshal.GetValueRefOrNullRef(_names, name);
        }

        // A hit leaves the hint on the entry's index, a miss of the hint stores the found index.
        return obj.TryGet(ref cached, out _) ? cached.Hint : -1;
    }

    private static int IndexOfUncached(BlittableObject obj, string name)
    {
        var probe = new BlittablePropertyName(name);
        return obj.TryGet(ref probe, out _) ? probe.Hint : -1;
    }

    /// <summary><c>id(doc)</c>: the id of a document the map received or loaded, else <c>doc['@metadata']['@id']</c>.</summary>
    public JsValue Id(JsValue thisObject, JsValue[] arguments)
    {
        var doc = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
        if (doc is BlittableObjectInstance { DocumentId: { } id })
        {
            return new JsString(id);
        }

        if (doc is not ObjectInstance obj)
        {
            throw new JavaScriptException(_engine.Intrinsics.TypeError, $"id(doc) takes a document, not {Describe(doc)}.");
        }

        return obj.Get("@metadata") is ObjectInstance metadata && metadata.Get("@id") is { } value && value.IsString()
            ? value
            : JsValue.Null;
    }

    /// <summary><c>getMetadata(doc)</c>: <c>doc['@metadata']</c>.</summary>
    public JsValue GetMetadata(JsValue thisObject, JsValue[] arguments)
    {
        var doc = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
        if (doc is not ObjectInstance obj)
        {
            throw new JavaScriptException(_engine.Intrinsics.TypeError, $"getMetadata(doc) takes a document, not {Describe(doc)}.");
        }

        return obj.Get("@metadata");
    }

    /// <summary>
    /// <c>load(id)</c> and <c>load(id, collection)</c>: the other document, read lazily like the mapped
    /// one, or null when it does not exist (or, with a collection, is in another one). Every id asked
    /// for is recorded in <see cref="MapOutput.LoadedIds"/>, a missing one too: its creation later must
    /// re-map this document. Without a loader every document is missing.
    /// </summary>
    public JsValue Load(JsValue thisObject, JsValue[] arguments) => Load(arguments, track: true);

    /// <summary>
    /// <c>noTracking.load(id[, collection])</c>: <see cref="Load(JsValue, JsValue[])"/> without
    /// recording the id, so that a change to that document does not map this one again (RavenDB's
    /// name; for data that is read once, such as a lookup that never changes).
    /// </summary>
    public JsValue LoadWithoutTracking(JsValue thisObject, JsValue[] arguments) => Load(arguments, track: false);

    private JsValue Load(JsValue[] arguments, bool track)
    {
        var idValue = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
        if (idValue.IsNull() || idValue.IsUndefined())
        {
            return JsValue.Null;
        }

        if (!idValue.IsString())
        {
            throw new JavaScriptException(_engine.Intrinsics.TypeError, $"load(id) takes a document id (a string), not {Describe(idValue)}.");
        }

        var collectionValue = arguments.Length > 1 ? arguments[1] : JsValue.Undefined;
        if (!collectionValue.IsUndefined() && !collectionValue.IsNull() && !collectionValue.IsString())
        {
            throw new JavaScriptException(_engine.Intrinsics.TypeError, $"load(id, collection) takes the collection name as a string, not {Describe(collectionValue)}.");
        }

        if (_output is null)
        {
            throw new JavaScriptException(_engine.Intrinsics.TypeError, "load() can only be called while a document is mapped, not when the index is compiled.");
        }

        var id = idValue.AsString();
        if (track && _tracked.Add(id))
        {
            _output.LoadedIds.Add(id);
        }

        if (!_loaded.TryGetValue(id, out var result))
        {
            result = LoadDocument(id);
            _loaded[id] = result;
        }

        if (collectionValue.IsString() && result is BlittableObjectInstance loaded
            && !string.Equals(loaded.Collection, collectionValue.AsString(), StringComparison.OrdinalIgnoreCase))
        {
            return JsValue.Null;
        }

        return result;
    }

    private JsValue LoadDocument(string id)
    {
        var input = LoadsDocuments ? _loader?.Load(id) : null;
        if (input is null)
        {
            return JsValue.Null;
        }

        // Copied: the loader may hand out bytes that its next load overwrites, and a loaded
        // document stays readable until the end of the call.
        var length = input.Blittable.Length;
        var buffer = ArrayPool<byte>.Shared.Rent(length);
        _rented.Add(buffer);
        input.Blittable.Span.CopyTo(buffer);
        _documents.Add(buffer.AsMemory(0, length));
        return new BlittableObjectInstance(this, _documents.Count - 1, [], input.Id, input.Collection);
    }

    internal static string Describe(JsValue value) => value.Type switch
    {
        Types.Undefined => "undefined",
        Types.Null => "null",
        Types.Boolean => "a boolean",
        Types.Number => "a number",
        Types.String => "a string",
        Types.Symbol => "a symbol",
        Types.BigInt => "a bigint",
        _ when value.IsArray() => "an array",
        _ when value.IsCallable() => "a function",
        _ => "an object",
    };
}
