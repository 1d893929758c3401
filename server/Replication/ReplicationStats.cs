namespace Jackdaw.Server.Replication;

/// <summary>What a database received by replication since it opened (counters; read them with <see cref="Snapshot"/>).</summary>
public sealed class ReplicationStats
{
    private long _batches;
    private long _applied;
    private long _alreadyMerged;
    private long _repeated;
    private long _conflicts;

    /// <summary>Batches applied (each one merged transaction).</summary>
    public long Batches => Interlocked.Read(ref _batches);

    /// <summary>Items stored: versions and deletions newer than this node's, and resolved conflicts.</summary>
    public long Applied => Interlocked.Read(ref _applied);

    /// <summary>Items skipped because this node already held them (a change vector at or past theirs).</summary>
    public long AlreadyMerged => Interlocked.Read(ref _alreadyMerged);

    /// <summary>Items skipped because their etag was at or before the source's stored position: sent twice. Zero when resuming works.</summary>
    public long Repeated => Interlocked.Read(ref _repeated);

    /// <summary>Concurrent versions met (resolved or kept).</summary>
    public long Conflicts => Interlocked.Read(ref _conflicts);

    internal void Add(long applied, long alreadyMerged, long repeated, long conflicts)
    {
        Interlocked.Increment(ref _batches);
        Interlocked.Add(ref _applied, applied);
        Interlocked.Add(ref _alreadyMerged, alreadyMerged);
        Interlocked.Add(ref _repeated, repeated);
        Interlocked.Add(ref _conflicts, conflicts);
    }

    public override string ToString() =>
        $"batches {Batches}, applied {Applied}, already merged {AlreadyMerged}, repeated {Repeated}, conflicts {Conflicts}";
}
