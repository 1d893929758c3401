using System.Text;

namespace Jackdaw.Client.Session;

/// <summary><c>session.Advanced.Revisions</c>: reads revisions (one request each call) and queues forced ones for the save.</summary>
internal sealed class SessionRevisions(AsyncDocumentSession session) : IRevisionsSessionOperations
{
    public async Task<List<T>> GetForAsync<T>(string id, int start = 0, int pageSize = 25, CancellationToken token = default)
        where T : class
    {
        var (body, results) = await session.GetRevisionsAsync(PageQuery(id, start, pageSize, metadataOnly: false), token).ConfigureAwait(false);
        return [.. results.OfType<Range>().Select(range => session.ReadRevision<T>(body.AsMemory(range)))];
    }

    public async Task<List<MetadataDictionary>> GetMetadataForAsync(string id, int start = 0, int pageSize = 25, CancellationToken token = default)
    {
        var (body, results) = await session.GetRevisionsAsync(PageQuery(id, start, pageSize, metadataOnly: true), token).ConfigureAwait(false);
        return [.. results.OfType<Range>().Select(range => AsyncDocumentSession.ReadRevisionMetadata(body.AsMemory(range)))];
    }

    public async Task<T?> GetAsync<T>(string changeVector, CancellationToken token = default)
        where T : class
    {
        ArgumentException.ThrowIfNullOrEmpty(changeVector);
        var (body, results) = await session.GetRevisionsAsync("?changeVector=" + Uri.EscapeDataString(changeVector), token).ConfigureAwait(false);
        return results.Count > 0 && results[0] is { } range ? session.ReadRevision<T>(body.AsMemory(range)) : null;
    }

    public async Task<Dictionary<string, T?>> GetAsync<T>(IEnumerable<string> changeVectors, CancellationToken token = default)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(changeVectors);
        var asked = changeVectors.ToList();
        if (asked.Count == 0)
        {
            return [];
        }

        var query = new StringBuilder();
        foreach (var changeVector in asked)
        {
            ArgumentException.ThrowIfNullOrEmpty(changeVector, nameof(changeVectors));
            query.Append(query.Length == 0 ? '?' : '&').Append("changeVector=").Append(Uri.EscapeDataString(changeVector));
        }

        var (body, results) = await session.GetRevisionsAsync(query.ToString(), token).ConfigureAwait(false);
        if (results.Count != 0 && results.Count != asked.Count)
        {
            throw new JackdawException($"GET revisions answered {results.Count} results for {asked.Count} change vectors.");
        }

        var revisions = new Dictionary<string, T?>();
        for (var i = 0; i < asked.Count; i++)
        {
            revisions[asked[i]] = results.Count > 0 && results[i] is { } range ? session.ReadRevision<T>(body.AsMemory(range)) : null;
        }

        return revisions;
    }

    public async Task<T?> GetAsync<T>(string id, DateTime date, CancellationToken token = default)
        where T : class
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        var query = "?id=" + Uri.EscapeDataString(id) + "&before=" + Uri.EscapeDataString(AsyncDocumentSession.FormatDate(date));
        var (body, results) = await session.GetRevisionsAsync(query, token).ConfigureAwait(false);
        return results.Count > 0 && results[0] is { } range ? session.ReadRevision<T>(body.AsMemory(range)) : null;
    }

    public Task<T?> GetBeforeAsync<T>(string id, DateTime date, CancellationToken token = default)
        where T : class =>
        GetAsync<T>(id, date, token);

    public Task<long> GetCountForAsync(string id, CancellationToken token = default) => session.GetRevisionsCountAsync(id, token);

    public void ForceRevisionCreationFor<T>(T entity, ForceRevisionStrategy strategy = ForceRevisionStrategy.Before)
        where T : class =>
        session.ForceRevision(session.IdForForcedRevision(entity), strategy);

    public void ForceRevisionCreationFor(string id, ForceRevisionStrategy strategy = ForceRevisionStrategy.Before)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        session.ForceRevision(id, strategy);
    }

    private static string PageQuery(string id, int start, int pageSize, bool metadataOnly)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        ArgumentOutOfRangeException.ThrowIfNegative(start);
        ArgumentOutOfRangeException.ThrowIfNegative(pageSize);
        return $"?id={Uri.EscapeDataString(id)}&start={start}&pageSize={pageSize}{(metadataOnly ? "&metadataOnly=true" : "")}";
    }
}
