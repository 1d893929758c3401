using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// A database's analyzer, as RavenDB's <c>PutAnalyzersOperation</c> sends it: a name index fields
/// refer to (<c>"Analyzer": "MyAnalyzer"</c>) and its <c>Code</c>, which for Jackdaw is a built-in
/// analyzer's name or a JSON description of Lucene parts (<see cref="AnalyzerRecipe"/>), never C#.
/// </summary>
public sealed record AnalyzerDefinition(string Name, string Code)
{
    /// <summary>The longest analyzer name.</summary>
    public const int MaxNameLength = 256;

    /// <summary>Reads one entry of <c>{"Analyzers":[{"Name","Code"}]}</c> (the name trimmed, as RavenDB does).</summary>
    /// <exception cref="AnalyzerCompilationException">It is not an object with a valid name and a string Code.</exception>
    public static AnalyzerDefinition FromJson(JsonElement json)
    {
        if (json.ValueKind != JsonValueKind.Object)
        {
            throw new AnalyzerCompilationException(null, "each analyzer must be an object such as {\"Name\":\"MyAnalyzer\",\"Code\":\"WhitespaceAnalyzer\"}.");
        }
        var name = json.TryGetProperty("Name", out var n) && n.ValueKind == JsonValueKind.String ? n.GetString()!.Trim() : null;
        ValidateName(name);
        var code = json.TryGetProperty("Code", out var c) && c.ValueKind == JsonValueKind.String ? c.GetString() : null;
        if (code is null)
        {
            throw new AnalyzerCompilationException(name, "it needs \"Code\": a string, either a built-in analyzer's name or a JSON description of Lucene parts.");
        }
        return new AnalyzerDefinition(name!, code);
    }

    /// <exception cref="AnalyzerCompilationException">The name is empty, too long, has a control character, or is a built-in analyzer's.</exception>
    public static void ValidateName(string? name)
    {
        if (string.IsNullOrWhiteSpace(name))
        {
            throw new AnalyzerCompilationException(null, "an analyzer needs a \"Name\", such as \"MyAnalyzer\".");
        }
        if (name.Length > MaxNameLength)
        {
            throw new AnalyzerCompilationException(null, $"the analyzer name is {name.Length} characters long; the most is {MaxNameLength}.");
        }
        if (name.Any(char.IsControl))
        {
            throw new AnalyzerCompilationException(name, "its name has a control character.");
        }
        if (BuiltInAnalyzers.Find(name) is { } builtIn)
        {
            throw new AnalyzerCompilationException(name, $"the name is the built-in {builtIn.Name}'s: fields name built-in analyzers directly. Choose another name.");
        }
    }

    public byte[] ToJson() => JsonSerializer.SerializeToUtf8Bytes(new JsonObject { ["Name"] = Name, ["Code"] = Code });
}
