namespace Jackdaw.Server.Indexing.Mapping;

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
