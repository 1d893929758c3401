using System.Text.Json;

namespace Jackdaw.Client;

/// <summary>One finding of the index cleanup advisor, from <see cref="MaintenanceOperations.GetIndexCleanupAsync"/>.</summary>
public sealed class IndexCleanupAdvice
{
    public IndexCleanupType Type { get; set; }

    /// <summary>The indexes concerned: one for <see cref="IndexCleanupType.Unused"/> and <see cref="IndexCleanupType.Errored"/>, the covered and the covering one, or those that could merge.</summary>
    public string[] Indexes { get; set; } = [];

    /// <summary>The server's explanation, in a sentence.</summary>
    public string Reason { get; set; } = "";

    /// <summary>What the advice rests on (last query time, fields, error counts...), as the server wrote it.</summary>
    public Dictionary<string, JsonElement> Evidence { get; set; } = [];

    /// <summary>For <see cref="IndexCleanupType.Mergeable"/> indexes whose maps are plain field selections: one definition doing the work of all of them.</summary>
    public IndexDefinition? MergedDefinition { get; set; }
}
