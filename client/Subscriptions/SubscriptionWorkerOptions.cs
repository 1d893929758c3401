namespace Jackdaw.Client;

/// <summary>How a <see cref="SubscriptionWorker{T}"/> connects, batches and recovers.</summary>
public sealed class SubscriptionWorkerOptions
{
    public SubscriptionWorkerOptions(string subscriptionName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(subscriptionName);
        SubscriptionName = subscriptionName;
    }

    public string SubscriptionName { get; }

    public SubscriptionOpeningStrategy Strategy { get; set; } = SubscriptionOpeningStrategy.OpenIfFree;

    /// <summary>The most documents in one batch (the server allows 1 to 65,536).</summary>
    public int MaxDocsPerBatch { get; set; } = 4096;

    /// <summary>
    /// When the batch function throws: true acknowledges the batch anyway (the error goes to
    /// <see cref="SubscriptionWorker{T}.OnUnexpectedSubscriptionError"/>); false stops the worker with
    /// <see cref="SubscriberErrorException"/> and leaves the batch unacknowledged, so it is delivered again.
    /// </summary>
    public bool IgnoreSubscriberErrors { get; set; }

    /// <summary>
    /// How long the worker keeps reconnecting after connection failures with no batch in between
    /// before it gives up with <see cref="SubscriptionInvalidStateException"/>.
    /// </summary>
    public TimeSpan MaxErroneousPeriod { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>The first wait before a reconnection; each further failure doubles it, up to 30 s (or this value when larger).</summary>
    public TimeSpan TimeToWaitBeforeConnectionRetry { get; set; } = TimeSpan.FromSeconds(5);
}
