namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>How much of the indexing time an index gets.</summary>
public enum IndexPriority : byte
{
    Low,
    Normal,
    High,
}
