namespace Jackdaw.Server.Queries;

/// <summary>
/// The slow-query log of every database (<c>Queries:SlowQueryThresholdMs</c>, <c>Queries:SlowQueryLogSize</c>;
/// e.g. <c>JACKDAW_QUERIES__SLOWQUERYTHRESHOLDMS=0</c> logs every query).
/// </summary>
public sealed record SlowQueryOptions
{
    public const int DefaultThresholdMs = 500;
    public const int DefaultLogSize = 256;

    /// <summary>A query that takes at least this long is logged; 0 logs every query.</summary>
    public int ThresholdMs { get; init; } = DefaultThresholdMs;

    /// <summary>The most slow queries a database keeps (the oldest go first).</summary>
    public int LogSize { get; init; } = DefaultLogSize;
}
