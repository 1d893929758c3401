namespace Jackdaw.Client;

/// <summary>A document an index's map failed on, and why.</summary>
public sealed class IndexingError
{
    /// <summary>The id of the document.</summary>
    public string? Document { get; set; }

    /// <summary>What the index was doing, e.g. <c>Map</c>.</summary>
    public string? Action { get; set; }

    public string? Error { get; set; }

    public DateTime Timestamp { get; set; }
}
