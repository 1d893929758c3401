namespace Jackdaw.Server.Replication;

/// <summary>
/// One change of a source's etag feed, as it travels: a document's version or a deletion, with the
/// change vector and time it was written with on the node that wrote it.
/// </summary>
/// <param name="Etag">Its etag in the source's feed (the position it moves the receiver to).</param>
/// <param name="IsTombstone">A deletion (no <paramref name="Document"/>).</param>
/// <param name="Id">The id as stored (its first casing).</param>
/// <param name="Collection">The collection; null when none.</param>
/// <param name="ChangeVector">The version's change vector.</param>
/// <param name="LastModifiedTicks">UTC ticks of <c>@last-modified</c> (of the deletion for a tombstone).</param>
/// <param name="Document">The stored Disk-mode blittable, its <c>@metadata</c> stamped; empty for a tombstone.</param>
/// <param name="Attachments">A document's attachments as its source holds them (name, base64 hash, content type, size); null for a tombstone.</param>
public sealed record ReplicationItem(long Etag, bool IsTombstone, string Id, string? Collection, string ChangeVector, long LastModifiedTicks, byte[] Document,
    IReadOnlyList<Documents.AttachmentInfo>? Attachments = null);
