using Jackdaw.Server.Documents.Commands;

namespace Jackdaw.Server.Databases;

/// <summary>
/// Deletes the chunks of orphan attachment streams (contents no attachment references any more,
/// uploads cut off or given up, staged duplicates of a content already stored), through the merger,
/// <see cref="ChunksPerTransaction"/> chunks per transaction so that a large orphan never makes one
/// huge commit. Runs when the database opens with orphans, and after every commit that made some.
/// </summary>
public sealed class AttachmentCleaner : IAsyncDisposable
{
    /// <summary>Chunks deleted per transaction: 1,024 × 64 KiB of content.</summary>
    public const int ChunksPerTransaction = 1024;

    private readonly DocumentDatabase _database;
    private readonly ILogger _logger;
    private readonly SemaphoreSlim _running = new(1, 1);
    private Task _scheduled = Task.CompletedTask;
    private int _requested;
    private int _disposed;
    private long _removed;

    internal AttachmentCleaner(DocumentDatabase database, ILogger logger)
    {
        _database = database;
        _logger = logger;
    }

    /// <summary>Chunks deleted since the database opened.</summary>
    public long RemovedChunks => Interlocked.Read(ref _removed);

    /// <summary>Starts a clean-up in the background unless one is about to run; it will see every orphan committed before this call.</summary>
    public void Schedule()
    {
        if (Volatile.Read(ref _disposed) != 0 || Interlocked.Exchange(ref _requested, 1) != 0)
        {
            return;
        }
        _scheduled = Task.Run(RunScheduledAsync);
    }

    /// <summary>Deletes every orphan stream there is now; returns the chunks deleted.</summary>
    public async Task<long> CleanAsync(CancellationToken cancellationToken = default)
    {
        await _running.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            // A request made before this point is served by this run.
            Volatile.Write(ref _requested, 0);
            long total = 0;
            while (Volatile.Read(ref _disposed) == 0)
            {
                var command = new RemoveAttachmentOrphansCommand(ChunksPerTransaction);
                await _database.EnqueueAsync(command).ConfigureAwait(false);
                total += command.Removed;
                Interlocked.Add(ref _removed, command.Removed);
                if (!command.Remaining)
                {
                    break;
                }
            }
            return total;
        }
        finally
        {
            _running.Release();
        }
    }

    private async Task RunScheduledAsync()
    {
        try
        {
            var removed = await CleanAsync().ConfigureAwait(false);
            if (removed > 0)
            {
                _logger.LogDebug("Deleted {Count} chunks of orphan attachment streams of {Database}", removed, _database.Name);
            }
        }
        catch (Exception e) when (e is ObjectDisposedException or Errors.DatabaseUnavailableException || _database.IsClosing)
        {
            // The database is closing: the next open finds the orphans and cleans them.
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "Deleting orphan attachment streams of {Database} failed; they stay until the next commit that orphans one, or the next open", _database.Name);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        await _scheduled.ConfigureAwait(false);
    }
}
