using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Databases;

/// <summary>
/// Published once per durable transaction that changed documents, in commit order: everything up
/// to <see cref="LastEtag"/> is on disk and visible to new readers.
/// </summary>
/// <param name="LastEtag">The etag of the transaction's last change.</param>
/// <param name="Changes">What the transaction changed, in etag order.</param>
public sealed record DurableCommit(long LastEtag, IReadOnlyList<DocumentChange> Changes);
