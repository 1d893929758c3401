using System.Linq.Expressions;

namespace Jackdaw.Client.Session;

/// <summary><see cref="ILazySessionOperations"/> of one session.</summary>
internal sealed class LazySessionOperations(AsyncDocumentSession session) : ILazySessionOperations
{
    public IAsyncLazyLoaderWithInclude<object> Include(string path) => new LazyLoaderWithInclude<object>(session).Include(path);

    public IAsyncLazyLoaderWithInclude<T> Include<T>(Expression<Func<T, string?>> path)
        where T : class =>
        new LazyLoaderWithInclude<T>(session).Include(path);

    public IAsyncLazyLoaderWithInclude<T> Include<T>(Expression<Func<T, IEnumerable<string>?>> path)
        where T : class =>
        new LazyLoaderWithInclude<T>(session).Include(path);

    public Lazy<Task<T?>> LoadAsync<T>(string id, CancellationToken token = default)
        where T : class
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        // What the session holds already is not an operation to wait for: its value asks no one.
        if (session.IsKnownLocally(id))
        {
            return new Lazy<Task<T?>>(() => session.LoadAsync<T>(id, token));
        }

        var load = session.AddLazyOperation(new LazyLoadOperation<T>(session, [id]), token);
        return new Lazy<Task<T?>>(async () => (await load.Value.ConfigureAwait(false))[id]);
    }

    public Lazy<Task<Dictionary<string, T?>>> LoadAsync<T>(IEnumerable<string> ids, CancellationToken token = default)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(ids);
        var requested = ids.ToList();
        foreach (var id in requested)
        {
            ArgumentException.ThrowIfNullOrEmpty(id, nameof(ids));
        }

        if (requested.TrueForAll(session.IsKnownLocally))
        {
            return new Lazy<Task<Dictionary<string, T?>>>(() => session.LoadAsync<T>(requested, token));
        }

        return session.AddLazyOperation(new LazyLoadOperation<T>(session, requested), token);
    }

    public Lazy<Task<Dictionary<string, T>>> LoadStartingWithAsync<T>(string idPrefix, string? matches = null, int start = 0, int pageSize = 25, string? exclude = null, string? startAfter = null, CancellationToken token = default)
        where T : class
    {
        var query = AsyncDocumentSession.StartingWithQuery(idPrefix, matches, start, pageSize, exclude, startAfter);
        return session.AddLazyOperation(new LazyStartsWithOperation<T>(session, query), token);
    }
}
