namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>How an auto map-reduce index aggregates a field over a group (RavenDB's <c>AggregationOperation</c>).</summary>
public enum AggregationOperation : byte
{
    /// <summary>How many entries the group has (<c>count()</c>).</summary>
    Count,

    /// <summary>The sum of a numeric path over the group's entries (<c>sum(Freight)</c>).</summary>
    Sum,
}
