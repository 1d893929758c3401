using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>
/// The reduce side of a static map-reduce index, in RavenDB's members: the JavaScript
/// <c>Reduce</c> (<c>groupBy(r =&gt; key).aggregate(g =&gt; result)</c>), and where its results are
/// also written as documents: <c>OutputReduceToCollection</c> (a collection, null for none), with
/// reference documents whose ids follow <c>PatternForOutputReduceToCollectionReferences</c>
/// (<c>reports/orders/{Company}</c>), in <c>PatternReferencesCollectionName</c> (default
/// <c>{OutputReduceToCollection}/References</c>).
/// </summary>
public sealed record ReduceDefinition(string Script, string? OutputReduceToCollection = null, string? PatternForOutputReduceToCollectionReferences = null, string? PatternReferencesCollectionName = null)
{
    /// <summary>The collection of the reference documents, when there is a pattern.</summary>
    public string? ReferencesCollection =>
        OutputReduceToCollection is null || PatternForOutputReduceToCollectionReferences is null
            ? null
            : PatternReferencesCollectionName ?? OutputReduceToCollection + "/References";

    /// <summary>The reduce members of a definition's JSON; null when it has no <c>Reduce</c> (a map).</summary>
    /// <exception cref="BadRequestException">A member has the wrong type, or output members come without a reduce.</exception>
    public static ReduceDefinition? FromJson(string index, JsonElement json)
    {
        var script = ReadString(index, json, "Reduce", "a string of JavaScript such as \"groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0) }))\"");
        var output = ReadString(index, json, "OutputReduceToCollection", "a collection name such as \"DailyTotals\"");
        var pattern = ReadString(index, json, "PatternForOutputReduceToCollectionReferences", "an id pattern such as \"reports/orders/{Company}\"");
        var referencesCollection = ReadString(index, json, "PatternReferencesCollectionName", "a collection name");
        if (string.IsNullOrWhiteSpace(script))
        {
            if (output is not null)
            {
                throw new BadRequestException($"Index '{index}' has OutputReduceToCollection '{output}' but no Reduce: only a map-reduce index writes its results to a collection.");
            }
            return null;
        }
        if (pattern is not null && output is null)
        {
            throw new BadRequestException($"Index '{index}' has PatternForOutputReduceToCollectionReferences but no OutputReduceToCollection.");
        }
        return new ReduceDefinition(script, output, pattern, referencesCollection);
    }

    private static string? ReadString(string index, JsonElement json, string member, string what)
    {
        if (!json.TryGetProperty(member, out var value) || value.ValueKind == JsonValueKind.Null)
        {
            return null;
        }
        if (value.ValueKind != JsonValueKind.String)
        {
            throw new BadRequestException($"Index '{index}': \"{member}\" is {value.GetRawText()}; it must be {what}.");
        }
        var text = value.GetString();
        return string.IsNullOrWhiteSpace(text) ? null : member == "Reduce" ? text : text.Trim();
    }

    /// <summary>Writes the members into a definition's JSON.</summary>
    public void WriteTo(JsonObject json)
    {
        json["Reduce"] = Script;
        json["OutputReduceToCollection"] = OutputReduceToCollection;
        json["PatternForOutputReduceToCollectionReferences"] = PatternForOutputReduceToCollectionReferences;
        json["PatternReferencesCollectionName"] = PatternReferencesCollectionName;
    }

    /// <summary>Whether two reduces build the same index (scripts compared by <paramref name="normalize"/>).</summary>
    public bool SameAs(ReduceDefinition? other, Func<string, string> normalize) =>
        other is not null
        && normalize(Script) == normalize(other.Script)
        && string.Equals(OutputReduceToCollection, other.OutputReduceToCollection, StringComparison.OrdinalIgnoreCase)
        && string.Equals(PatternForOutputReduceToCollectionReferences, other.PatternForOutputReduceToCollectionReferences, StringComparison.Ordinal)
        && string.Equals(ReferencesCollection, other.ReferencesCollection, StringComparison.OrdinalIgnoreCase);
}
