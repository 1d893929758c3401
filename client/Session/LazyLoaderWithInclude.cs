using System.Linq.Expressions;

namespace Jackdaw.Client.Session;

/// <summary><see cref="IAsyncLazyLoaderWithInclude{T}"/> of one session: the paths gathered so far.</summary>
internal sealed class LazyLoaderWithInclude<T>(AsyncDocumentSession session) : IAsyncLazyLoaderWithInclude<T>
    where T : class
{
    private readonly IncludePaths _includes = new();

    public IAsyncLazyLoaderWithInclude<T> Include(string path)
    {
        _includes.Add(path);
        return this;
    }

    public IAsyncLazyLoaderWithInclude<T> Include(Expression<Func<T, string?>> path)
    {
        _includes.Add(path, session.Conventions);
        return this;
    }

    public IAsyncLazyLoaderWithInclude<T> Include(Expression<Func<T, IEnumerable<string>?>> path)
    {
        _includes.Add(path, session.Conventions);
        return this;
    }

    public Lazy<Task<T?>> LoadAsync(string id, CancellationToken token = default) => LoadAsync<T>(id, token);

    public Lazy<Task<Dictionary<string, T?>>> LoadAsync(IEnumerable<string> ids, CancellationToken token = default) => LoadAsync<T>(ids, token);

    public Lazy<Task<TResult?>> LoadAsync<TResult>(string id, CancellationToken token = default)
        where TResult : class
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        var load = LoadAsync<TResult>([id], token);
        return new Lazy<Task<TResult?>>(async () => (await load.Value.ConfigureAwait(false))[id]);
    }

    public Lazy<Task<Dictionary<string, TResult?>>> LoadAsync<TResult>(IEnumerable<string> ids, CancellationToken token = default)
        where TResult : class
    {
        ArgumentNullException.ThrowIfNull(ids);
        AsyncLoaderWithInclude<TResult>.ThrowIfUntyped<TResult>();
        var requested = ids.ToList();
        foreach (var id in requested)
        {
            ArgumentException.ThrowIfNullOrEmpty(id, nameof(ids));
        }

        // The operation keeps the paths as they are now; more Include calls on this loader are for later loads.
        var includes = _includes.Copy();
        if (session.IsKnownLocally(requested, includes))
        {
            return new Lazy<Task<Dictionary<string, TResult?>>>(() => session.LoadAsync<TResult>(requested, includes, token));
        }

        return session.AddLazyOperation(new LazyLoadOperation<TResult>(session, requested, includes), token);
    }
}
