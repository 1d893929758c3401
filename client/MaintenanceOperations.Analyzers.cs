using System.Text.Json;
using Jackdaw.Client.Json;

namespace Jackdaw.Client;

// The analyzers of one database, with RavenDB's routes and shapes (its PutAnalyzersOperation and
// DeleteAnalyzerOperation, and the list its studio reads).
public sealed partial class MaintenanceOperations
{
    /// <summary>
    /// Creates or replaces analyzers in one request (<c>PUT /databases/{db}/admin/analyzers</c>): all of
    /// them or, if one cannot be built, none (<see cref="AnalyzerCompilationException"/>). An index whose
    /// Search fields use an analyzer whose recipe changed is rebuilt by the server from the start.
    /// </summary>
    public Task PutAnalyzersAsync(params AnalyzerDefinition[] analyzers) => PutAnalyzersAsync(analyzers, CancellationToken.None);

    public async Task PutAnalyzersAsync(IEnumerable<AnalyzerDefinition> analyzers, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(analyzers);
        var list = analyzers.ToList();
        if (list.Count == 0 || list.Any(a => a is null || string.IsNullOrWhiteSpace(a.Name)))
        {
            throw new ArgumentException("Give at least one analyzer, each with a name.", nameof(analyzers));
        }

        var body = JsonSerializer.SerializeToUtf8Bytes(new AnalyzersBody(list), WireJson.Options);
        using var response = await _executor.SendAsync(HttpMethod.Put, IndexesPath("/admin/analyzers"), body, token).ConfigureAwait(false);
    }

    /// <summary>
    /// Deletes an analyzer (<c>DELETE /databases/{db}/admin/analyzers?name=</c>); nothing happens when
    /// there is none. Throws <see cref="AnalyzerInUseException"/> while index definitions name it.
    /// </summary>
    public async Task DeleteAnalyzerAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        using var response = await _executor.SendAsync(HttpMethod.Delete, IndexesPath("/admin/analyzers?name=" + Uri.EscapeDataString(name)), null, token).ConfigureAwait(false);
    }

    /// <summary>The database's analyzers, in name order (<c>GET /databases/{db}/analyzers</c>).</summary>
    public async Task<AnalyzerDefinition[]> GetAnalyzersAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, IndexesPath("/analyzers"), null, token).ConfigureAwait(false);
        await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        var answer = await JsonSerializer.DeserializeAsync<AnalyzersBody>(stream, WireJson.Options, token).ConfigureAwait(false);
        return answer?.Analyzers?.ToArray() ?? throw new JackdawException("GET analyzers answered without an \"Analyzers\" array.");
    }

    private sealed record AnalyzersBody(List<AnalyzerDefinition>? Analyzers);
}
