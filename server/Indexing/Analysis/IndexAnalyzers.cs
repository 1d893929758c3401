using Jackdaw.Server.Indexing.Lucene;
using Lucene.Net.Analysis;
using Lucene.Net.Analysis.Miscellaneous;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// The analyzers of one index: the one of each <see cref="FieldIndexing.Search"/> field whose options
/// name an analyzer, used both to index the field and to analyze <c>search()</c> terms on it; every
/// other full-text field gets <see cref="LuceneFields.SearchAnalyzer"/>. Resolved when the index opens (see
/// <see cref="AnalyzerStore.Resolve"/>), so an index keeps the analyzers it was opened with.
/// </summary>
public sealed class IndexAnalyzers
{
    /// <summary>No field names an analyzer.</summary>
    public static readonly IndexAnalyzers None = new(new Dictionary<string, Analyzer>(StringComparer.Ordinal), null, new HashSet<string>(StringComparer.Ordinal));

    private readonly IReadOnlyDictionary<string, Analyzer> _byField;

    public IndexAnalyzers(IReadOnlyDictionary<string, Analyzer> byField, string? signature, IReadOnlySet<string> customNames)
    {
        _byField = byField;
        Signature = signature;
        CustomNames = customNames;
        Writer = byField.Count == 0 ? LuceneFields.SearchAnalyzer : new PerFieldAnalyzerWrapper(LuceneFields.SearchAnalyzer, byField.ToDictionary(StringComparer.Ordinal));
    }

    /// <summary>The analyzer of the index's writer: per field, its own or the default.</summary>
    public Analyzer Writer { get; }

    /// <summary>
    /// What the index's files depend on beyond its definition: each database analyzer it uses, by
    /// lowercased name, in its canonical form (null when it uses none). Part of the index's
    /// fingerprint, so files written with another version of an analyzer are rebuilt.
    /// </summary>
    public string? Signature { get; }

    /// <summary>The database analyzers (lowercased names) whose tokens this index's files hold: a change of one rebuilds it.</summary>
    public IReadOnlySet<string> CustomNames { get; }

    /// <summary>The analyzer of a field's full-text values and search() terms; null for the default.</summary>
    public Analyzer? For(string luceneName) => _byField.GetValueOrDefault(luceneName);
}
