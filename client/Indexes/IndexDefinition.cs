namespace Jackdaw.Client;

/// <summary>
/// An index as the server stores it: a name, JavaScript maps (<c>map('Orders', o => ({ Company: o.Company }))</c>)
/// and options per field. Write one through <see cref="AbstractJavaScriptIndexCreationTask"/> or
/// <see cref="MaintenanceOperations.PutIndexesAsync(IndexDefinition[])"/>.
/// </summary>
public sealed class IndexDefinition
{
    public string Name { get; set; } = "";

    public HashSet<string> Maps { get; set; } = [];

    public Dictionary<string, IndexFieldOptions> Fields { get; set; } = [];

    /// <summary>Named scripts run before the maps, whose functions the maps may call (RavenDB's <c>AdditionalSources</c>).</summary>
    public Dictionary<string, string> AdditionalSources { get; set; } = [];

    /// <summary>Set by the server when it lists definitions; not sent.</summary>
    public IndexType? Type { get; set; }
}
