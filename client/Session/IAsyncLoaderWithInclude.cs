using System.Linq.Expressions;

namespace Jackdaw.Client;

/// <summary>
/// A load that also brings the documents the loaded ones reference (RavenDB's shape): made by
/// <see cref="IAsyncDocumentSession.Include(string)"/>, given more paths by <c>Include</c>, run by
/// <c>LoadAsync</c>. The load is one request, <c>GET docs?id=...&amp;include=path</c>; the included
/// documents join the session when loaded, so loading them afterwards makes no request, and a
/// referenced id without a document loads as null without one. Ids the session holds with all
/// they reference at those paths are answered without the server.
/// </summary>
public interface IAsyncLoaderWithInclude<T>
    where T : class
{
    /// <summary>Also includes the documents whose ids the loaded ones hold at <paramref name="path"/>: <c>"Company"</c>, <c>"Lines[].Product"</c>.</summary>
    IAsyncLoaderWithInclude<T> Include(string path);

    /// <summary>Also includes the document whose id this member holds (<c>x => x.Company</c>), named as the serializer names it.</summary>
    IAsyncLoaderWithInclude<T> Include(Expression<Func<T, string?>> path);

    /// <summary>Also includes the documents whose ids this member holds (<c>x => x.Tags</c>, <c>x => x.Lines.Select(l => l.Product)</c>).</summary>
    IAsyncLoaderWithInclude<T> Include(Expression<Func<T, IEnumerable<string>?>> path);

    /// <summary>
    /// The document with this id, or null, and the documents it references at the paths. On the
    /// loader of <see cref="IAsyncDocumentSession.Include(string)"/>, whose <typeparamref name="T"/>
    /// is <see cref="object"/>, this throws <see cref="NotSupportedException"/>: name the type with
    /// <see cref="LoadAsync{TResult}(string, CancellationToken)"/>.
    /// </summary>
    Task<T?> LoadAsync(string id, CancellationToken token = default);

    /// <summary>The documents with these ids (missing ones mapped to null), and those they reference at the paths.</summary>
    Task<Dictionary<string, T?>> LoadAsync(IEnumerable<string> ids, CancellationToken token = default);

    /// <summary>As <see cref="LoadAsync(string, CancellationToken)"/>, the document read as a <typeparamref name="TResult"/>.</summary>
    Task<TResult?> LoadAsync<TResult>(string id, CancellationToken token = default)
        where TResult : class;

    /// <summary>As <see cref="LoadAsync(IEnumerable{string}, CancellationToken)"/>, the documents read as <typeparamref name="TResult"/>.</summary>
    Task<Dictionary<string, TResult?>> LoadAsync<TResult>(IEnumerable<string> ids, CancellationToken token = default)
        where TResult : class;
}
