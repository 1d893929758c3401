namespace Jackdaw.Server.Backup;

/// <summary>What a restore (or a verification) applied.</summary>
public sealed record RestoreResult
{
    public required string DatabaseName { get; init; }

    /// <summary>The files applied, in order.</summary>
    public required IReadOnlyList<string> Files { get; init; }

    public long Etag { get; init; }

    public long TransactionId { get; init; }

    public int Indexes { get; init; }

    public long SizeInBytes { get; init; }

    public TimeSpan Duration { get; init; }
}
