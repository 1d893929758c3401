using Jackdaw.Server.Indexing.Lucene;

namespace Jackdaw.Server.Indexing;

/// <summary>An index's positions per collection (lowercased) and the snapshot etag it has fully indexed.</summary>
public sealed record IndexProgress(IReadOnlyDictionary<string, CollectionPosition> Positions, long CaughtUpTo)
{
    /// <summary>The highest document etag indexed in any collection.</summary>
    public long LastIndexedEtag => Positions.Count == 0 ? 0 : Positions.Values.Max(p => Math.Max(p.Documents, p.Tombstones));
}
