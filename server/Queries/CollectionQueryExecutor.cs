using System.Buffers;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Queries;

/// <summary>
/// Runs a query that needs no index: the collection's documents (or all, for <c>@all_docs</c>) in
/// etag order, or sorted by id for <c>order by id()</c>, each tested with <see cref="RqlEvaluator"/>.
/// </summary>
public static class CollectionQueryExecutor
{
    /// <summary>The answer of <paramref name="query"/> from the document store, or <see cref="QueryAnswer.NotModified"/> when <paramref name="ifNoneMatch"/> still holds.</summary>
    public static QueryAnswer Execute(DocumentDatabase database, RqlQuery query, QueryRun run, string? ifNoneMatch)
    {
        var (request, offset, limit, filter) = (run.Request, run.Offset, run.Limit, run.Filter);
        var timing = run.Timings?.Start("Query");
        var evaluator = new RqlEvaluator(request.Text, request.Parameters);
        var collection = QueryPlanner.IsAllDocs(query.From.Name) ? null : query.From.Name;
        var includes = DocumentIncludes.PathsOf(query);
        using var reader = database.BeginRead();
        var resultEtag = QueryResultEtag.Compute(request, reader.LastEtag, collection ?? "@all_docs", 0, 0);
        if (ifNoneMatch is not null && ifNoneMatch.Trim('"') == resultEtag)
        {
            return new QueryAnswer(resultEtag, default, NotModified: true);
        }
        var included = includes is null ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var output = new ArrayBufferWriter<byte>(16 * 1024);
        run.Shape.StartResults(output);
        long total = 0;
        long written = 0;
        var byId = query.OrderBy.FirstOrDefault(o => o.IsId);
        if (byId is null)
        {
            using var storage = run.Timings?.Start("Storage");
            foreach (var record in reader.GetDocumentsFrom(collection, 0))
            {
                if (query.Where is not null && !evaluator.Matches(query.Where, record.Id, record.Document))
                {
                    continue;
                }
                if (filter is not null)
                {
                    if (filter.Exhausted)
                    {
                        break;
                    }
                    if (!filter.Matches(record.Id, record.Document))
                    {
                        continue;
                    }
                }
                total++;
                if (total <= offset || written >= limit)
                {
                    continue;
                }
                if (written++ > 0)
                {
                    output.Write(","u8);
                }
                QueryProjection.WriteResult(output, query, record.Id, record.Document, null, null);
                if (included is not null)
                {
                    DocumentIncludes.Collect(record.Document, includes!, included);
                }
                run.Revisions?.Collect(record.Id, record.Document);
            }
        }
        else
        {
            // order by id(): the matching ids, sorted as an index sorts them (lowercased, ordinal).
            using var storage = run.Timings?.Start("Storage");
            var ids = new List<string>();
            foreach (var record in reader.GetDocumentsFrom(collection, 0))
            {
                if (query.Where is null || evaluator.Matches(query.Where, record.Id, record.Document))
                {
                    ids.Add(record.Id);
                }
            }
            ids.Sort((a, b) => string.CompareOrdinal(a.ToLowerInvariant(), b.ToLowerInvariant()) * (byId.Descending ? -1 : 1));
            if (filter is null)
            {
                total = ids.Count;
            }
            long matched = 0;
            foreach (var id in ids)
            {
                // A filter examines the documents in the query's order, as far as its filter_limit.
                if (filter is null && (matched >= offset + limit))
                {
                    break;
                }
                if (!reader.TryGet(id, out var record))
                {
                    continue;
                }
                if (filter is not null)
                {
                    if (filter.Exhausted)
                    {
                        break;
                    }
                    if (!filter.Matches(record.Id, record.Document))
                    {
                        continue;
                    }
                }
                if (matched++ < offset || written >= limit)
                {
                    continue;
                }
                if (written++ > 0)
                {
                    output.Write(","u8);
                }
                QueryProjection.WriteResult(output, query, record.Id, record.Document, null, null);
                if (included is not null)
                {
                    DocumentIncludes.Collect(record.Document, includes!, included);
                }
                run.Revisions?.Collect(record.Id, record.Document);
            }
            if (filter is not null)
            {
                total = matched;
            }
        }
        timing?.Dispose();
        run.Shape.EndResults(output, reader, included, run.Timings, run.Revisions);
        var statistics = new QueryStatistics(total, 0, collection is null ? "AllDocs" : "collection/" + collection, false, DateTime.UtcNow, resultEtag, filter?.Scanned, run.Timings, run.Started);
        run.Shape.WriteStatistics(output, statistics);
        return new QueryAnswer(resultEtag, output.WrittenMemory, NotModified: false) { Statistics = statistics };
    }
}
