namespace Jackdaw.Server.Documents;

/// <summary>
/// A removed revision, as the revisions feed carries it (RavenDB's revision tombstone): the change
/// vector of the revision that went, under the revision etag its removal took.
/// </summary>
/// <param name="Etag">Its revision etag (the revisions' own counter, shared with revisions).</param>
/// <param name="RemovedAtTicks">UTC ticks of the removal on the node that recorded it.</param>
/// <param name="ChangeVector">The removed revision's change vector.</param>
public sealed record RevisionTombstone(long Etag, long RemovedAtTicks, string ChangeVector);
