using Jackdaw.Client.Session;

namespace Jackdaw.Client;

/// <summary>
/// The revisions of documents, through a session (<c>session.Advanced.Revisions</c>, RavenDB's
/// <c>IRevisionsSessionOperationsAsync</c>). Revisions come as entities that the session does not
/// track for saving (changing one saves nothing); <see cref="IAdvancedSessionOperations.GetMetadataFor"/>
/// and <see cref="IAdvancedSessionOperations.GetChangeVectorFor"/> work on them, so a revision's
/// change vector can be given to <see cref="GetAsync{T}(string, CancellationToken)"/> or
/// <see cref="RevertRevisionsByIdOperation"/>.
/// </summary>
public interface IRevisionsSessionOperations
{
    /// <summary>The document's revisions, newest first: <paramref name="pageSize"/> of them after skipping <paramref name="start"/>.</summary>
    Task<List<T>> GetForAsync<T>(string id, int start = 0, int pageSize = 25, CancellationToken token = default)
        where T : class;

    /// <summary>The <c>@metadata</c> of the document's revisions, newest first (their bodies are not sent).</summary>
    Task<List<MetadataDictionary>> GetMetadataForAsync(string id, int start = 0, int pageSize = 25, CancellationToken token = default);

    /// <summary>The revision with this change vector, or null when there is none.</summary>
    Task<T?> GetAsync<T>(string changeVector, CancellationToken token = default)
        where T : class;

    /// <summary>The revisions with these change vectors, by change vector (null for one there is none of), in one request.</summary>
    Task<Dictionary<string, T?>> GetAsync<T>(IEnumerable<string> changeVectors, CancellationToken token = default)
        where T : class;

    /// <summary>
    /// The document as it was at <paramref name="date"/>: its newest revision from that time or
    /// before, or null when it has none so old. A local time is converted to UTC; one of unspecified
    /// kind is taken as UTC.
    /// </summary>
    Task<T?> GetAsync<T>(string id, DateTime date, CancellationToken token = default)
        where T : class;

    /// <summary>The same as <see cref="GetAsync{T}(string, DateTime, CancellationToken)"/> (the name the Node.js client and the issue give it).</summary>
    Task<T?> GetBeforeAsync<T>(string id, DateTime date, CancellationToken token = default)
        where T : class;

    /// <summary>How many revisions the document has (0 for one without any, or without a document).</summary>
    Task<long> GetCountForAsync(string id, CancellationToken token = default);

    /// <summary>
    /// At the next save, makes a revision of the tracked entity's document as stored before this
    /// session's changes to it, whatever the revisions policy (RavenDB's <c>ForceRevisionCreationFor</c>).
    /// </summary>
    void ForceRevisionCreationFor<T>(T entity, ForceRevisionStrategy strategy = ForceRevisionStrategy.Before)
        where T : class;

    /// <summary>As <see cref="ForceRevisionCreationFor{T}(T, ForceRevisionStrategy)"/>, by id, whether the session holds the document or not.</summary>
    void ForceRevisionCreationFor(string id, ForceRevisionStrategy strategy = ForceRevisionStrategy.Before);
}
