namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>RavenDB's <c>DatabaseSmugglerExportOptions</c>, and where an incremental export starts.</summary>
public sealed class SmugglerExportOptions : SmugglerOptions
{
    /// <summary>
    /// Only the documents and tombstones whose etag is at least this (RavenDB's <c>startEtag</c>
    /// query parameter); null or 0: from the start. A logical incremental backup passes the
    /// <see cref="SmugglerResult.LastEtag"/> of the one before, plus one.
    /// </summary>
    public long? StartDocumentsEtag { get; set; }
}
