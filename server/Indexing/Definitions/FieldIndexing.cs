namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>How a field's values are indexed (RavenDB's <c>FieldIndexing</c>).</summary>
public enum FieldIndexing : byte
{
    /// <summary>The whole value, lowercased: a case-insensitive exact match, ranges and sorting.</summary>
    Default,

    /// <summary>The whole value as it is: a case-sensitive match.</summary>
    Exact,

    /// <summary>Full text: words, through Lucene's StandardAnalyzer (no stop words removed).</summary>
    Search,

    /// <summary>Not indexed (it may still be stored for projections).</summary>
    No,
}
