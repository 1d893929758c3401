namespace Jackdaw.Server.Indexing.Mapping;

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
