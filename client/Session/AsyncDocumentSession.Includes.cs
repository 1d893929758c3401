using System.Linq.Expressions;

namespace Jackdaw.Client.Session;

/// <summary>
/// Loads with includes (RavenDB's <c>session.Include(path).LoadAsync(id)</c>): one
/// <c>GET /docs?id=...&amp;include=path</c> brings the documents and those they reference, which
/// the session keeps as a query's includes are kept, so loading them makes no request. The
/// server leaves a referenced id without a document out of its answer; the session finds the
/// referenced ids in the loaded documents itself and remembers those as missing.
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    public IAsyncLoaderWithInclude<object> Include(string path) => new AsyncLoaderWithInclude<object>(this).Include(path);

    public IAsyncLoaderWithInclude<T> Include<T>(Expression<Func<T, string?>> path)
        where T : class =>
        new AsyncLoaderWithInclude<T>(this).Include(path);

    public IAsyncLoaderWithInclude<T> Include<T>(Expression<Func<T, IEnumerable<string>?>> path)
        where T : class =>
        new AsyncLoaderWithInclude<T>(this).Include(path);

    /// <summary>
    /// Whether a load of <paramref name="ids"/> with <paramref name="includes"/> would be answered
    /// without the server: each id known (held, kept from includes, deleted or missing) and every
    /// id a held document references at those paths known too. Changes nothing.
    /// </summary>
    internal bool IsKnownLocally(IReadOnlyList<string> ids, IncludePaths includes)
    {
        foreach (var id in ids)
        {
            if (_deletes.ContainsKey(id) || _knownMissing.Contains(id))
            {
                continue;
            }

            if (_byId.TryGetValue(id, out var info))
            {
                if (!IncludesHeld(info, includes))
                {
                    return false;
                }
            }
            else if (!_included.TryGetValue(id, out var document) || !ReferencesKnown(document.Span, includes))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// Whether the session knows every id the held document references at <paramref name="includes"/>.
    /// An entity not saved yet has nothing for the server to include: it counts as held with them.
    /// The stored version is read (as loaded, or as last saved), as the server would read it.
    /// </summary>
    private bool IncludesHeld(DocumentInfo info, IncludePaths includes)
    {
        if (info.ChangeVector is null)
        {
            return true;
        }

        if (!info.LoadedDocument.IsEmpty)
        {
            return ReferencesKnown(info.LoadedDocument.Span, includes);
        }

        return ReferencesKnown(info.Snapshot is { } snapshot ? snapshot : Serialize(info), includes);
    }

    private bool ReferencesKnown(ReadOnlySpan<byte> document, IncludePaths includes)
    {
        var referenced = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        includes.CollectIds(document, referenced);
        foreach (var id in referenced)
        {
            if (!IsKnownLocally(id))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// After a load's answer is tracked and its includes kept: the ids the loaded documents
    /// (ranges of <paramref name="body"/>) reference at <paramref name="includes"/> that the
    /// session still does not know have no document.
    /// </summary>
    private void RegisterMissingIncludes(ReadOnlyMemory<byte> body, List<Range> loaded, IncludePaths includes)
    {
        var referenced = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var range in loaded)
        {
            includes.CollectIds(body.Span[range], referenced);
        }

        foreach (var id in referenced)
        {
            if (!IsKnownLocally(id))
            {
                _knownMissing.Add(id);
            }
        }
    }
}
