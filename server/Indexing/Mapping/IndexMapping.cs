namespace Jackdaw.Server.Indexing;

/// <summary>
/// One field of an index entry as a map produced it. <see cref="Value"/> is one of: <c>null</c>,
/// <see cref="bool"/>, <see cref="long"/>, <see cref="double"/>, <see cref="string"/>,
/// <see cref="IndexJson"/> (an object, kept as its JSON text), or an <see cref="IReadOnlyList{T}"/> of
/// <c>object?</c> holding any of those (an array: one term per element). A field the map did not
/// return is simply absent (missing is not null).
/// </summary>
public readonly record struct IndexField(string Name, object? Value);

/// <summary>An object value of a map's output, as compact JSON text.</summary>
public sealed record IndexJson(string Json);

/// <summary>A document handed to a map: its id, collection and blittable form (with <c>@metadata</c>).</summary>
public sealed class MapInput
{
    public MapInput(string id, string collection, ReadOnlyMemory<byte> blittable)
    {
        Id = id;
        Collection = collection;
        Blittable = blittable;
    }

    public string Id { get; }

    public string Collection { get; }

    /// <summary>Valid for the duration of the map call only.</summary>
    public ReadOnlyMemory<byte> Blittable { get; }
}

/// <summary>Documents a map may <c>load(id)</c>: the same snapshot the batch reads.</summary>
public interface IMapDocumentLoader
{
    /// <summary>The document with <paramref name="id"/>, or null when it does not exist.</summary>
    MapInput? Load(string id);
}

/// <summary>What a map produced for one document: zero, one or several entries, and the ids it loaded.</summary>
public sealed class MapOutput
{
    public List<IndexField[]> Entries { get; } = new();

    /// <summary>Ids of the documents the map loaded (a change of one of them re-maps this document).</summary>
    public List<string> LoadedIds { get; } = new();

    public void Clear()
    {
        Entries.Clear();
        LoadedIds.Clear();
    }
}

/// <summary>A map could not process one document (a script error, a sandbox limit): an index error, not a crash.</summary>
public sealed class IndexMapException : Exception
{
    public IndexMapException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
