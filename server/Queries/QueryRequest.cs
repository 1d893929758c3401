using System.Text.Json;

namespace Jackdaw.Server.Queries;

/// <summary>A query as a client sends it (RavenDB's <c>IndexQuery</c>).</summary>
public sealed record QueryRequest(string Text, IReadOnlyDictionary<string, JsonElement> Parameters, bool WaitForNonStaleResults, TimeSpan WaitTimeout)
{
    /// <summary>How long a query waits for non-stale results when it does not say (RavenDB's default).</summary>
    public static readonly TimeSpan DefaultWaitTimeout = TimeSpan.FromSeconds(15);

    /// <summary>
    /// Results to skip beyond the query's own <c>offset</c> (<c>?start=</c> of <c>/queries</c>): a
    /// page of the query's results without rewriting its text, as the studio's query page pages.
    /// </summary>
    public long Start { get; init; }

    /// <summary>At most this many results, whatever larger <c>limit</c> the query has (<c>?pageSize=</c>); null: the query's own.</summary>
    public long? PageSize { get; init; }

    /// <summary>Answer the query's <c>Timings</c> as <c>include timings()</c> does (<c>?timings=true</c>).</summary>
    public bool IncludeTimings { get; init; }
}
