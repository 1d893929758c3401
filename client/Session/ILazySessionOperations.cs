using System.Linq.Expressions;

namespace Jackdaw.Client;

/// <summary>
/// Loads that wait: each call records an operation and returns a <see cref="Lazy{T}"/> at once.
/// The session's pending lazy operations (these, and queries made lazy with
/// <see cref="JackdawQueryableExtensions.LazilyAsync{T}"/> and
/// <see cref="JackdawQueryableExtensions.CountLazilyAsync{T}"/>) go to the server together, in one
/// <c>multi_get</c> request, when the first of their values is asked for or when
/// <see cref="IEagerSessionOperations.ExecuteAllPendingLazyOperationsAsync"/> runs. Loaded
/// documents join the session as with <see cref="IAsyncDocumentSession.LoadAsync{T}(string, CancellationToken)"/>.
/// </summary>
public interface ILazySessionOperations
{
    /// <summary>
    /// Begins a lazy load that also brings the documents the loaded ones reference at
    /// <paramref name="path"/>: <c>Lazily.Include("Company").LoadAsync&lt;Order&gt;("orders/1")</c>.
    /// </summary>
    IAsyncLazyLoaderWithInclude<object> Include(string path);

    /// <summary>As <see cref="Include(string)"/>, the path given as a member: <c>Lazily.Include&lt;Order&gt;(x => x.Company)</c>.</summary>
    IAsyncLazyLoaderWithInclude<T> Include<T>(Expression<Func<T, string?>> path)
        where T : class;

    /// <summary>As <see cref="Include(string)"/>, for a member holding several ids.</summary>
    IAsyncLazyLoaderWithInclude<T> Include<T>(Expression<Func<T, IEnumerable<string>?>> path)
        where T : class;

    /// <summary>The document with this id, or null; an id the session holds already is answered without the server.</summary>
    Lazy<Task<T?>> LoadAsync<T>(string id, CancellationToken token = default)
        where T : class;

    /// <summary>The documents with these ids, missing ones mapped to null.</summary>
    Lazy<Task<Dictionary<string, T?>>> LoadAsync<T>(IEnumerable<string> ids, CancellationToken token = default)
        where T : class;

    /// <summary>
    /// A page of the documents whose ids start with <paramref name="idPrefix"/>, by id in id order,
    /// as <see cref="IAdvancedSessionOperations.LoadStartingWithAsync{T}"/> loads it (the arguments
    /// are checked now). The session cannot know which documents a prefix has: it is always sent.
    /// </summary>
    Lazy<Task<Dictionary<string, T>>> LoadStartingWithAsync<T>(string idPrefix, string? matches = null, int start = 0, int pageSize = 25, string? exclude = null, string? startAfter = null, CancellationToken token = default)
        where T : class;
}
