namespace Jackdaw.Client;

/// <summary>
/// What the server said about a streamed query before its first result (RavenDB's
/// <c>StreamQueryStatistics</c>). Filled when the stream starts: by the time the first
/// <c>MoveNextAsync</c> of the enumeration returns, even when there is no result.
/// </summary>
public sealed class StreamQueryStatistics
{
    /// <summary>The index that answers: a static or auto-index's name, or the server's name for a collection scan (<c>collection/Orders</c>).</summary>
    public string? IndexName { get; internal set; }

    /// <summary>True when the index had not yet processed every change committed before the query.</summary>
    public bool IsStale { get; internal set; }

    /// <summary>When the index was last updated (UTC).</summary>
    public DateTime IndexTimestamp { get; internal set; }

    /// <summary>How many results match, before paging (capped at <see cref="int.MaxValue"/>; see <see cref="LongTotalResults"/>). From an index: its matching entries.</summary>
    public int TotalResults { get; internal set; }

    public long LongTotalResults { get; internal set; }

    /// <summary>Changes when the results would.</summary>
    public long ResultEtag { get; internal set; }
}
