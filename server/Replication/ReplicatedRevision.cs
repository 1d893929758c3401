using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Replication;

/// <summary>
/// A revision of a source's revisions feed, as it travels: stored by the receiver as it came
/// (its change vector, time and flags), once per change vector.
/// </summary>
/// <param name="Etag">Its revision etag on the source (the position it moves the receiver to).</param>
/// <param name="Id">The document's id.</param>
/// <param name="Collection">The collection; null when none.</param>
/// <param name="ChangeVector">The version's change vector (of the deletion for a delete revision).</param>
/// <param name="LastModifiedTicks">UTC ticks of the version's time.</param>
/// <param name="Flags">The revision's flags (<c>Revision</c>, <c>DeleteRevision</c>, ...).</param>
/// <param name="Document">The version's Disk-mode blittable; empty for a delete revision.</param>
public sealed record ReplicatedRevision(long Etag, string Id, string? Collection, string ChangeVector, long LastModifiedTicks, DocumentFlags Flags, byte[] Document);
