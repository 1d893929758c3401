using Jackdaw.Server.Indexing.Lucene;

namespace Jackdaw.Server.Indexing;

public sealed partial class Index
{
    /// <summary>
    /// Holds the index's last commit for a backup (its files and the positions they were made at);
    /// null for an index in memory. Dispose it when the files are copied.
    /// </summary>
    public IndexCommitCapture? CaptureCommit() => _files.CaptureCommit();
}
