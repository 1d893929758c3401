using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// One connected worker: the batch sent and not yet acknowledged, the next one prepared while the
/// worker works (both go back to the subscription if it leaves), and its closing (taken over,
/// dropped, deleted).
/// </summary>
public sealed class SubscriptionSession : IDisposable
{
    private readonly SubscriptionCoordinator _subscription;
    private readonly CancellationTokenSource _closed = new();
    private readonly List<SubscriptionBatch> _held = new();

    internal SubscriptionSession(SubscriptionCoordinator subscription, SubscriptionStrategy strategy, string address)
    {
        _subscription = subscription;
        Strategy = strategy;
        Address = address;
        Since = DateTime.UtcNow;
    }

    public SubscriptionStrategy Strategy { get; }

    public string Address { get; }

    public DateTime Since { get; }

    /// <summary>The batch sent and not yet acknowledged.</summary>
    public SubscriptionBatch? InFlight { get; private set; }

    /// <summary>The subscription this worker is connected to.</summary>
    public SubscriptionCoordinator Subscription => _subscription;

    /// <summary>The batches taken and not acknowledged: the one sent, then the one prepared (a snapshot; never blocks).</summary>
    public IReadOnlyList<SubscriptionBatch> Held => _heldView;

    private volatile SubscriptionBatch[] _heldView = [];
    private bool _leaving;

    /// <summary>The session takes no more batches (a take in progress ends first); returns the ranges it holds.</summary>
    internal IReadOnlyList<SubscriptionBatch> Leave()
    {
        lock (_held)
        {
            _leaving = true;
            return _held.ToArray();
        }
    }

    /// <summary>Cancelled when the server closes this worker's connection; <see cref="CloseReason"/> says why.</summary>
    public CancellationToken Closed => _closed.Token;

    public string? CloseReason { get; private set; }

    /// <summary>Whether the worker may connect again (a drop, the database closing), or not (taken over, disabled, deleted).</summary>
    public bool CanReconnect { get; private set; }

    public void Close(string reason, bool canReconnect = false)
    {
        if (CloseReason is null)
        {
            CanReconnect = canReconnect;
        }
        CloseReason ??= reason;
        try
        {
            _closed.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }

    /// <summary>
    /// The next batch with documents, written by <paramref name="writer"/>, waiting for commits as
    /// needed; null when <paramref name="idle"/> passes first (send a heartbeat). Ranges without a
    /// matching document are acknowledged on the way. It may run while the previous batch waits
    /// for its acknowledgement (it is held, not sent, until <see cref="MarkSent"/>); the caller
    /// awaits it before disposing the session.
    /// </summary>
    public async Task<SubscriptionBatch?> NextBatchAsync(int maxDocuments, long maxBytes, TimeSpan idle, ISubscriptionBatchWriter writer, CancellationToken cancellationToken)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, Closed);
        var deadline = DateTime.UtcNow + idle;
        while (true)
        {
            linked.Token.ThrowIfCancellationRequested();
            // The database's position before the take, not the subscription's: documents of other
            // collections after the last one it matches must not wake the wait again at once (it
            // spun until its heartbeat, holding up the connection).
            var seen = _subscription.DatabaseEtag;
            // Captured before the take too: ranges given back after it wake this wait.
            var returned = _subscription.RangesReturned;
            SubscriptionBatch? batch;
            // Taken and held in one step: a worker that leaves gives back every range it took.
            lock (_held)
            {
                if (_leaving)
                {
                    throw new OperationCanceledException("The worker's session has ended.");
                }
                batch = _subscription.TakeBatch(maxDocuments, maxBytes, writer);
                if (batch is { Count: > 0 })
                {
                    _held.Add(batch);
                    _heldView = _held.ToArray();
                }
            }
            if (batch is { Count: > 0 })
            {
                return batch;
            }
            if (batch is not null)
            {
                await _subscription.CompleteAsync(batch, sent: false).ConfigureAwait(false);
                continue;
            }
            var left = deadline - DateTime.UtcNow;
            if (left <= TimeSpan.Zero)
            {
                return null;
            }
            try
            {
                await _subscription.WaitForChangesAsync(Math.Max(seen, _subscription.SentUpTo), returned, linked.Token).WaitAsync(left, linked.Token).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                return null;
            }
        }
    }

    /// <summary>The batch is being sent: the next acknowledgement must be of its last etag.</summary>
    /// <exception cref="InvalidOperationException">Another batch is still waiting for its acknowledgement.</exception>
    public void MarkSent(SubscriptionBatch batch)
    {
        if (InFlight is not null)
        {
            throw new InvalidOperationException("A batch is sent only after the previous one was acknowledged.");
        }
        InFlight = batch;
        _subscription.MarkBatchSent();
    }

    /// <summary>The worker acknowledged the batch in flight (its last etag): stored durably before this returns.</summary>
    /// <exception cref="BadRequestException">No batch is in flight, or the etag is not its last.</exception>
    public async Task AcknowledgeAsync(long etag)
    {
        var batch = InFlight ?? throw new BadRequestException($"An acknowledgement of etag {etag} came with no batch in flight.");
        if (etag != batch.LastEtag)
        {
            throw new BadRequestException($"An acknowledgement of etag {etag} does not match the batch in flight, whose last etag is {batch.LastEtag}.");
        }
        await _subscription.CompleteAsync(batch, sent: true).ConfigureAwait(false);
        InFlight = null;
        lock (_held)
        {
            _held.Remove(batch);
            _heldView = _held.ToArray();
        }
    }

    public void Dispose()
    {
        _subscription.Remove(this);
        _closed.Dispose();
    }
}
