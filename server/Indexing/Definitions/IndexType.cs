namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>What kind of index: a static JavaScript map, or an auto-index made from queries.</summary>
public enum IndexType : byte
{
    Map,
    AutoMap,
}
