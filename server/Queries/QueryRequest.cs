using System.Text.Json;

namespace Jackdaw.Server.Queries;

/// <summary>A query as a client sends it (RavenDB's <c>IndexQuery</c>).</summary>
public sealed record QueryRequest(string Text, IReadOnlyDictionary<string, JsonElement> Parameters, bool WaitForNonStaleResults, TimeSpan WaitTimeout)
{
    /// <summary>How long a query waits for non-stale results when it does not say (RavenDB's default).</summary>
    public static readonly TimeSpan DefaultWaitTimeout = TimeSpan.FromSeconds(15);
}
