using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

// Auto map-reduce indexes: made for group-by queries, widened by aggregations (an index answers a
// query with the same collection and group-by fields when it has every aggregation the query
// needs), retired once a wider one caught up; idled and deleted as auto maps (housekeeping).
public sealed partial class IndexStore
{
    /// <summary>
    /// The auto map-reduce index of <paramref name="collection"/> grouping by <paramref name="groupBy"/>
    /// that has <paramref name="aggregations"/>: an existing one, or a new one with these and the
    /// aggregations of the others of the same grouping (which are deleted once it has caught up).
    /// </summary>
    public async Task<Index> GetOrCreateAutoMapReduceIndexAsync(string collection, IReadOnlyCollection<string> groupBy, IReadOnlyCollection<AutoAggregationField> aggregations)
    {
        if (FindAutoMapReduceIndex(collection, groupBy, aggregations) is { } found)
        {
            return found;
        }
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            if (FindAutoMapReduceIndex(collection, groupBy, aggregations) is { } raced)
            {
                return raced;
            }
            var definition = WidenedAutoMapReduce(collection, groupBy, aggregations);
            if (_indexes.TryGetValue(definition.Name, out var same))
            {
                return same;
            }
            var record = new IndexRecord(definition, IndexRecord.NewFolder(definition.Name), null, IndexLockMode.Unlock, IndexPriority.Normal, false);
            var created = await CreateAsync(record, index =>
            {
                _indexes[definition.Name] = index;
                _logger.LogInformation("Auto map-reduce index {Index} of database {Database} created for a group-by query", definition.Name, _database.Name);
                OnIndexEvent(definition.Name, IndexEventKind.Added);
            }).ConfigureAwait(false);
            _autoIndexes.Created(_database.Name, definition);
            return created;
        }
        finally
        {
            _changes.Release();
        }
    }

    /// <summary>The definition a query would create: its aggregations and those of the collection's auto map-reduce indexes with the same grouping.</summary>
    private IndexDefinition WidenedAutoMapReduce(string collection, IReadOnlyCollection<string> groupBy, IReadOnlyCollection<AutoAggregationField> aggregations)
    {
        var existing = SameGrouping(collection, groupBy).ToList();
        return IndexDefinition.CreateAutoMapReduce(existing.FirstOrDefault()?.Definition.Collection ?? collection, groupBy, existing.SelectMany(i => i.Definition.Aggregations).Concat(aggregations));
    }

    private IEnumerable<Index> SameGrouping(string collection, IReadOnlyCollection<string> groupBy) =>
        _indexes.Values.Where(index =>
            index.Definition.IsAutoMapReduce && !index.IsDisposed
            && string.Equals(index.Definition.Collection, collection, StringComparison.OrdinalIgnoreCase)
            && index.Definition.AutoFields.Count == groupBy.Count
            && index.Definition.AutoFields.All(f => groupBy.Contains(f.Path, StringComparer.Ordinal)));

    private Index? FindAutoMapReduceIndex(string collection, IReadOnlyCollection<string> groupBy, IReadOnlyCollection<AutoAggregationField> aggregations)
    {
        var covering = SameGrouping(collection, groupBy).Where(i => aggregations.All(i.Definition.Aggregations.Contains)).ToList();
        if (covering.Count <= 1)
        {
            return covering.FirstOrDefault();
        }
        // While a wider index builds, a narrower one that has caught up keeps answering what it covers.
        using var reader = _database.BeginRead();
        return covering.Where(i => !i.IsStale(reader)).MaxBy(i => i.Definition.Aggregations.Count)
            ?? covering.MaxBy(i => i.Definition.Aggregations.Count);
    }

    /// <summary>What <see cref="GetOrCreateAutoMapReduceIndexAsync"/> would do for a group-by query (<c>debug=explain</c>), without doing it.</summary>
    public (string IndexName, IReadOnlyList<(string Index, string Reason)> Reasons) ExplainAutoMapReduceIndex(string collection, IReadOnlyCollection<string> groupBy, IReadOnlyCollection<AutoAggregationField> aggregations)
    {
        var found = FindAutoMapReduceIndex(collection, groupBy, aggregations);
        var wanted = AggregationList(aggregations);
        var reasons = new List<(string, string)>();
        var all = _indexes.Values
            .Where(i => i.Definition.IsAutoMapReduce && !i.IsDisposed && string.Equals(i.Definition.Collection, collection, StringComparison.OrdinalIgnoreCase))
            .OrderBy(i => i.Name, StringComparer.Ordinal);
        var same = SameGrouping(collection, groupBy).ToHashSet();
        foreach (var index in all)
        {
            var missing = aggregations.Where(a => !index.Definition.Aggregations.Contains(a)).ToList();
            string reason;
            if (ReferenceEquals(index, found))
            {
                reason = $"Chosen: it groups by {string.Join(", ", groupBy)} and has every aggregation the query uses ({wanted}).";
            }
            else if (!same.Contains(index))
            {
                reason = $"It groups by {string.Join(", ", index.Definition.AutoFields.Select(f => f.Path))}, not by {string.Join(", ", groupBy)}.";
            }
            else if (missing.Count > 0)
            {
                reason = "It does not have " + AggregationList(missing) + ".";
            }
            else
            {
                reason = "It covers the query, but a wider index that has caught up (or the widest one) is preferred.";
            }
            reasons.Add((index.Name, reason));
        }
        if (found is not null)
        {
            return (found.Name, reasons);
        }
        var definition = WidenedAutoMapReduce(collection, groupBy, aggregations);
        reasons.Add((definition.Name, same.Count == 0
            ? $"No auto map-reduce index of {collection} groups by {string.Join(", ", groupBy)}: the query would create this one, for {wanted}."
            : $"No auto map-reduce index of {collection} grouping so has {wanted}: the query would create this one, with the aggregations of the existing ones and its own, and the narrower ones would be retired once it caught up."));
        return (definition.Name, reasons);
    }

    private static string AggregationList(IEnumerable<AutoAggregationField> aggregations)
    {
        var list = aggregations.Select(a => a.Operation == AggregationOperation.Count ? "count()" : $"sum({a.Path})").ToList();
        return list.Count == 0 ? "no aggregation" : string.Join(", ", list);
    }

    /// <summary>Whether <paramref name="wider"/> answers everything <paramref name="narrow"/> does, and more.</summary>
    private static bool WidensAutoMapReduce(Index wider, Index narrow) =>
        wider != narrow && wider.Definition.IsAutoMapReduce && narrow.Definition.IsAutoMapReduce
        && string.Equals(wider.Definition.Collection, narrow.Definition.Collection, StringComparison.OrdinalIgnoreCase)
        && wider.Definition.AutoFields.SequenceEqual(narrow.Definition.AutoFields)
        && wider.Definition.Aggregations.Count > narrow.Definition.Aggregations.Count
        && narrow.Definition.Aggregations.All(wider.Definition.Aggregations.Contains);

    /// <summary>Whether a narrower auto map-reduce index waits for <paramref name="index"/> to catch up before it is retired.</summary>
    private bool RetiresAutoMapReduce(Index index) =>
        index.Definition.IsAutoMapReduce && _indexes.Values.Any(narrow => WidensAutoMapReduce(index, narrow));

    /// <summary>Deletes auto map-reduce indexes that a wider one with the same grouping covers, once that one is not stale.</summary>
    private async Task RemoveCoveredAutoMapReduceIndexesAsync()
    {
        var autos = _indexes.Values.Where(i => i.Definition.IsAutoMapReduce).ToList();
        foreach (var narrow in autos)
        {
            var wider = autos.FirstOrDefault(w => WidensAutoMapReduce(w, narrow));
            if (wider is null)
            {
                continue;
            }
            bool stale;
            using (var reader = _database.BeginRead())
            {
                stale = wider.IsStale(reader);
            }
            if (stale || !_indexes.ContainsKey(narrow.Name))
            {
                continue;
            }
            if (_autoIndexes.IsRecorded(_database.Name, narrow.Name))
            {
                // Taken out of the record, which deletes it on every node, this one included.
                _autoIndexes.Deleted(_database.Name, narrow.Name);
                _logger.LogInformation("Auto map-reduce index {Index} is covered by {Wider}, which has caught up; taken out of the cluster's record", narrow.Name, wider.Name);
                continue;
            }
            try
            {
                await DeleteAsync(narrow.Name).ConfigureAwait(false);
                _autoIndexes.Deleted(_database.Name, narrow.Name);
                _logger.LogInformation("Auto map-reduce index {Index} is covered by {Wider}, which has caught up; deleted", narrow.Name, wider.Name);
            }
            catch (IndexDoesNotExistException)
            {
                // Removed meanwhile by another pass.
            }
        }
    }
}
