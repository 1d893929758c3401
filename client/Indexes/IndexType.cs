namespace Jackdaw.Client;

/// <summary>What kind of index (RavenDB's names; Jackdaw builds JavaScript map and map-reduce indexes and auto-indexes).</summary>
public enum IndexType
{
    None,
    AutoMap,
    AutoMapReduce,
    Map,
    MapReduce,
    Faulty,
    JavaScriptMap,
    JavaScriptMapReduce,
}
