using System.Text;

namespace Jackdaw.Client;

/// <summary>
/// Whether the server would take a definition as unchanged: the same kind of index, the same maps
/// in the same order, the same reduce and the same additional sources once runs of whitespace are one space, the same
/// reduce output (<see cref="IndexDefinition.OutputReduceToCollection"/> and the references' collection
/// ignoring case, their id pattern exactly), and the same field options once
/// options at their defaults (<see cref="FieldIndexing.Default"/>, not stored, no analyzer) are left out. This
/// is the server's own rule, so a deployment can say beforehand which indexes it will rebuild.
/// </summary>
internal static class IndexDefinitionComparison
{
    public static bool SameAs(IndexDefinition current, IndexDefinition wanted)
    {
        if (current.Type is IndexType.AutoMap or IndexType.AutoMapReduce)
        {
            return false;
        }

        if (!current.Maps.Select(NormalizeScript).SequenceEqual(wanted.Maps.Select(NormalizeScript), StringComparer.Ordinal))
        {
            return false;
        }

        if (!SameReduce(current, wanted))
        {
            return false;
        }

        if (current.AdditionalSources.Count != wanted.AdditionalSources.Count
            || current.AdditionalSources.Any(s => !wanted.AdditionalSources.TryGetValue(s.Key, out var theirs) || NormalizeScript(theirs) != NormalizeScript(s.Value)))
        {
            return false;
        }

        var mine = ExplicitFields(current);
        var theirs = ExplicitFields(wanted);
        return mine.Count == theirs.Count && mine.All(f => theirs.TryGetValue(f.Key, out var options) && options == f.Value);
    }

    // As the server reads a definition: a blank Reduce is none (a map index), names are trimmed and a
    // blank one is none, and the references' collection is only there with an output and a pattern.
    private static bool SameReduce(IndexDefinition current, IndexDefinition wanted)
    {
        var mine = ReduceOf(current);
        var theirs = ReduceOf(wanted);
        if (mine is null || theirs is null)
        {
            return mine is null && theirs is null;
        }

        return mine.Value.Script == theirs.Value.Script
            && string.Equals(mine.Value.Output, theirs.Value.Output, StringComparison.OrdinalIgnoreCase)
            && string.Equals(mine.Value.Pattern, theirs.Value.Pattern, StringComparison.Ordinal)
            && string.Equals(mine.Value.References, theirs.Value.References, StringComparison.OrdinalIgnoreCase);
    }

    private static (string Script, string? Output, string? Pattern, string? References)? ReduceOf(IndexDefinition definition)
    {
        if (string.IsNullOrWhiteSpace(definition.Reduce))
        {
            return null;
        }

        var output = Name(definition.OutputReduceToCollection);
        var pattern = Name(definition.PatternForOutputReduceToCollectionReferences);
        var references = output is null || pattern is null ? null : Name(definition.PatternReferencesCollectionName) ?? output + "/References";
        return (NormalizeScript(definition.Reduce), output, pattern, references);
    }

    private static string? Name(string? name) => string.IsNullOrWhiteSpace(name) ? null : name.Trim();

    // A field that names an analyzer and no indexing is a Search field, as the server reads it.
    private static Dictionary<string, (FieldIndexing, FieldStorage, string?)> ExplicitFields(IndexDefinition definition) =>
        definition.Fields
            .Select(f => (f.Key, Analyzer: string.IsNullOrWhiteSpace(f.Value?.Analyzer) ? null : f.Value.Analyzer.Trim(), f.Value))
            .Select(f => (f.Key, Options: (f.Value?.Indexing ?? (f.Analyzer is null ? FieldIndexing.Default : FieldIndexing.Search), f.Value?.Storage ?? FieldStorage.No, f.Analyzer)))
            .Where(f => f.Options != (FieldIndexing.Default, FieldStorage.No, null))
            .ToDictionary(f => f.Key, f => f.Options, StringComparer.Ordinal);

    /// <summary>Trimmed, with each run of whitespace as one space.</summary>
    public static string NormalizeScript(string script)
    {
        var builder = new StringBuilder(script.Length);
        var space = false;
        foreach (var c in script.AsSpan().Trim())
        {
            if (char.IsWhiteSpace(c))
            {
                space = true;
                continue;
            }

            if (space)
            {
                builder.Append(' ');
            }

            space = false;
            builder.Append(c);
        }

        return builder.ToString();
    }
}
