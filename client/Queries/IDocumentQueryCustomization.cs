namespace Jackdaw.Client;

/// <summary>Options of one query, set through <see cref="JackdawQueryableExtensions.Customize{T}"/>.</summary>
public interface IDocumentQueryCustomization
{
    /// <summary>
    /// Asks the server to answer only once the index has processed every change committed before
    /// the query, waiting at most <paramref name="waitTimeout"/> (15 seconds when null); past it the
    /// query fails with <see cref="ServerTimeoutException"/>.
    /// </summary>
    IDocumentQueryCustomization WaitForNonStaleResults(TimeSpan? waitTimeout = null);

    /// <summary>Returns the documents without tracking them: the session neither keeps nor saves them.</summary>
    IDocumentQueryCustomization NoTracking();
}
