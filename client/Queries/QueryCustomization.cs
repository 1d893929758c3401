namespace Jackdaw.Client.Queries;

/// <summary>The options <see cref="IDocumentQueryCustomization"/> sets, shared by LINQ and raw queries.</summary>
internal sealed class QueryCustomization : IDocumentQueryCustomization
{
    public bool WaitForNonStale { get; private set; }

    public TimeSpan? WaitTimeout { get; private set; }

    public bool IsNoTracking { get; private set; }

    public IDocumentQueryCustomization WaitForNonStaleResults(TimeSpan? waitTimeout = null)
    {
        if (waitTimeout is { } timeout && timeout <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(waitTimeout), timeout, "The wait for non-stale results must be positive.");
        }

        WaitForNonStale = true;
        WaitTimeout = waitTimeout;
        return this;
    }

    public IDocumentQueryCustomization NoTracking()
    {
        IsNoTracking = true;
        return this;
    }
}
