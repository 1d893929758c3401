namespace Jackdaw.Client;

/// <summary>
/// An RQL query written out, from <see cref="IAdvancedSessionOperations.AsyncRawQuery{T}"/>: values
/// go in as <c>$name</c> parameters (<see cref="AddParameter"/>), never into the text. It runs as
/// written: the execution methods add no limit, and <see cref="CountAsync"/> and <see cref="AnyAsync"/>
/// read the server's total of matches. Documents in the results are tracked by the session;
/// results the server marks as projections are not.
/// </summary>
public interface IAsyncRawDocumentQuery<T>
{
    /// <summary>Gives <c>$name</c> its value (the name with or without the <c>$</c>).</summary>
    IAsyncRawDocumentQuery<T> AddParameter(string name, object? value);

    /// <summary>See <see cref="IDocumentQueryCustomization.WaitForNonStaleResults"/>.</summary>
    IAsyncRawDocumentQuery<T> WaitForNonStaleResults(TimeSpan? waitTimeout = null);

    /// <summary>Returns the documents without tracking them.</summary>
    IAsyncRawDocumentQuery<T> NoTracking();

    /// <summary><paramref name="stats"/> is filled each time the query runs.</summary>
    IAsyncRawDocumentQuery<T> Statistics(out QueryStatistics stats);

    Task<List<T>> ToListAsync(CancellationToken token = default);

    /// <summary>The number of matches the server reports (its <c>TotalResults</c>, whatever limit the text has).</summary>
    Task<int> CountAsync(CancellationToken token = default);

    Task<bool> AnyAsync(CancellationToken token = default);

    Task<T> FirstAsync(CancellationToken token = default);

    Task<T?> FirstOrDefaultAsync(CancellationToken token = default);

    Task<T> SingleAsync(CancellationToken token = default);

    Task<T?> SingleOrDefaultAsync(CancellationToken token = default);

    /// <summary>The results, run later with the session's other lazy operations in one request (see <see cref="ILazySessionOperations"/>).</summary>
    Lazy<Task<IEnumerable<T>>> LazilyAsync(CancellationToken token = default);

    /// <summary>The number of matches (as <see cref="CountAsync"/>), run later with the session's other lazy operations.</summary>
    Lazy<Task<int>> CountLazilyAsync(CancellationToken token = default);
}
