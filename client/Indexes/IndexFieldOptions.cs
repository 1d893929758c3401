namespace Jackdaw.Client;

/// <summary>Options of one field of an index; an option left null is the server's default (<see cref="FieldIndexing.Default"/>, not stored, no analyzer).</summary>
public sealed class IndexFieldOptions
{
    public FieldIndexing? Indexing { get; set; }

    public FieldStorage? Storage { get; set; }

    /// <summary>
    /// The analyzer of a <see cref="FieldIndexing.Search"/> field: a built-in Lucene analyzer
    /// (<c>StandardAnalyzer</c>, <c>WhitespaceAnalyzer</c>, ...) or one of the database's
    /// (<see cref="MaintenanceOperations.PutAnalyzersAsync(AnalyzerDefinition[])"/>). As in RavenDB, a
    /// field that names one and leaves <see cref="Indexing"/> null is a Search field.
    /// </summary>
    public string? Analyzer { get; set; }
}
