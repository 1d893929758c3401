namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>What maps a document to index entries: an auto-index's field reader or a JavaScript map.</summary>
public interface IIndexMapper
{
    /// <summary>The collections it maps, as the definition names them.</summary>
    IReadOnlyList<string> Collections { get; }

    /// <summary>Whether it may load other documents (then a change of a loaded one re-maps its referrers).</summary>
    bool UsesLoad { get; }

    /// <summary>Appends the entries of <paramref name="document"/> to <paramref name="output"/>.</summary>
    /// <exception cref="IndexMapException">The document cannot be mapped (an index error, not a crash).</exception>
    void Map(MapInput document, IMapDocumentLoader? loader, MapOutput output);
}
