using System.Diagnostics;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Rql;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Patching;

/// <summary>
/// Patch by query (<c>from Orders where Company = $c update { this.Freight += 1 }</c>) and delete
/// by query, as RavenDB runs them: a long-running operation of the database. The query is planned
/// as any query is (an index, or the collection), the ids it matches are read at once from one
/// snapshot, and then patched or deleted in batches of <see cref="BatchSize"/>, each its own merged
/// transaction.
/// </summary>
/// <remarks>
/// What a cancelled (<c>operations/kill</c>) or crashed run leaves is a prefix of its batches:
/// every batch committed before stays, whole, and nothing of the batch that was running, since a
/// batch commits or rolls back as one transaction. No document is ever half-written. A document
/// changed by another writer between the query and its batch is patched as it is then; one
/// deleted meanwhile is passed over. Running the operation again patches every matching document
/// again (a patch is not idempotent unless its script is).
/// </remarks>
public static class ByQueryOperation
{
    /// <summary>Documents per batch (one merged transaction each).</summary>
    public const int BatchSize = 1024;

    /// <summary>
    /// Checks the query (and compiles its update script) and starts the operation; the returned
    /// operation runs on in the background.
    /// </summary>
    /// <param name="delete">Delete what the query matches, instead of patching it.</param>
    /// <param name="failureOf">How an exception is reported in the operation's state (the hosting layer's mapping).</param>
    /// <exception cref="InvalidQueryException">The query is not valid RQL, or has no update clause to patch with (or one, to delete).</exception>
    /// <exception cref="PatchScriptException">The update script does not parse.</exception>
    public static DatabaseOperation Start(DocumentDatabase database, QueryRequest request, QueryOperationOptions options, bool delete, Func<Exception, OperationFailure> failureOf)
    {
        var query = RqlParser.Parse(request.Text);
        DocumentPatch? patch = null;
        if (delete && query.Update is { } update)
        {
            throw new InvalidQueryException(request.Text, update.Position, "a delete by query deletes what the query matches and takes no 'update' clause; send it as PATCH to patch.");
        }
        if (!delete)
        {
            if (query.Update is null)
            {
                throw new InvalidQueryException(request.Text, request.Text.Length, "a patch by query needs an 'update { ... }' clause at its end, e.g. from Orders where Company = $c update { this.Freight += 1 }.");
            }
            patch = new DocumentPatch(PatchScript.Compile(query.Update.Script, ParametersObject(request.Parameters), query.From.Alias, "The query's update clause"));
        }

        var details = new BulkOperationDetails(request.Text, options.RetrieveDetails, delete);
        var operation = database.Operations.StartNew(details);
        _ = Task.Run(() => RunAsync(database, request, query, options, patch, details, operation, failureOf));
        return operation;
    }

    private static async Task RunAsync(DocumentDatabase database, QueryRequest request, RqlQuery query, QueryOperationOptions options, DocumentPatch? patch, BulkOperationDetails details, DatabaseOperation operation, Func<Exception, OperationFailure> failureOf)
    {
        var killed = operation.Killed;
        try
        {
            var planned = request with
            {
                WaitForNonStaleResults = !options.AllowStale,
                WaitTimeout = options.StaleTimeout ?? QueryOperationOptions.DefaultStaleTimeout,
            };
            var ids = await MatchingIdsAsync(database, planned, query, killed).ConfigureAwait(false);
            details.Matched(ids.Count);

            var batchSize = options.MaxOpsPerSecond is { } max ? Math.Clamp(max / 10, 1, BatchSize) : BatchSize;
            var started = Stopwatch.GetTimestamp();
            using var context = new JsonOperationContext();
            for (var i = 0; i < ids.Count; i += batchSize)
            {
                killed.ThrowIfCancellationRequested();
                var command = new QueryBatchCommand(ids.GetRange(i, Math.Min(batchSize, ids.Count - i)), patch, context, details.KeepDetails);
                await database.EnqueueAsync(command).ConfigureAwait(false);
                details.Committed(command.Processed, command.Details);
                context.Reset();
                if (options.MaxOpsPerSecond is { } limit)
                {
                    // RavenDB's maxOpsPerSec: wait until the documents done so far are within the rate.
                    var due = TimeSpan.FromSeconds((double)(i + batchSize) / limit) - Stopwatch.GetElapsedTime(started);
                    if (due > TimeSpan.Zero)
                    {
                        await Task.Delay(due, killed).ConfigureAwait(false);
                    }
                }
            }
            operation.Complete(details.Processed);
        }
        catch (Exception e)
        {
            var failure = killed.IsCancellationRequested
                ? new BadRequestException($"Operation {operation.Id} was killed (operations/kill) after {details.Processed} documents; the batches committed before stay, whole.", e)
                : e;
            operation.Fail(failureOf(failure), details.Processed);
        }
    }

    /// <summary>The ids of the documents the query matches now (its offset and limit applied), in the order the query reads them.</summary>
    private static async Task<List<string>> MatchingIdsAsync(DocumentDatabase database, QueryRequest request, RqlQuery query, CancellationToken cancellationToken)
    {
        var plan = await QueryPlanner.PlanAsync(database, request, query, null, cancellationToken).ConfigureAwait(false);
        var ids = new List<string>();
        if (plan.Index is not { } index)
        {
            var evaluator = query.Where is null ? null : new RqlEvaluator(request.Text, request.Parameters);
            var collection = QueryPlanner.IsAllDocs(query.From.Name) ? null : query.From.Name;
            using var reader = database.BeginRead();
            foreach (var record in reader.GetDocumentsFrom(collection, 0))
            {
                if (evaluator is null || evaluator.Matches(query.Where, record.Id, record.Document))
                {
                    ids.Add(record.Id);
                }
            }
        }
        else
        {
            var searcher = index.Acquire();
            try
            {
                using var reader = database.BeginRead();
                var (search, sort) = IndexQueryExecutor.BuildSearch(index, searcher.IndexReader, query, request);
                var hits = HitStream.Create(searcher, search, sort, ranked: false);
                while (hits.MoveNext())
                {
                    // Another entry of a document already found, or one deleted since it was indexed.
                    if (!hits.IsRepeat && reader.TryGetByKey(hits.Key, out var record))
                    {
                        ids.Add(record.Id);
                    }
                }
            }
            finally
            {
                index.Release(searcher);
            }
        }

        var offset = (int)Math.Min(plan.Offset, ids.Count);
        var count = (int)Math.Min(plan.Limit ?? long.MaxValue, ids.Count - offset);
        return offset == 0 && count == ids.Count ? ids : ids.GetRange(offset, count);
    }

    /// <summary>The query's parameters as one JSON object: the update script's <c>args</c>.</summary>
    private static JsonElement ParametersObject(IReadOnlyDictionary<string, JsonElement> parameters)
    {
        using var stream = new MemoryStream();
        using (var writer = new Utf8JsonWriter(stream))
        {
            writer.WriteStartObject();
            foreach (var (name, value) in parameters)
            {
                writer.WritePropertyName(name);
                value.WriteTo(writer);
            }
            writer.WriteEndObject();
        }
        return JsonDocument.Parse(stream.ToArray()).RootElement.Clone();
    }
}
