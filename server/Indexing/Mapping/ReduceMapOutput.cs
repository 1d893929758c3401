namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>What a map-reduce's map produced for one document: (reduce key, entry) pairs as JSON, and the ids it loaded.</summary>
public sealed class ReduceMapOutput
{
    /// <summary>Each entry's canonical key and the entry itself (JSON, UTF-8), in the map's order.</summary>
    public List<(byte[] Key, byte[] Entry)> Entries { get; } = new();

    /// <summary>Ids of the documents the map loaded (a change of one of them re-maps this document).</summary>
    public List<string> LoadedIds { get; } = new();

    public void Clear()
    {
        Entries.Clear();
        LoadedIds.Clear();
    }
}
