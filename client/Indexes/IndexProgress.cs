namespace Jackdaw.Client;

/// <summary>How far a replacement built side by side has come (<see cref="IndexStats.Progress"/>).</summary>
public sealed class IndexProgress
{
    /// <summary>Documents of the mapped collections indexed so far.</summary>
    public long ProcessedDocuments { get; set; }

    /// <summary>Documents the mapped collections hold now.</summary>
    public long TotalDocuments { get; set; }

    /// <summary>The server's estimate from its recent batches; null before it has one.</summary>
    public TimeSpan? EstimatedTimeLeft { get; set; }
}
