using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// The index cleanup advisor (as RavenDB's studio has one): indexes not queried for a while,
/// auto-indexes another map index covers, static map indexes over one collection that could be one (with
/// the merged definition when both maps are plain field selections), and indexes in error state.
/// It only advises: nothing is changed.
/// </summary>
public static partial class IndexCleanupAdvisor
{
    public static readonly TimeSpan DefaultUnusedFor = TimeSpan.FromDays(7);

    public static List<CleanupAdvice> Advise(IReadOnlyCollection<Index> indexes, TimeSpan unusedFor, DateTime now)
    {
        var advice = new List<CleanupAdvice>();
        var live = indexes.Where(i => i.ReplacementOf is null).ToList();

        foreach (var index in live)
        {
            var lastUsed = index.LastQueryingTime ?? index.Definition.CreatedAt;
            if (now - lastUsed > unusedFor)
            {
                advice.Add(new CleanupAdvice("Unused", [index.Name],
                    index.LastQueryingTime is null
                        ? $"'{index.Name}' was never queried since it was created {Days(now - lastUsed)} ago."
                        : $"'{index.Name}' was not queried for {Days(now - lastUsed)} (the threshold is {Days(unusedFor)}).",
                    new JsonObject
                    {
                        ["LastQueryingTime"] = index.LastQueryingTime?.ToString("o"),
                        ["CreatedAt"] = index.Definition.CreatedAt.ToString("o"),
                        ["UnusedFor"] = (now - lastUsed).ToString("c"),
                    }, null));
            }
        }

        foreach (var auto in live.Where(i => i.Definition.IsAuto))
        {
            var fields = auto.Definition.AutoFields;
            var cover = live.FirstOrDefault(other => other != auto && Covers(other, auto.Definition.Collection!, fields));
            if (cover is not null)
            {
                advice.Add(new CleanupAdvice("Covered", [auto.Name, cover.Name],
                    $"Every field of auto-index '{auto.Name}' is in '{cover.Name}', which answers the same queries.",
                    new JsonObject
                    {
                        ["Fields"] = new JsonArray(fields.Select(f => (JsonNode?)f.Key).ToArray()),
                        ["CoveredBy"] = cover.Name,
                    }, null));
            }
        }

        // Map indexes only: a map-reduce index answers result rows, not documents, so it neither
        // merges with a map nor covers an auto-index.
        var statics = live.Where(i => i.Definition.Type == IndexType.Map && i.Collections.Count == 1).GroupBy(i => i.Collections[0]);
        foreach (var group in statics)
        {
            var members = group.OrderBy(i => i.Name, StringComparer.OrdinalIgnoreCase).ToList();
            for (var a = 0; a < members.Count; a++)
            {
                for (var b = a + 1; b < members.Count; b++)
                {
                    advice.Add(Merge(members[a], members[b]));
                }
            }
        }

        foreach (var index in live.Where(i => i.State == IndexState.Error))
        {
            advice.Add(new CleanupAdvice("Errored", [index.Name],
                $"'{index.Name}' is in error state: {index.MapErrors} of {index.MapAttempts} documents failed to map. Fix its definition and reset it, or delete it.",
                new JsonObject
                {
                    ["MapErrors"] = index.MapErrors,
                    ["MapAttempts"] = index.MapAttempts,
                    ["LastErrors"] = new JsonArray(index.GetErrors().TakeLast(3).Select(e => (JsonNode?)$"{e.Document}: {e.Error}").ToArray()),
                }, null));
        }
        return advice;
    }

    private static string Days(TimeSpan span) => span.TotalDays >= 1 ? $"{span.TotalDays:0.#} days" : span.TotalHours >= 1 ? $"{span.TotalHours:0.#} hours" : $"{span.TotalSeconds:0} seconds";

    /// <summary>Whether <paramref name="index"/> has every one of <paramref name="fields"/> of <paramref name="collection"/>, indexed the same way.</summary>
    private static bool Covers(Index index, string collection, IReadOnlyList<AutoIndexField> fields)
    {
        var definition = index.Definition;
        if (definition.IsMapReduce)
        {
            return false;
        }
        if (definition.IsAuto)
        {
            return string.Equals(definition.Collection, collection, StringComparison.OrdinalIgnoreCase)
                && definition.AutoFields.Count >= fields.Count
                && fields.All(f => definition.AutoFields.Contains(f));
        }
        if (index.Collections.Count != 1 || !string.Equals(index.Collections[0], collection, StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }
        var selected = PlainSelection(definition);
        return selected is not null && fields.All(f =>
            selected.TryGetValue(f.Path, out var path) && path == f.Path && definition.OptionsOf(f.Path).Indexing == f.Indexing);
    }

    private static CleanupAdvice Merge(Index first, Index second)
    {
        var collection = first.Collections[0];
        var a = PlainSelection(first.Definition);
        var b = PlainSelection(second.Definition);
        var evidence = new JsonObject { ["Collection"] = collection };
        IndexDefinition? merged = null;
        if (a is not null && b is not null && a.Keys.Intersect(b.Keys).All(k => a[k] == b[k]))
        {
            var fields = a.Concat(b.Where(p => !a.ContainsKey(p.Key))).ToList();
            var map = $"map('{CollectionName(first.Definition) ?? collection}', doc => ({{ {string.Join(", ", fields.Select(f => $"{f.Key}: doc.{f.Value}"))} }}))";
            var options = first.Definition.Fields.Concat(second.Definition.Fields.Where(f => !first.Definition.Fields.ContainsKey(f.Key))).ToDictionary();
            merged = IndexDefinition.CreateStatic(first.Name + "_And_" + second.Name.Replace('/', '_'), [map], options);
            evidence["Fields"] = new JsonArray(fields.Select(f => (JsonNode?)f.Key).ToArray());
        }
        return new CleanupAdvice("Mergeable", [first.Name, second.Name],
            merged is null
                ? $"'{first.Name}' and '{second.Name}' both index only '{collection}': one index could serve both (their maps compute values, so the merge is left to you)."
                : $"'{first.Name}' and '{second.Name}' both select plain fields of '{collection}': one index with both sets of fields serves both.",
            evidence, merged);
    }

    /// <summary>For a map that only selects fields (<c>map('C', o => ({ A: o.A, B: o.B.C }))</c>): output name → document path; else null.</summary>
    public static Dictionary<string, string>? PlainSelection(IndexDefinition definition)
    {
        if (definition.Maps.Count != 1)
        {
            return null;
        }
        var match = PlainMap().Match(definition.Maps[0]);
        if (!match.Success)
        {
            return null;
        }
        var parameter = match.Groups["param"].Value;
        var result = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var item in match.Groups["body"].Value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            var field = FieldSelection().Match(item);
            if (!field.Success || field.Groups["param"].Value != parameter)
            {
                return null;
            }
            result[field.Groups["name"].Value] = field.Groups["path"].Value;
        }
        return result.Count == 0 ? null : result;
    }

    private static string? CollectionName(IndexDefinition definition)
    {
        var match = PlainMap().Match(definition.Maps[0]);
        return match.Success ? match.Groups["collection"].Value : null;
    }

    [GeneratedRegex(@"^\s*map\(\s*['""](?<collection>[^'""]+)['""]\s*,\s*(?:\(\s*)?(?<param>[A-Za-z_$][\w$]*)(?:\s*\))?\s*=>\s*\(\s*\{(?<body>[^{}]*)\}\s*\)\s*\)\s*;?\s*$")]
    private static partial Regex PlainMap();

    [GeneratedRegex(@"^(?<name>[A-Za-z_$][\w$]*)\s*:\s*(?<param>[A-Za-z_$][\w$]*)\.(?<path>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)$")]
    private static partial Regex FieldSelection();
}
