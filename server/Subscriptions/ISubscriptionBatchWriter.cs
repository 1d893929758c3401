using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// Writes a batch's message while its documents are read, in the read transaction that found
/// them, so no document is copied out of the snapshot (the wire format is the caller's).
/// </summary>
public interface ISubscriptionBatchWriter
{
    /// <summary>A new batch begins (whatever an unfinished one wrote is dropped).</summary>
    void Start();

    /// <summary>One matching document, in etag order.</summary>
    void Add(string id, long etag, ReadOnlySpan<byte> document);

    /// <summary>The batch is complete: its message (valid until the next <see cref="Start"/>).</summary>
    ReadOnlyMemory<byte> Finish(long lastEtag, DocumentsReader reader);
}
