using System.Text.Json.Nodes;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>What export and import both do to an index definition.</summary>
internal static class SmugglerIndexes
{
    /// <summary>RavenDB's <c>RemoveAnalyzers</c>: every field of the definition loses its <c>Analyzer</c>.</summary>
    public static void RemoveAnalyzers(JsonObject definition)
    {
        if (definition["Fields"] is not JsonObject fields)
        {
            return;
        }
        foreach (var (_, options) in fields)
        {
            if (options is JsonObject field)
            {
                field.Remove("Analyzer");
            }
        }
    }
}
