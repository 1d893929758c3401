namespace Jackdaw.Server.Replication;

/// <summary>
/// An attachment content a batch carries: its SHA-256 and size. Its bytes follow the batch's
/// message as one binary WebSocket message of their own, in the batch's order (see <see cref="ReplicationBatch"/>).
/// </summary>
public sealed record ReplicatedContent(byte[] Hash, long Size)
{
    public string Base64Hash { get; } = Convert.ToBase64String(Hash);
}
