using System.Text.Json;

namespace Jackdaw.Client;

/// <summary>The index entries a tested map produced for one document (<see cref="TestIndexResult{T}.MapResults"/>).</summary>
public sealed class TestIndexMapResult
{
    /// <summary>The document's id.</summary>
    public string Document { get; set; } = "";

    /// <summary>Each entry's fields and values as the index holds them; a map may produce several entries, or none.</summary>
    public Dictionary<string, JsonElement>[] Entries { get; set; } = [];
}
