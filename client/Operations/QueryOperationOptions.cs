namespace Jackdaw.Client;

/// <summary>How a patch or delete by query runs (RavenDB's <c>QueryOperationOptions</c>).</summary>
public sealed class QueryOperationOptions
{
    /// <summary>Let a stale index answer; when false (the default) the server waits up to <see cref="StaleTimeout"/> for it, then fails.</summary>
    public bool AllowStale { get; init; }

    public TimeSpan? StaleTimeout { get; init; }

    /// <summary>At most this many documents a second.</summary>
    public int? MaxOpsPerSecond { get; init; }

    /// <summary>The result lists every document it patched or deleted.</summary>
    public bool RetrieveDetails { get; init; }

    internal string ToQueryString()
    {
        var query = "?allowStale=" + (AllowStale ? "true" : "false") + "&details=" + (RetrieveDetails ? "true" : "false");
        if (MaxOpsPerSecond is { } max)
        {
            query += "&maxOpsPerSec=" + max.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }
        if (StaleTimeout is { } timeout)
        {
            query += "&staleTimeout=" + Uri.EscapeDataString(timeout.ToString("c", System.Globalization.CultureInfo.InvariantCulture));
        }
        return query;
    }
}
