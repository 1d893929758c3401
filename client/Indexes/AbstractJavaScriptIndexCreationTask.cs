namespace Jackdaw.Client;

/// <summary>
/// An index declared in code: subclass it, fill <see cref="Maps"/> and <see cref="Fields"/> in the
/// constructor, and create it with <see cref="ExecuteAsync"/> or, for every task of an assembly,
/// <see cref="IndexCreation.CreateIndexesAsync"/>. Query it with
/// <c>session.Query&lt;T, TIndex&gt;()</c>.
/// <code>
/// public class Orders_ByCompany : AbstractJavaScriptIndexCreationTask
/// {
///     public Orders_ByCompany()
///     {
///         Maps = ["map('Orders', o => ({ Company: o.Company, Freight: o.Freight }))"];
///         Fields = new() { ["Company"] = new IndexFieldOptions { Indexing = FieldIndexing.Exact } };
///     }
/// }
/// </code>
/// A map-reduce index also sets <see cref="Reduce"/>; its results are queried as rows of their own
/// type (<c>session.Query&lt;OrdersByCompany.Result, OrdersByCompany&gt;()</c>), which the session
/// does not track:
/// <code>
/// public class Orders_ByCompany : AbstractJavaScriptIndexCreationTask
/// {
///     public Orders_ByCompany()
///     {
///         Maps = ["map('Orders', o => ({ Company: o.Company, Count: 1, Total: o.Freight }))"];
///         Reduce = "groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0), Total: g.values.reduce((t, r) => t + r.Total, 0) }))";
///     }
/// }
/// </code>
/// </summary>
public abstract class AbstractJavaScriptIndexCreationTask
{
    /// <summary>The index's name: by default the class name with <c>_</c> read as <c>/</c> (<c>Orders_ByCompany</c> → <c>Orders/ByCompany</c>).</summary>
    public virtual string IndexName => GetType().Name.Replace('_', '/');

    /// <summary>JavaScript maps, each <c>map('Collection', doc => ({ Field: doc.Field, ... }))</c>.</summary>
    public HashSet<string> Maps { get; set; } = [];

    /// <summary>Options per field the maps output.</summary>
    public Dictionary<string, IndexFieldOptions> Fields { get; set; } = [];

    /// <summary>
    /// The reduce that makes this a map-reduce index: <c>groupBy(r =&gt; key).aggregate(g =&gt; result)</c>,
    /// where the key is a field (<c>r.Company</c>) or an object of fields (<c>({ Company: r.Company, Month: r.Month })</c>)
    /// and <c>g.key</c>, <c>g.values</c> are the key and its map entries (or earlier results). Null for a map index.
    /// </summary>
    public string? Reduce { get; set; }

    /// <summary>A collection the reduce results are also written into as documents (null for none).</summary>
    public string? OutputReduceToCollection { get; set; }

    /// <summary>The id pattern of reference documents for the output documents, e.g. <c>reports/orders/{Company}</c>.</summary>
    public string? PatternForOutputReduceToCollectionReferences { get; set; }

    /// <summary>The collection of the reference documents (the server's default: <c>{OutputReduceToCollection}/References</c>).</summary>
    public string? PatternReferencesCollectionName { get; set; }

    /// <summary>
    /// Named scripts run before the maps: helpers the maps call, e.g.
    /// <c>["totals.js"] = "function total(o) { return o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0); }"</c>.
    /// </summary>
    public Dictionary<string, string> AdditionalSources { get; set; } = [];

    /// <summary>The definition sent to the server.</summary>
    public virtual IndexDefinition CreateIndexDefinition() => new()
    {
        Name = IndexName,
        Maps = [.. Maps],
        Fields = Fields.ToDictionary(f => f.Key, f => new IndexFieldOptions { Indexing = f.Value.Indexing, Storage = f.Value.Storage, Analyzer = f.Value.Analyzer }),
        AdditionalSources = new Dictionary<string, string>(AdditionalSources, StringComparer.Ordinal),
        Reduce = Reduce,
        OutputReduceToCollection = OutputReduceToCollection,
        PatternForOutputReduceToCollectionReferences = PatternForOutputReduceToCollectionReferences,
        PatternReferencesCollectionName = PatternReferencesCollectionName,
    };

    /// <summary>
    /// Creates or updates the index in <paramref name="database"/> (the store's by default) and says
    /// what that did. Putting an unchanged definition again changes nothing; a changed one is built
    /// side by side and replaces the index once caught up, which answers queries meanwhile.
    /// Throws <see cref="IndexCompilationException"/> for maps the server cannot compile and
    /// <see cref="IndexLockedException"/> for a changed index locked with <see cref="IndexLockMode.LockedError"/>.
    /// </summary>
    public async Task<IndexDeployment> ExecuteAsync(DocumentStore store, string? database = null, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(store);
        var maintenance = database is null ? store.Maintenance : store.Maintenance.ForDatabase(database);
        var deployed = await IndexCreation.DeployAsync(maintenance, [CreateIndexDefinition()], token).ConfigureAwait(false);
        return deployed[0];
    }
}
