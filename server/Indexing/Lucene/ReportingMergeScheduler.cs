using Lucene.Net.Index;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// Lucene's concurrent merges, with failures reported instead of thrown on the merge thread
/// (where Lucene.Net 4.8 keeps them unseen): the merge is tried again at a later flush.
/// </summary>
internal sealed class ReportingMergeScheduler(Action<Exception> failed) : ConcurrentMergeScheduler
{
    protected override void HandleMergeException(Exception exc)
    {
        failed(exc);
        // As Lucene's own handler: a pause, so a disk that keeps failing is not retried in a loop.
        Thread.Sleep(250);
    }
}
