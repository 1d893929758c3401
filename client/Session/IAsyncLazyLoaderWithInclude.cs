using System.Linq.Expressions;

namespace Jackdaw.Client;

/// <summary>
/// <see cref="IAsyncLoaderWithInclude{T}"/> made lazy (RavenDB's shape): made by
/// <see cref="ILazySessionOperations.Include(string)"/>, its loads are recorded and go with the
/// session's other lazy operations in one <c>multi_get</c>; the included documents join the
/// session when the batch is read. A load the session can answer with what it holds (the
/// documents and all they reference at the paths) is not sent.
/// </summary>
public interface IAsyncLazyLoaderWithInclude<T>
    where T : class
{
    /// <summary>Also includes the documents whose ids the loaded ones hold at <paramref name="path"/>: <c>"Company"</c>, <c>"Lines[].Product"</c>.</summary>
    IAsyncLazyLoaderWithInclude<T> Include(string path);

    /// <summary>Also includes the document whose id this member holds (<c>x => x.Company</c>).</summary>
    IAsyncLazyLoaderWithInclude<T> Include(Expression<Func<T, string?>> path);

    /// <summary>Also includes the documents whose ids this member holds (<c>x => x.Lines.Select(l => l.Product)</c>).</summary>
    IAsyncLazyLoaderWithInclude<T> Include(Expression<Func<T, IEnumerable<string>?>> path);

    /// <summary>
    /// The document with this id, or null, with those it references at the paths. On the loader of
    /// <see cref="ILazySessionOperations.Include(string)"/> (<typeparamref name="T"/> is
    /// <see cref="object"/>) this throws <see cref="NotSupportedException"/>: name the type with
    /// <see cref="LoadAsync{TResult}(string, CancellationToken)"/>.
    /// </summary>
    Lazy<Task<T?>> LoadAsync(string id, CancellationToken token = default);

    /// <summary>The documents with these ids (missing ones mapped to null), with those they reference at the paths.</summary>
    Lazy<Task<Dictionary<string, T?>>> LoadAsync(IEnumerable<string> ids, CancellationToken token = default);

    /// <summary>As <see cref="LoadAsync(string, CancellationToken)"/>, the document read as a <typeparamref name="TResult"/>.</summary>
    Lazy<Task<TResult?>> LoadAsync<TResult>(string id, CancellationToken token = default)
        where TResult : class;

    /// <summary>As <see cref="LoadAsync(IEnumerable{string}, CancellationToken)"/>, the documents read as <typeparamref name="TResult"/>.</summary>
    Lazy<Task<Dictionary<string, TResult?>>> LoadAsync<TResult>(IEnumerable<string> ids, CancellationToken token = default)
        where TResult : class;
}
