namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>
/// What a map-reduce index runs besides its <see cref="IIndexMapper"/> (which gives its collections
/// and whether it loads): a map of a document to (reduce key, entry) pairs, and a reduce of one
/// key's values. A JavaScript map-reduce (<c>groupBy(...).aggregate(...)</c>) or an auto map-reduce
/// from a <c>group by</c> query (count and sum, in C#).
/// <list type="bullet">
/// <item>Keys, entries and results are JSON (UTF-8). A key is canonical: equal keys are equal bytes
///   (the index groups by its hash); an entry and a result are JSON objects.</item>
/// <item><see cref="Reduce"/> is given map entries, or results of earlier reduces of the same key
///   (a leaf's partial aggregate reduced again with its siblings'), in any mix: it must give the
///   same results either way (RavenDB's contract for reduce functions).</item>
/// <item>One thread at a time (the index's loop).</item>
/// </list>
/// </summary>
public interface IReduceFunctions
{
    /// <summary>Appends the (key, entry) pairs of <paramref name="document"/> to <paramref name="output"/>.</summary>
    /// <exception cref="IndexMapException">The document cannot be mapped (an index error, not a crash).</exception>
    void MapEntries(MapInput document, IMapDocumentLoader? loader, ReduceMapOutput output);

    /// <summary>Reduces <paramref name="values"/> (JSON objects) of the key <paramref name="key"/>, appending the results (JSON objects) to <paramref name="output"/>.</summary>
    /// <exception cref="IndexMapException">The reduce failed for this key (an index error: the key's result is removed).</exception>
    void Reduce(ReadOnlySpan<byte> key, IReadOnlyList<ReadOnlyMemory<byte>> values, List<byte[]> output);
}
