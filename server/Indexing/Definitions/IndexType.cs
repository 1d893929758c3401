namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>
/// What kind of index: a static JavaScript map, an auto-index made from queries, a static
/// JavaScript map-reduce (<c>Maps</c> and a <c>Reduce</c>), or an auto map-reduce index made from a
/// <c>group by</c> query.
/// </summary>
public enum IndexType : byte
{
    Map,
    AutoMap,
    MapReduce,
    AutoMapReduce,
}
