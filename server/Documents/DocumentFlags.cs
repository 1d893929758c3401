namespace Jackdaw.Server.Documents;

/// <summary>
/// The flags the server keeps in a document's <c>@metadata.@flags</c>, in RavenDB's names and
/// format (<c>"HasAttachments, HasRevisions"</c>). Flags a body sends that are not the server's
/// (<c>Artificial</c>, <c>FromIndex</c> of map-reduce outputs) are kept as written.
/// </summary>
[Flags]
public enum DocumentFlags
{
    None = 0,
    HasRevisions = 1,
    HasAttachments = 2,

    /// <summary>Set on a stored revision.</summary>
    Revision = 4,

    /// <summary>Set on the revision a delete leaves.</summary>
    DeleteRevision = 8,
}
