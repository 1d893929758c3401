using Jackdaw.Server.Indexing.Lucene;

namespace Jackdaw.Server.Indexing;

public sealed partial class Index
{
    /// <summary>
    /// Holds the index's last commit for a backup (its files and the positions they were made at);
    /// null for an index in memory, and for a map-reduce index (its reduce store is not copied: a
    /// restored map-reduce index is rebuilt from the documents). Dispose it when the files are copied.
    /// </summary>
    public IndexCommitCapture? CaptureCommit() => _reduceStore is null ? _files.CaptureCommit() : null;
}
