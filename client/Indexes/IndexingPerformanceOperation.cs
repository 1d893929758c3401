namespace Jackdaw.Client;

/// <summary>One timed step of an indexing batch, with the steps it is made of.</summary>
public sealed class IndexingPerformanceOperation
{
    public string Name { get; set; } = "";

    public double DurationInMs { get; set; }

    public IndexingPerformanceOperation[] Operations { get; set; } = [];

    /// <summary>This step and every step under it, depth first.</summary>
    public IEnumerable<IndexingPerformanceOperation> Flatten()
    {
        yield return this;
        foreach (var child in Operations)
        {
            foreach (var operation in child.Flatten())
            {
                yield return operation;
            }
        }
    }
}
