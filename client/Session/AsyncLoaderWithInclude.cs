using System.Linq.Expressions;

namespace Jackdaw.Client.Session;

/// <summary><see cref="IAsyncLoaderWithInclude{T}"/> of one session: the paths gathered so far.</summary>
internal sealed class AsyncLoaderWithInclude<T>(AsyncDocumentSession session) : IAsyncLoaderWithInclude<T>
    where T : class
{
    private readonly IncludePaths _includes = new();

    public IAsyncLoaderWithInclude<T> Include(string path)
    {
        _includes.Add(path);
        return this;
    }

    public IAsyncLoaderWithInclude<T> Include(Expression<Func<T, string?>> path)
    {
        _includes.Add(path, session.Conventions);
        return this;
    }

    public IAsyncLoaderWithInclude<T> Include(Expression<Func<T, IEnumerable<string>?>> path)
    {
        _includes.Add(path, session.Conventions);
        return this;
    }

    public Task<T?> LoadAsync(string id, CancellationToken token = default) => LoadAsync<T>(id, token);

    public Task<Dictionary<string, T?>> LoadAsync(IEnumerable<string> ids, CancellationToken token = default) => LoadAsync<T>(ids, token);

    public async Task<TResult?> LoadAsync<TResult>(string id, CancellationToken token = default)
        where TResult : class
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        ThrowIfUntyped<TResult>();
        return (await session.LoadAsync<TResult>([id], _includes, token).ConfigureAwait(false))[id];
    }

    public Task<Dictionary<string, TResult?>> LoadAsync<TResult>(IEnumerable<string> ids, CancellationToken token = default)
        where TResult : class
    {
        ThrowIfUntyped<TResult>();
        return session.LoadAsync<TResult>(ids, _includes, token);
    }

    /// <summary>Documents are read as a class: <c>Include("Company")</c> loads with <c>LoadAsync&lt;Order&gt;</c>.</summary>
    internal static void ThrowIfUntyped<TResult>()
    {
        if (typeof(TResult) == typeof(object))
        {
            throw new NotSupportedException("A load needs the documents' class: after Include(path), call LoadAsync<Order>(id), not LoadAsync(id).");
        }
    }
}
