namespace Jackdaw.Client;

/// <summary>A subscription as the server reports it (<c>GET /databases/{db}/subscriptions</c>).</summary>
public sealed class SubscriptionState
{
    public long SubscriptionId { get; init; }

    public string SubscriptionName { get; init; } = "";

    public string Query { get; init; } = "";

    /// <summary>The acknowledged position as a change vector; the next batch starts after it.</summary>
    public string? ChangeVectorForNextBatchStartingPoint { get; init; }

    /// <summary>Every matching document up to this etag was delivered and acknowledged.</summary>
    public long AckedEtag { get; init; }

    public bool Disabled { get; init; }

    public DateTime CreatedAt { get; init; }

    public DateTime? LastBatchAckTime { get; init; }

    public DateTime? LastBatchTime { get; init; }

    public DateTime? LastClientConnectionTime { get; init; }

    /// <summary>The workers connected now.</summary>
    public IReadOnlyList<SubscriptionConnectionInfo> Workers { get; init; } = [];

    /// <summary>Matching documents not yet delivered.</summary>
    public long PendingDocuments { get; init; }
}
