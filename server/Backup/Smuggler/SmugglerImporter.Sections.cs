using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Subscriptions;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>The importer's batches, and the dump's sections after its documents (tombstones: SmugglerImporter.Tombstones.cs).</summary>
internal sealed partial class SmugglerImporter
{
    /// <summary>Sends the batch parsed so far; waits first for the one committing (one at a time).</summary>
    private async ValueTask SendBatchAsync()
    {
        if (_batch.Count == 0)
        {
            return;
        }
        await DrainAsync().ConfigureAwait(false);
        var documents = _batch.Select(b => b.Document).ToList();
        _inFlight = (_database.EnqueueAsync(new ImportDocumentsCommand(documents, _parsing)), _batch, _parsing);
        _batch = new List<(ImportedDocument, long)>(MaxBatchDocuments);
        _batchBytes = 0;
        _parsing = _spare ?? new JsonOperationContext();
        _spare = null;
    }

    /// <summary>
    /// Waits for the committing batch. A batch is all or nothing: when it fails, its documents are
    /// put again one by one, and the ones that fail alone are reported (the database closing, or
    /// a cancellation, is no document's fault: it stops the import).
    /// </summary>
    private async ValueTask DrainAsync()
    {
        if (_inFlight is not { } pending)
        {
            return;
        }
        _inFlight = null;
        try
        {
            try
            {
                await pending.Commit.ConfigureAwait(false);
                _committed += pending.Batch.Count;
            }
            catch (Exception e) when (e is not (DatabaseUnavailableException or OperationCanceledException))
            {
                foreach (var (document, position) in pending.Batch)
                {
                    try
                    {
                        await _database.EnqueueAsync(new ImportDocumentsCommand([document], pending.Context)).ConfigureAwait(false);
                        _committed++;
                    }
                    catch (Exception alone) when (alone is not (DatabaseUnavailableException or OperationCanceledException))
                    {
                        Refuse(position, document.Id, alone.Message);
                    }
                }
            }
            MarkLinked(pending.Batch);
        }
        finally
        {
            pending.Context.Reset();
            _spare = pending.Context;
        }
    }

    /// <summary>On the way out: no batch may still be committing against a context about to be disposed.</summary>
    private async ValueTask AbandonAsync()
    {
        if (_inFlight is { } pending)
        {
            _inFlight = null;
            try
            {
                await pending.Commit.ConfigureAwait(false);
                _committed += pending.Batch.Count;
            }
            catch (Exception)
            {
                // The import is failing already; its own error is the one reported.
            }
            pending.Context.Dispose();
        }
        _parsing.Dispose();
        _spare?.Dispose();
    }

    private async Task ReadIndexesAsync(DumpReader dump)
    {
        var counts = _result.Indexes;
        var import = _options.Includes(DatabaseItemType.Indexes);
        counts.Start();
        if (!await StartArrayAsync(dump, "Indexes").ConfigureAwait(false))
        {
            return;
        }
        var store = _database.GetComponent<IndexStore>();
        long position = 0;
        while (await dump.NextElementAsync(16 * 1024 * 1024).ConfigureAwait(false) is { IsDone: false } element)
        {
            _cancel.ThrowIfCancellationRequested();
            position++;
            counts.Read(element.Size);
            if (!import || store is null)
            {
                counts.SkippedOne();
                continue;
            }
            if (element.TooLarge || !element.IsObject || JsonNode.Parse(System.Buffers.BuffersExtensions.ToArray(element.Json)) is not JsonObject entry)
            {
                RefuseItem(counts, "Indexes", position, null, "it is not an index entry {\"Type\":...,\"IndexDefinition\":{...}}.");
                continue;
            }
            await ImportIndexAsync(store, entry, position, counts).ConfigureAwait(false);
        }
        counts.Finish(skipped: !import);
    }

    private async Task ImportIndexAsync(IndexStore store, JsonObject entry, long position, SmugglerCounts counts)
    {
        var type = entry["Type"]?.GetValueKind() == JsonValueKind.String ? entry["Type"]!.GetValue<string>() : null;
        // RavenDB 4+ writes "IndexDefinition"; older tools "Definition".
        if ((entry["IndexDefinition"] ?? entry["Definition"]) is not JsonObject definitionJson)
        {
            RefuseItem(counts, "Indexes", position, null, "it has no 'IndexDefinition' object.");
            return;
        }
        var name = definitionJson["Name"]?.GetValueKind() == JsonValueKind.String ? definitionJson["Name"]!.GetValue<string>() : null;
        if (type is "AutoMap" or "AutoMapReduce")
        {
            // Auto-indexes are made again by the queries that need them.
            counts.SkippedOne();
            _result.AddInfo($"Skipped auto-index '{name}': the queries that need it make it again.");
            return;
        }
        if (type is "Faulty")
        {
            counts.SkippedOne();
            return;
        }
        if (_options.RemoveAnalyzers)
        {
            SmugglerIndexes.RemoveAnalyzers(definitionJson);
        }
        try
        {
            var definition = IndexDefinition.FromJson(JsonSerializer.SerializeToElement(definitionJson));
            await store.PutAsync([definition]).ConfigureAwait(false);
            IndexLockMode? lockMode = Enum.TryParse<IndexLockMode>(definitionJson["LockMode"]?.ToString(), out var l) ? l : null;
            IndexPriority? priority = Enum.TryParse<IndexPriority>(definitionJson["Priority"]?.ToString(), out var p) ? p : null;
            if (lockMode is not null || priority is not null)
            {
                await store.UpdateSettingsAsync(definition.Name, (_, record) => record with
                {
                    LockMode = lockMode ?? record.LockMode,
                    Priority = priority ?? record.Priority,
                }).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is BadRequestException or FeatureNotSupportedException or IndexCompilationException or AnalyzerCompilationException or IndexLockedException or InvalidOperationException)
        {
            RefuseItem(counts, "Indexes", position, name, e.Message);
        }
    }

    private async Task ReadIdentitiesAsync(DumpReader dump)
    {
        var counts = _result.Identities;
        var import = _options.Includes(DatabaseItemType.Identities);
        counts.Start();
        if (!await StartArrayAsync(dump, "Identities").ConfigureAwait(false))
        {
            return;
        }
        long position = 0;
        while (await dump.NextElementAsync(1024 * 1024).ConfigureAwait(false) is { IsDone: false } element)
        {
            position++;
            counts.Read(element.Size);
            if (!import)
            {
                counts.SkippedOne();
                continue;
            }
            string? key = null;
            long value = 0;
            if (!element.TooLarge && element.IsObject)
            {
                using var json = JsonDocument.Parse(element.Json);
                key = json.RootElement.TryGetProperty("Key", out var k) && k.ValueKind == JsonValueKind.String ? k.GetString() : null;
                if (!json.RootElement.TryGetProperty("Value", out var v) || !v.TryGetInt64(out value))
                {
                    key = null;
                }
            }
            // RavenDB's identity names end with its separator: "users|".
            var prefix = key?.TrimEnd('|');
            if (string.IsNullOrEmpty(prefix) || value < 0)
            {
                RefuseItem(counts, "Identities", position, key, "it is not an identity {\"Key\":\"users|\",\"Value\":7}.");
                continue;
            }
            try
            {
                await _database.EnqueueAsync(new SeedIdentityCommand(prefix, value, force: false)).ConfigureAwait(false);
            }
            catch (BadRequestException e)
            {
                RefuseItem(counts, "Identities", position, key, e.Message);
            }
        }
        counts.Finish(skipped: !import);
    }

    private async Task ReadSubscriptionsAsync(DumpReader dump)
    {
        var counts = _result.Subscriptions;
        var import = _options.Includes(DatabaseItemType.Subscriptions);
        counts.Start();
        if (!await StartArrayAsync(dump, "Subscriptions").ConfigureAwait(false))
        {
            return;
        }
        var store = _database.GetComponent<SubscriptionStore>();
        long position = 0;
        while (await dump.NextElementAsync(16 * 1024 * 1024).ConfigureAwait(false) is { IsDone: false } element)
        {
            position++;
            counts.Read(element.Size);
            if (!import || store is null)
            {
                counts.SkippedOne();
                continue;
            }
            string? name = null, query = null;
            var disabled = false;
            if (!element.TooLarge && element.IsObject)
            {
                using var json = JsonDocument.Parse(element.Json);
                var root = json.RootElement;
                name = root.TryGetProperty("SubscriptionName", out var n) && n.ValueKind == JsonValueKind.String ? n.GetString() : null;
                query = root.TryGetProperty("Query", out var q) && q.ValueKind == JsonValueKind.String ? q.GetString() : null;
                disabled = root.TryGetProperty("Disabled", out var d) && d.ValueKind == JsonValueKind.True;
            }
            if (query is null)
            {
                RefuseItem(counts, "Subscriptions", position, name, "it has no 'Query'.");
                continue;
            }
            try
            {
                // As RavenDB: an imported subscription starts from the beginning (its position was the source's).
                var record = await store.CreateAsync(name, query, null).ConfigureAwait(false);
                if (disabled)
                {
                    await store.SetDisabledAsync(record.Name, true).ConfigureAwait(false);
                }
            }
            catch (Exception e) when (e is BadRequestException or InvalidQueryException or SubscriptionAlreadyExistsException)
            {
                RefuseItem(counts, "Subscriptions", position, name, e.Message);
            }
        }
        counts.Finish(skipped: !import);
    }

    private void RefuseItem(SmugglerCounts counts, string section, long position, string? id, string reason) =>
        _result.Refuse(counts, new SmugglerRefusal(section, position, id, reason));
}
