namespace Jackdaw.Client;

/// <summary>
/// The revisions policy of one collection, or the default of every other (RavenDB's
/// <c>RevisionsCollectionConfiguration</c>). With it enabled, every write of a document stores a
/// revision; the oldest go once both limits allow (more than <see cref="MinimumRevisionsToKeep"/>
/// and older than <see cref="MinimumRevisionAgeToKeep"/>; a limit left null does not hold any back).
/// </summary>
public sealed class RevisionsCollectionConfiguration
{
    /// <summary>Stores no revisions for these documents (those they have stay).</summary>
    public bool Disabled { get; set; }

    /// <summary>Revisions kept per document at least; null for all of them (unless the age limit lets some go).</summary>
    public long? MinimumRevisionsToKeep { get; set; }

    /// <summary>Revisions younger than this are kept; null for no age limit. Sent as <c>d.hh:mm:ss</c>.</summary>
    public TimeSpan? MinimumRevisionAgeToKeep { get; set; }

    /// <summary>Deleting a document deletes its revisions too, instead of storing a "deleted" revision.</summary>
    public bool PurgeOnDelete { get; set; }

    /// <summary>At most this many revisions go per write of a document (the rest at later writes); null for no limit.</summary>
    public long? MaximumRevisionsToDeleteUponDocumentUpdate { get; set; }
}
