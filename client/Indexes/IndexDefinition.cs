namespace Jackdaw.Client;

/// <summary>
/// An index as the server stores it: a name, JavaScript maps (<c>map('Orders', o => ({ Company: o.Company }))</c>),
/// for a map-reduce index a <see cref="Reduce"/>, and options per field. Write one through
/// <see cref="AbstractJavaScriptIndexCreationTask"/> or <see cref="MaintenanceOperations.PutIndexesAsync(IndexDefinition[])"/>.
/// </summary>
public sealed class IndexDefinition
{
    public string Name { get; set; } = "";

    public HashSet<string> Maps { get; set; } = [];

    public Dictionary<string, IndexFieldOptions> Fields { get; set; } = [];

    /// <summary>Named scripts run before the maps, whose functions the maps may call (RavenDB's <c>AdditionalSources</c>).</summary>
    public Dictionary<string, string> AdditionalSources { get; set; } = [];

    /// <summary>
    /// The reduce of a map-reduce index (RavenDB's JavaScript form,
    /// <c>groupBy(r =&gt; r.Company).aggregate(g =&gt; ({ Company: g.key, Count: g.values.reduce((c, r) =&gt; c + r.Count, 0) }))</c>);
    /// null for a map index.
    /// </summary>
    public string? Reduce { get; set; }

    /// <summary>A collection the server also writes the reduce results into, as documents (map-reduce only; null for none).</summary>
    public string? OutputReduceToCollection { get; set; }

    /// <summary>
    /// With <see cref="OutputReduceToCollection"/>: the id pattern of reference documents that name
    /// each result's output document, e.g. <c>reports/orders/{Company}</c> (predictable ids).
    /// </summary>
    public string? PatternForOutputReduceToCollectionReferences { get; set; }

    /// <summary>The collection of those reference documents (the server's default: <c>{OutputReduceToCollection}/References</c>).</summary>
    public string? PatternReferencesCollectionName { get; set; }

    /// <summary>Set by the server when it lists definitions; not sent.</summary>
    public IndexType? Type { get; set; }
}
