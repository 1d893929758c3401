namespace Jackdaw.Server.Databases;

/// <summary>Settings of one database, the same for every database of a server.</summary>
public sealed record DocumentDatabaseOptions
{
    /// <summary>How often tombstones every consumer has passed are removed; <see cref="Timeout.InfiniteTimeSpan"/> turns the timer off.</summary>
    public TimeSpan TombstoneCleanupInterval { get; init; } = TimeSpan.FromMinutes(5);

    /// <summary>The most tombstones one clean-up transaction removes (a large backlog takes several).</summary>
    public int TombstoneCleanupBatch { get; init; } = 16 * 1024;

    /// <summary>The engine's file layer: the real files, or a fault injector in tests.</summary>
    public Jackdaw.Storage.Engine.StorageIo StorageIo { get; init; } = Jackdaw.Storage.Engine.StorageIo.Default;

    /// <summary>The first wait before reopening a database whose storage failed; it doubles up to <see cref="MaxReopenDelay"/>.</summary>
    public TimeSpan FirstReopenDelay { get; init; } = TimeSpan.FromMilliseconds(250);

    /// <summary>The longest wait between attempts to reopen a failed database.</summary>
    public TimeSpan MaxReopenDelay { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// This node's tag (A, B, C...): the tag of the change-vector entries this node writes, the
    /// suffix of the ids it generates (<c>orders/0000000000000000012-B</c>) and of HiLo ranges'
    /// <c>ServerTag</c>. A single server is node A; the cluster sets it from the node's identity
    /// before any database opens.
    /// </summary>
    public string NodeTag { get; init; } = Documents.ChangeVectors.DefaultTag;

    /// <summary>The clock that stamps documents' <c>@last-modified</c> and measures revisions' age (<c>MinimumRevisionAgeToKeep</c>); tests move it instead of waiting.</summary>
    public TimeProvider Clock { get; init; } = TimeProvider.System;

    /// <summary>
    /// Parts built on top of every database when it opens (its indexes), in order, and disposed
    /// in reverse order before it closes. The Hosting layer supplies them, so this layer does not
    /// know what they are.
    /// </summary>
    public IReadOnlyList<Func<DocumentDatabase, IAsyncDisposable>> Components { get; init; } = [];
}
