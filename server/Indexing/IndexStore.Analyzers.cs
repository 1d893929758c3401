using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Analysis;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Indexing;

// The database's analyzers: kept by AnalyzerStore, changed here, under the same lock as the indexes
// that use them, so that no index opens with an analyzer being changed or deleted.
public sealed partial class IndexStore
{
    /// <summary>The database's analyzers (definitions and compiled recipes).</summary>
    public AnalyzerStore Analyzers { get; }

    /// <summary>
    /// Creates or replaces analyzers (RavenDB's <c>PutAnalyzersOperation</c>). Every definition is
    /// compiled first: one bad definition stores nothing. They are stored in one transaction; then
    /// every index whose files hold tokens of an analyzer whose recipe changed is rebuilt from the
    /// start (a reset), so that its terms and its queries' terms come from the same analyzer.
    /// Returns the names of the indexes rebuilt.
    /// </summary>
    /// <exception cref="AnalyzerCompilationException">A definition is invalid; nothing was stored.</exception>
    public async Task<IReadOnlyList<string>> PutAnalyzersAsync(IReadOnlyList<AnalyzerDefinition> definitions)
    {
        var compiled = definitions.Select(d => (d, AnalyzerRecipe.Parse(d.Name, d.Code))).ToList();
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var changed = await Analyzers.StoreAsync(compiled).ConfigureAwait(false);
            var rebuilt = new List<string>();
            if (changed.Count == 0)
            {
                return rebuilt;
            }
            foreach (var index in _indexes.Values.Where(i => !i.IsDisposed && i.Analyzers.CustomNames.Overlaps(changed)).OrderBy(i => i.Name, StringComparer.OrdinalIgnoreCase).ToList())
            {
                _logger.LogInformation("Index {Index} of database {Database} uses a changed analyzer ({Analyzers}); it is rebuilt from the start",
                    index.Name, _database.Name, string.Join(", ", index.Analyzers.CustomNames.Intersect(changed)));
                await RebuildAsync(index, RecordOf(index)).ConfigureAwait(false);
                rebuilt.Add(index.Name);
            }
            return rebuilt;
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>
    /// Deletes an analyzer (RavenDB's <c>DeleteAnalyzerOperation</c>); nothing happens when there is
    /// none of that name. An analyzer an index definition names is not deleted: the index could not be
    /// opened again without it.
    /// </summary>
    /// <exception cref="AnalyzerInUseException">Index definitions name it.</exception>
    public async Task DeleteAnalyzerAsync(string name)
    {
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var users = _indexes.Values
                .Where(i => i.Definition.Fields.Values.Any(o => string.Equals(o.Analyzer, name, StringComparison.OrdinalIgnoreCase)))
                .Select(i => i.Name)
                .Order(StringComparer.OrdinalIgnoreCase)
                .ToList();
            if (users.Count > 0)
            {
                throw new AnalyzerInUseException(name, users);
            }
            if (await Analyzers.RemoveAsync(name).ConfigureAwait(false))
            {
                _logger.LogInformation("Analyzer {Analyzer} of database {Database} deleted", name, _database.Name);
            }
        }
        finally
        {
            _changes.Release();
        }
    }
}
