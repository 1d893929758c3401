using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

// Auto-indexes: made (or widened) for the queries that need them, retired once a wider one caught
// up, idled and deleted when no query uses them (housekeeping).
public sealed partial class IndexStore
{
    /// <summary>When this node opened the database's indexes: it knows of no query before (see <see cref="AutoIndexUsage"/>).</summary>
    private readonly DateTime _openedAt = DateTime.UtcNow;

    /// <summary>
    /// The auto-index of <paramref name="collection"/> that covers <paramref name="fields"/>: an
    /// existing one, or a new one covering these fields and those of the collection's other
    /// auto-indexes (which are deleted once it has caught up).
    /// </summary>
    public async Task<Index> GetOrCreateAutoIndexAsync(string collection, IReadOnlyCollection<AutoIndexField> fields)
    {
        if (FindAutoIndex(collection, fields) is { } found)
        {
            return found;
        }
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            if (FindAutoIndex(collection, fields) is { } raced)
            {
                return raced;
            }
            var existing = _indexes.Values.Where(i => i.Definition.IsAuto && string.Equals(i.Definition.Collection, collection, StringComparison.OrdinalIgnoreCase)).ToList();
            var widened = existing.SelectMany(i => i.Definition.AutoFields).Concat(fields);
            var definition = IndexDefinition.CreateAuto(existing.FirstOrDefault()?.Definition.Collection ?? collection, widened);
            if (_indexes.TryGetValue(definition.Name, out var same))
            {
                return same;
            }
            var record = new IndexRecord(definition, IndexRecord.NewFolder(definition.Name), null, IndexLockMode.Unlock, IndexPriority.Normal, false);
            var created = await CreateAsync(record, index =>
            {
                _indexes[definition.Name] = index;
                _logger.LogInformation("Auto-index {Index} of database {Database} created for a query", definition.Name, _database.Name);
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

    private Index? FindAutoIndex(string collection, IReadOnlyCollection<AutoIndexField> fields)
    {
        var covering = _indexes.Values.Where(index =>
            index.Definition.IsAuto && !index.IsDisposed
            && string.Equals(index.Definition.Collection, collection, StringComparison.OrdinalIgnoreCase)
            && fields.All(f => index.Definition.AutoFields.Any(a => a.Indexing == f.Indexing && string.Equals(a.Path, f.Path, StringComparison.Ordinal)))).ToList();
        if (covering.Count <= 1)
        {
            return covering.FirstOrDefault();
        }
        // While a wider auto-index builds, a narrower one that has caught up keeps answering what it covers.
        using var reader = _database.BeginRead();
        return covering.Where(i => !i.IsStale(reader)).MaxBy(i => i.Definition.AutoFields.Count)
            ?? covering.MaxBy(i => i.Definition.AutoFields.Count);
    }

    /// <summary>
    /// What <see cref="GetOrCreateAutoIndexAsync"/> would do for a query (RavenDB's
    /// <c>debug=explain</c>), without doing it: the index it would use (an existing one, or the
    /// one it would create or widen into) and, for each auto-index of the collection, why it is or
    /// is not the one.
    /// </summary>
    public (string IndexName, IReadOnlyList<(string Index, string Reason)> Reasons) ExplainAutoIndex(string collection, IReadOnlyCollection<AutoIndexField> fields)
    {
        var reasons = new List<(string, string)>();
        var found = FindAutoIndex(collection, fields);
        var existing = _indexes.Values
            .Where(i => i.Definition.IsAuto && !i.IsDisposed && string.Equals(i.Definition.Collection, collection, StringComparison.OrdinalIgnoreCase))
            .OrderBy(i => i.Name, StringComparer.Ordinal)
            .ToList();
        foreach (var index in existing)
        {
            var missing = fields.Where(f => !index.Definition.AutoFields.Any(a => a.Indexing == f.Indexing && string.Equals(a.Path, f.Path, StringComparison.Ordinal))).ToList();
            string reason;
            if (ReferenceEquals(index, found))
            {
                reason = "Chosen: it covers every field the query uses (" + FieldList(fields) + ").";
            }
            else if (missing.Count > 0)
            {
                reason = "It does not cover " + FieldList(missing) + ".";
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
        var definition = IndexDefinition.CreateAuto(existing.FirstOrDefault()?.Definition.Collection ?? collection, existing.SelectMany(i => i.Definition.AutoFields).Concat(fields));
        reasons.Add((definition.Name, existing.Count == 0
            ? $"No auto-index of {collection} exists: the query would create this one, for {FieldList(fields)}."
            : $"No auto-index of {collection} covers {FieldList(fields)}: the query would create this one, with the fields of the existing ones and its own, and the narrower ones would be retired once it caught up."));
        return (definition.Name, reasons);
    }

    private static string FieldList(IEnumerable<AutoIndexField> fields)
    {
        var list = fields.Select(f => f.Key).ToList();
        return list.Count == 0 ? "no field" : string.Join(", ", list);
    }

    /// <summary>When the auto-index deleted at <paramref name="index"/>'s current idleness runs out (null for static ones, and for those a cluster's record keeps).</summary>
    public DateTime? AutoDeleteAt(Index index) =>
        index.Definition.IsAutoIndex && !_autoIndexes.IsRecorded(_database.Name, index.Name) ? (index.LastQueryingTime ?? index.Definition.CreatedAt) + _options.AutoIndexDeleteAfter : null;

    /// <summary>Idle auto-indexes, and deleting those idle too long; narrower auto-indexes once a wider one caught up.</summary>
    private async Task HousekeepingAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(_options.IdleCheckInterval, _stop.Token).ConfigureAwait(false);
                await RunHousekeepingAsync().ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
            catch (Exception e) when (!_database.IsClosing)
            {
                _logger.LogWarning(e, "Index housekeeping of database {Database} failed; it runs again later", _database.Name);
            }
            catch (Exception)
            {
                return;
            }
        }
    }

    /// <summary>One pass of housekeeping (tests call it directly).</summary>
    public async Task RunHousekeepingAsync()
    {
        var now = DateTime.UtcNow;
        var usage = new List<AutoIndexUsage>();
        foreach (var index in _indexes.Values.Where(i => i.Definition.IsAutoIndex).ToList())
        {
            var lastUsed = index.LastQueryingTime ?? index.Definition.CreatedAt;
            // A cluster's record keeps it for every node: not queried here says nothing of the others.
            var recorded = _autoIndexes.IsRecorded(_database.Name, index.Name);
            if (recorded && index.ReplacementOf is null)
            {
                // The leader deletes it once every node says so; a restart forgets queries, so not before it.
                var vouched = index.LastQueryingTime ?? (index.Definition.CreatedAt > _openedAt ? index.Definition.CreatedAt : _openedAt);
                usage.Add(new AutoIndexUsage(index.Name, index.Definition.CreatedAt, vouched, now - vouched > _options.AutoIndexDeleteAfter));
            }
            if (now - lastUsed > _options.AutoIndexDeleteAfter && !recorded)
            {
                _logger.LogWarning("Auto-index {Index} of database {Database} was not queried since {LastUsed:o}; deleted", index.Name, _database.Name, lastUsed);
                await DeleteAsync(index.Name).ConfigureAwait(false);
                _autoIndexes.Deleted(_database.Name, index.Name);
            }
            else if (now - lastUsed > _options.AutoIndexIdleAfter && index.State == IndexState.Normal)
            {
                if (recorded)
                {
                    _logger.LogInformation("Auto-index {Index} of database {Database} is idle on this node; the cluster's record keeps it (delete it there)", index.Name, _database.Name);
                }
                else
                {
                    _logger.LogInformation("Auto-index {Index} of database {Database} is idle; it is deleted at {DeleteAt:o} unless queried", index.Name, _database.Name, lastUsed + _options.AutoIndexDeleteAfter);
                }
                index.SetIdle();
            }
        }
        if (usage.Count > 0)
        {
            _autoIndexes.Used(_database.Name, usage);
        }
        await RemoveCoveredAutoIndexesAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// Deletes auto-indexes whose fields a wider auto-index of the same collection covers, and auto
    /// map-reduce indexes whose aggregations a wider one of the same grouping has, once that one is not stale.
    /// </summary>
    public async Task RemoveCoveredAutoIndexesAsync()
    {
        await RemoveCoveredAutoMapReduceIndexesAsync().ConfigureAwait(false);
        var autos = _indexes.Values.Where(i => i.Definition.IsAuto).ToList();
        foreach (var narrow in autos)
        {
            var wider = autos.FirstOrDefault(w => w != narrow
                && string.Equals(w.Definition.Collection, narrow.Definition.Collection, StringComparison.OrdinalIgnoreCase)
                && w.Definition.AutoFields.Count > narrow.Definition.AutoFields.Count
                && narrow.Definition.AutoFields.All(f => w.Definition.AutoFields.Contains(f)));
            if (wider is null)
            {
                continue;
            }
            bool stale;
            using (var reader = _database.BeginRead())
            {
                stale = wider.IsStale(reader);
            }
            if (!stale && _autoIndexes.IsRecorded(_database.Name, narrow.Name))
            {
                // Taken out of the record, which deletes it on every node, this one included.
                _autoIndexes.Deleted(_database.Name, narrow.Name);
                _logger.LogInformation("Auto-index {Index} is covered by {Wider}, which has caught up; taken out of the cluster's record", narrow.Name, wider.Name);
            }
            else if (!stale && _indexes.ContainsKey(narrow.Name))
            {
                try
                {
                    await DeleteAsync(narrow.Name).ConfigureAwait(false);
                    _autoIndexes.Deleted(_database.Name, narrow.Name);
                    _logger.LogInformation("Auto-index {Index} is covered by {Wider}, which has caught up; deleted", narrow.Name, wider.Name);
                }
                catch (IndexDoesNotExistException)
                {
                    // Removed meanwhile by another pass.
                }
            }
        }
    }
}
