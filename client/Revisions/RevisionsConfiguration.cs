namespace Jackdaw.Client;

/// <summary>
/// A database's revisions policy (RavenDB's <c>RevisionsConfiguration</c>): <see cref="Default"/> for
/// every collection not in <see cref="Collections"/>; with neither, no revisions are stored. Set it with
/// <see cref="ConfigureRevisionsOperation"/>.
/// </summary>
public sealed class RevisionsConfiguration
{
    public RevisionsCollectionConfiguration? Default { get; set; }

    /// <summary>Policies by collection name (<c>"Orders"</c>), overriding <see cref="Default"/>.</summary>
    public Dictionary<string, RevisionsCollectionConfiguration>? Collections { get; set; }
}
