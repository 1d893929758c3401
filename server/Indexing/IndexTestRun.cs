using Jackdaw.Server.Databases;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// Trying an index without saving it (RavenDB's <c>POST /indexes/test</c>): the definition is
/// compiled and built in memory (an <see cref="Index"/> with no loop, no files and no tombstone
/// hold) over at most <see cref="MaxDocuments"/> documents of its collections, the first by etag,
/// within a time; queries then run on <see cref="Index"/> as on any index. The map output of the
/// first documents is kept. Nothing is stored; dispose the run after.
/// </summary>
public sealed class IndexTestRun : IAsyncDisposable
{
    /// <summary>The most documents a test run maps.</summary>
    public const int MaxDocuments = 100_000;

    /// <summary>The documents whose map output the run keeps.</summary>
    public const int MapResultsKept = 10;

    private IndexTestRun(Index index, int documentsProcessed, IReadOnlyList<(string Id, List<IndexField[]> Entries)> mapResults)
    {
        Index = index;
        DocumentsProcessed = documentsProcessed;
        MapResults = mapResults;
    }

    /// <summary>The index built in memory.</summary>
    public Index Index { get; }

    /// <summary>How many documents were mapped.</summary>
    public int DocumentsProcessed { get; }

    /// <summary>The entries the map gave the first <see cref="MapResultsKept"/> documents, by document id.</summary>
    public IReadOnlyList<(string Id, List<IndexField[]> Entries)> MapResults { get; }

    /// <summary>
    /// Builds <paramref name="definition"/> in memory over at most <paramref name="maxDocuments"/>
    /// documents of <paramref name="database"/>, for at most <paramref name="maxTime"/>.
    /// </summary>
    /// <exception cref="Errors.IndexCompilationException">The definition does not compile, or names an analyzer that does not exist.</exception>
    public static async Task<IndexTestRun> RunAsync(DocumentDatabase database, IndexDefinition definition, int maxDocuments, TimeSpan maxTime, ILogger logger)
    {
        var analyzers = IndexStore.Of(database).Analyzers.Resolve(definition);
        var mapper = IndexStore.CreateMapper(definition);
        var index = Index.CreateInMemory(database, definition, mapper, analyzers, logger);
        try
        {
            var mapResults = new List<(string Id, List<IndexField[]> Entries)>();
            var processed = index.RunTest(maxDocuments, maxTime, (id, output) =>
            {
                if (mapResults.Count < MapResultsKept)
                {
                    mapResults.Add((id, output.Entries.ToList()));
                }
            });
            return new IndexTestRun(index, processed, mapResults);
        }
        catch
        {
            await index.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    public ValueTask DisposeAsync() => Index.DisposeAsync();
}
