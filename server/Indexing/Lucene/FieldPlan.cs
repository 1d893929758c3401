using Jackdaw.Server.Indexing.Definitions;
using Lucene.Net.Analysis;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// Where one field of an index goes in Lucene, and how; <see cref="Analyzer"/> is the analyzer its
/// options name (for a Search field: its values and search() terms go through it), null for the default.
/// </summary>
public sealed record FieldPlan(string LuceneName, FieldIndexing Indexing, bool Stored, Analyzer? Analyzer = null);
