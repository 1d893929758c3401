namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>Where an index has read up to in one collection: documents and tombstones, by etag.</summary>
public readonly record struct CollectionPosition(long Documents, long Tombstones);
