namespace Jackdaw.Client;

/// <summary>
/// What the server said about a query it ran, filled when the query executes (see
/// <see cref="JackdawQueryableExtensions.Statistics{T}"/> and <see cref="IAsyncRawDocumentQuery{T}.Statistics"/>).
/// </summary>
public sealed class QueryStatistics
{
    /// <summary>True when the index had not yet processed every change committed before the query.</summary>
    public bool IsStale { get; internal set; }

    /// <summary>How long the server took to run the query.</summary>
    public long DurationInMs { get; internal set; }

    /// <summary>How many documents matched, before skip and take (capped at <see cref="int.MaxValue"/>; see <see cref="LongTotalResults"/>).</summary>
    public int TotalResults { get; internal set; }

    public long LongTotalResults { get; internal set; }

    /// <summary>Matches the server left out of the results (duplicates of a projection, say).</summary>
    public int SkippedResults { get; internal set; }

    /// <summary>When the answer arrived (UTC, this machine's clock).</summary>
    public DateTime Timestamp { get; internal set; }

    /// <summary>The index that answered: a static index's name, or the server's name for a collection scan (<c>collection/Orders</c>).</summary>
    public string? IndexName { get; internal set; }

    /// <summary>When the index was last updated (UTC).</summary>
    public DateTime IndexTimestamp { get; internal set; }

    /// <summary>When the index was last queried (UTC).</summary>
    public DateTime LastQueryTime { get; internal set; }

    /// <summary>Changes when the results would; equal etags mean equal results.</summary>
    public long? ResultEtag { get; internal set; }

    public string? NodeTag { get; internal set; }
}
