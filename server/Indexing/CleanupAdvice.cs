using System.Text.Json.Nodes;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

/// <summary>What the advisor suggests: which indexes, why, the evidence, and for a merge the merged definition.</summary>
public sealed record CleanupAdvice(string Type, IReadOnlyList<string> Indexes, string Reason, JsonObject Evidence, IndexDefinition? MergedDefinition);
