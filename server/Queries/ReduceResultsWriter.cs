using System.Buffers;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Rql;
using Jackdaw.Storage.Blittable;
using Lucene.Net.Search;

namespace Jackdaw.Server.Queries;

/// <summary>
/// The hits of a query on a map-reduce index: each is a result row, answered from the JSON the
/// index stored with it (<see cref="LuceneFields.ReduceResult"/>), not a document. Every row gets
/// <c>@metadata</c> (RavenDB's clients read it from every result; a row has no <c>@id</c>); a
/// projection picks paths of the row. <c>filter</c> and <c>include</c> read the row as they read
/// a document, so <c>include Company</c> brings the key's document.
/// </summary>
internal static class ReduceResultsWriter
{
    public static (long Total, long Skipped, HashSet<string>? Included) WriteHits(IndexSearcher searcher, Query luceneQuery, Sort? sort, RqlQuery query, QueryRun run, ArrayBufferWriter<byte> output)
    {
        var (offset, limit, filter, timings) = (run.Offset, run.Limit, run.Filter, run.Timings);
        using var timing = timings?.Start("Query");
        var includes = DocumentIncludes.PathsOf(query);
        var included = includes is null ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var maxDoc = Math.Max(1, searcher.IndexReader.MaxDoc);
        // Rows are distinct, so what the page needs (every row for a filter) is known; but a query
        // without a limit needs every row, and Lucene fills a priority queue as large as the window
        // asked for on every query. So, as for maps, a small first window, then the rest only when
        // more rows matched (measured: 7x the queries/s for an equality query, perf/load/map-reduce.sh).
        var needed = filter is null ? Math.Min(maxDoc, Math.Max(1, offset + limit)) : Math.Min(maxDoc, Math.Max(1, filter.Limit ?? maxDoc));
        var wanted = (int)(filter is null ? Math.Min(needed, IndexQueryExecutor.FirstWindow) : needed);
        TopDocs top;
        using (timings?.Start("Lucene"))
        {
            top = sort is null ? searcher.Search(luceneQuery, wanted) : searcher.Search(luceneQuery, null, wanted, sort);
            if (top.TotalHits > top.ScoreDocs.Length && needed > wanted)
            {
                wanted = (int)Math.Min(needed, top.TotalHits);
                top = sort is null ? searcher.Search(luceneQuery, wanted) : searcher.Search(luceneQuery, null, wanted, sort);
            }
        }
        using var retriever = timings?.Start("Retriever");
        using var context = new JsonOperationContext();
        long matched = 0;
        long written = 0;
        foreach (var hit in top.ScoreDocs)
        {
            var json = searcher.Doc(hit.Doc).GetBinaryValue(LuceneFields.ReduceResult);
            if (json is null)
            {
                continue;
            }
            context.Reset();
            var text = json.Bytes.AsSpan(json.Offset, json.Length);
            var row = context.Parse(text, BlittableMode.Memory);
            if (filter is not null)
            {
                if (filter.Exhausted)
                {
                    break;
                }
                if (!filter.Matches("", row.Span))
                {
                    continue;
                }
            }
            matched++;
            if (matched <= offset)
            {
                continue;
            }
            if (written >= limit)
            {
                if (filter is null)
                {
                    break;
                }
                continue;
            }
            if (written++ > 0)
            {
                output.Write(","u8);
            }
            QueryProjection.WriteReduceRow(output, query, text, row.Span);
            if (included is not null)
            {
                DocumentIncludes.Collect(row.Span, includes!, included);
            }
        }
        var total = filter is not null ? matched : top.TotalHits;
        return (total, 0, included);
    }
}
