using Lucene.Net.Analysis;
using Lucene.Net.Analysis.Core;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Util;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// The Lucene analyzers a field (or an analyzer's <c>Code</c>) may name directly, as RavenDB
/// accepts them: by class name (<c>StandardAnalyzer</c>) or full name, in Lucene.Net 4.8's namespaces
/// (<c>Lucene.Net.Analysis.Core.WhitespaceAnalyzer</c>) or in Lucene.Net 3.0's, which RavenDB's
/// definitions use (<c>Lucene.Net.Analysis.WhitespaceAnalyzer</c>). Names match ignoring case; a
/// database's own analyzers may not take one of them.
/// </summary>
public static class BuiltInAnalyzers
{
    /// <summary>A built-in analyzer: its class name, the namespaces it may be named in, and how to make one.</summary>
    public sealed record BuiltIn(string Name, IReadOnlyList<string> Namespaces, Func<Analyzer> Create);

    // Lucene.Net 3.0 (RavenDB's names) kept these in Lucene.Net.Analysis; 4.8 moved them to Core.
    private static readonly string[] Core = ["Lucene.Net.Analysis", "Lucene.Net.Analysis.Core"];

    /// <summary>
    /// As Lucene defines them: <c>StandardAnalyzer</c> (Unicode word rules, lowercased, Lucene's English
    /// stop words removed), <c>WhitespaceAnalyzer</c> (split on white space, case kept),
    /// <c>SimpleAnalyzer</c> (runs of letters, lowercased), <c>KeywordAnalyzer</c> (the whole value
    /// as one term, case kept), <c>StopAnalyzer</c> (runs of letters, lowercased, English stop words removed).
    /// </summary>
    public static readonly IReadOnlyList<BuiltIn> All =
    [
        new("StandardAnalyzer", ["Lucene.Net.Analysis.Standard"], () => new StandardAnalyzer(LuceneVersion.LUCENE_48)),
        new("WhitespaceAnalyzer", Core, () => new WhitespaceAnalyzer(LuceneVersion.LUCENE_48)),
        new("SimpleAnalyzer", Core, () => new SimpleAnalyzer(LuceneVersion.LUCENE_48)),
        new("KeywordAnalyzer", Core, () => new KeywordAnalyzer()),
        new("StopAnalyzer", Core, () => new StopAnalyzer(LuceneVersion.LUCENE_48)),
    ];

    /// <summary>The built-in analyzer <paramref name="name"/> names, or null.</summary>
    public static BuiltIn? Find(string name)
    {
        var full = name.Trim();
        var dot = full.LastIndexOf('.');
        var bare = dot < 0 ? full : full[(dot + 1)..];
        var space = dot < 0 ? null : full[..dot];
        return All.FirstOrDefault(b => string.Equals(b.Name, bare, StringComparison.OrdinalIgnoreCase)
            && (space is null || b.Namespaces.Contains(space, StringComparer.OrdinalIgnoreCase)));
    }

    /// <summary>Their names, for messages.</summary>
    public static string Names => string.Join(", ", All.Select(b => b.Name));
}
