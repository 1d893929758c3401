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

    /// <summary>
    /// Only the revisions and revision tombstones whose revision etag is at least this; null or 0:
    /// all of them. Revisions have their own etags (not the documents'), so <see cref="StartDocumentsEtag"/>
    /// does not apply to them; a logical incremental backup passes the
    /// <see cref="SmugglerResult.LastRevisionEtag"/> of the one before, plus one.
    /// </summary>
    internal long? StartRevisionsEtag { get; set; }

    /// <summary>
    /// Logical backups: the etag the database is at is read before anything else, and is the
    /// <see cref="SmugglerResult.LastEtag"/>; the tombstones up to it are written first, then the
    /// documents (to the end of the feed: those past the last etag come again in the next file).
    /// Every document is then read after every tombstone of the file was made: a version read is
    /// newer than any deletion of its id in the file (it was made again since), and a version older
    /// than a deletion is never read. An import, which applies a file's sections in order, puts each
    /// document after its deletions and so ends with the source's version.
    /// </summary>
    internal bool DeletionsFirst { get; set; }

    /// <summary>
    /// Writes a property of the dump's top-level object right after <c>BuildVersion</c> (with
    /// <see cref="DeletionsFirst"/>), given the last etag and the last revision etag the dump covers
    /// (a logical backup's header).
    /// </summary>
    internal Action<System.Text.Json.Utf8JsonWriter, long, long>? WriteHeader { get; set; }
}
