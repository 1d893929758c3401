namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>
/// Options of one field of a static index. <see cref="Analyzer"/> names a built-in Lucene analyzer or
/// one of the database's analyzers; as in RavenDB it applies to <see cref="FieldIndexing.Search"/>
/// fields only (a field that names one without saying how it is indexed is a Search field).
/// </summary>
public sealed record IndexFieldOptions(FieldIndexing Indexing, bool Stored, string? Analyzer = null);
