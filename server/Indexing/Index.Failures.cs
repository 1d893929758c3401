using System.Diagnostics;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Workers;

namespace Jackdaw.Server.Indexing;

// Failures of the indexing loop: counting them, backing off, rolling back to the last commit.
public sealed partial class Index
{
    /// <summary>
    /// A batch, refresh or commit failed (the disk, Lucene): the index goes back to its last commit
    /// before it goes on, the error is recorded, and the loop waits (<see cref="BackOffAsync"/>).
    /// </summary>
    private Task<bool> FailedAsync(Exception e, string action, string what, CancellationToken token)
    {
        _rollbackNeeded = true;
        _logger.LogError(e, "Index {Index}: {What} failed; it goes back to its last commit and indexes again from there", Name, what);
        RecordError("", action, e.Message);
        return BackOffAsync(token);
    }

    /// <summary>Waits <see cref="RetryDelay"/> after one more failure; false when the index stops meanwhile.</summary>
    private async Task<bool> BackOffAsync(CancellationToken token)
    {
        try
        {
            // A second at least; the rest of a longer wait ends early for a query that waits.
            var wake = Volatile.Read(ref _wake).Task;
            var delay = RetryDelay(++_failuresInARow);
            await Task.Delay(TimeSpan.FromSeconds(1), token).ConfigureAwait(false);
            if (delay > TimeSpan.FromSeconds(1))
            {
                await Task.WhenAny(Task.Delay(delay - TimeSpan.FromSeconds(1), token), wake).ConfigureAwait(false);
            }
            token.ThrowIfCancellationRequested();
            if (wake.IsCompleted)
            {
                ResetWake();
            }
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>
    /// Discards everything since the last durable commit (Lucene's rollback, which closes the
    /// writer), opens a new writer and searcher manager on the same files and takes the positions
    /// and add horizon of that commit: the loop indexes again from there, so nothing is missed or
    /// added twice. Throws while the disk still fails; the loop tries again a second later.
    /// Queries keep the searchers they hold; the next ones see the committed state.
    /// </summary>
    private void RollBackToLastCommit()
    {
        // A map-reduce's store goes back to its last commit too (it may be one commit ahead of
        // Lucene's); one whose journal failed (a full disk) takes no writes until it is reopened.
        if (_reduceStore is { Failure: not null })
        {
            _reduceStore.Reopen();
        }
        else
        {
            _reduceStore?.Abort();
        }
        _reduce?.Table.Forget();
        var positions = _files.RollBack(commit =>
        {
            // Queries see a progress no searcher they can get is behind: before the swap, the
            // lesser of the published and the committed positions (true of both searchers: a
            // commit may be ahead of the last refresh); after it, the commit's. A query that read
            // the progress before the swap acquires again (Generation).
            _pendingProgress = null;
            var published = _progress.Positions;
            var lesser = new Dictionary<string, CollectionPosition>(StringComparer.Ordinal);
            foreach (var (collection, committed) in commit)
            {
                if (published.TryGetValue(collection, out var shown))
                {
                    lesser[collection] = new CollectionPosition(Math.Min(shown.Documents, committed.Documents), Math.Min(shown.Tombstones, committed.Tombstones));
                }
            }
            _progress = new IndexProgress(lesser, CaughtUpTo: 0);
            Interlocked.Increment(ref _generation);
        });
        if (_reduceStore is not null)
        {
            _positions = positions;
            positions = RecoverReduce();
            _files.Refresh();
        }
        _progress = new IndexProgress(new Dictionary<string, CollectionPosition>(positions), CaughtUpTo: 0);
        // What it indexes again is committed at the first chance: a disk that fails again makes
        // it start over from there, not from further back each time.
        _commitSoon = true;
        _positions = positions;
        _refreshPending = false;
        _dirty = false;
        _files.SyncAgain();
        _rollbackNeeded = false;
        RollbacksDone++;
        _logger.LogWarning("Index {Index}: rolled back to its last commit; indexing again from there", Name);
    }
}
