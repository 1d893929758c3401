using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using System.IO.Hashing;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Rql;
using Jackdaw.Storage.Blittable;
using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Jackdaw.Server.Queries;

/// <summary>
/// Runs a planned query on a Lucene index: builds the Lucene query and sort
/// (<see cref="LuceneQueryBuilder"/>, the index's fields resolved as the query names them), collects
/// the hits in growing windows, resolves each to its document (distinct, not deleted since it was
/// indexed, past the query's <c>filter</c>), and writes the results in the answer's shape.
/// </summary>
public static class IndexQueryExecutor
{
    /// <summary>How many hits a query asks Lucene for first.</summary>
    public const int FirstWindow = 128;

    /// <summary>The answer of <paramref name="query"/> on <paramref name="index"/>, or <see cref="QueryAnswer.NotModified"/> when <paramref name="ifNoneMatch"/> still holds.</summary>
    public static QueryAnswer Execute(DocumentDatabase database, Indexing.Index index, RqlQuery query, QueryRun run, string? ifNoneMatch)
    {
        var request = run.Request;
        using var reader = database.BeginRead();
        while (true)
        {
            // Read again after the searcher: an index that rolled back meanwhile (a disk failure)
            // has its progress back with its searchers, and the query starts again.
            var generation = index.Generation;
            var progress = index.Progress;
            var stale = index.IsStale(reader);
            var resultEtag = QueryResultEtag.Compute(request, reader.LastEtag, index.Name, progress.CaughtUpTo, progress.LastIndexedEtag);
            if (ifNoneMatch is not null && ifNoneMatch.Trim('"') == resultEtag)
            {
                return new QueryAnswer(resultEtag, default, NotModified: true);
            }

            var searcher = index.Acquire();
            try
            {
                if (index.Generation != generation)
                {
                    continue;
                }
                var (luceneQuery, sort) = BuildSearch(index, searcher.IndexReader, query, request);
                var output = new ArrayBufferWriter<byte>(16 * 1024);
                run.Shape.StartResults(output);
                var (total, skipped, included) = WriteHits(searcher, luceneQuery, sort, query, run, reader, index, output);
                run.Shape.EndResults(output, reader, included, run.Timings, run.Revisions);
                var statistics = new QueryStatistics(total, skipped, index.Name, stale, index.LastIndexingTime ?? DateTime.UtcNow, resultEtag, run.Filter?.Scanned, run.Timings, run.Started);
                run.Shape.WriteStatistics(output, statistics);
                // The request's trace span (Diagnostics: only when OpenTelemetry listens) names the index.
                if (System.Diagnostics.Activity.Current is { IsAllDataRequested: true } span)
                {
                    span.SetTag("jackdaw.index", index.Name);
                }
                return new QueryAnswer(resultEtag, output.WrittenMemory, NotModified: false) { Statistics = statistics };
            }
            finally
            {
                index.Release(searcher);
            }
        }
    }

    /// <summary>The Lucene query and sort of <paramref name="query"/> on <paramref name="index"/>, as <paramref name="reader"/> (a searcher's) sees its fields.</summary>
    public static (Query Query, Sort? Sort) BuildSearch(Indexing.Index index, IndexReader reader, RqlQuery query, QueryRequest request)
    {
        var known = KnownFields(index, reader);
        var builder = new LuceneQueryBuilder(request.Text, request.Parameters, (path, indexing, position) => Resolve(index, known, reader, request.Text, path, indexing, position), index.IsMultiValued);
        var luceneQuery = builder.Build(query.Where);
        return (luceneQuery, BuildSort(index, known, reader, query, request.Text, builder));
    }

    private static (long Total, long Skipped, HashSet<string>? Included) WriteHits(IndexSearcher searcher, Query luceneQuery, Sort? sort, RqlQuery query, QueryRun run, DocumentsReader reader, Indexing.Index index, ArrayBufferWriter<byte> output)
    {
        if (index.Definition.IsMapReduce)
        {
            return ReduceResultsWriter.WriteHits(searcher, luceneQuery, sort, query, run, output);
        }
        var (offset, limit, filter, timings) = (run.Offset, run.Limit, run.Filter, run.Timings);
        using var timing = timings?.Start("Query");
        var includes = DocumentIncludes.PathsOf(query);
        var included = includes is null ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var maxDoc = Math.Max(1, searcher.IndexReader.MaxDoc);
        // A small first window: a query without a limit asks for a page of a million, and Lucene
        // would fill a priority queue that large for every query (measured: 20× slower). A filter
        // examines every hit (up to its filter_limit) to count its matches: a window of that many.
        var needed = filter is null ? Math.Min(maxDoc, Math.Max(1, offset + limit)) : Math.Min(maxDoc, Math.Max(1, filter.Limit ?? maxDoc));
        var wanted = (int)(filter is null ? Math.Min(needed, FirstWindow) : needed);
        while (true)
        {
            TopDocs top;
            using (timings?.Start("Lucene"))
            {
                top = sort is null ? searcher.Search(luceneQuery, wanted) : searcher.Search(luceneQuery, null, wanted, sort);
            }
            using var retriever = timings?.Start("Retriever");
            var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            long skipped = 0;
            long distinct = 0;
            long written = 0;
            var complete = true;
            var leaves = searcher.IndexReader.Leaves;
            var needsStored = query.Select.Count > 0 && query.Select.Any(p => index.PlanOf(p.Path.ToString()).Stored);
            var scratch = new Lucene.Net.Util.BytesRef();
            foreach (var hit in top.ScoreDocs)
            {
                // The id from its sort doc values (no stored-field block to decompress); the stored
                // fields only when a projection reads them.
                var stored = needsStored ? searcher.Doc(hit.Doc) : null;
                var id = stored?.Get(LuceneFields.DocumentId) ?? IdOf(leaves, hit.Doc, scratch) ?? searcher.Doc(hit.Doc).Get(LuceneFields.DocumentId);
                if (!seen.Add(id))
                {
                    skipped++;
                    continue;
                }
                if (!reader.TryGet(id, out var record))
                {
                    // Deleted after the index saw it (the index is behind): not a result.
                    skipped++;
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
                distinct++;
                if (distinct <= offset)
                {
                    continue;
                }
                if (written >= limit)
                {
                    // A filtered query counts every match; an unfiltered one has its total from Lucene.
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
                QueryProjection.WriteResult(output, query, record.Id, record.Document, stored, index);
                if (included is not null)
                {
                    DocumentIncludes.Collect(record.Document, includes!, included);
                }
                run.Revisions?.Collect(record.Id, record.Document);
            }
            if (filter is null && written < limit && top.ScoreDocs.Length == wanted && wanted < top.TotalHits)
            {
                complete = false;
            }
            // Duplicates or deleted documents kept the filter from examining its filter_limit.
            if (filter is not null && !filter.Exhausted && top.ScoreDocs.Length == wanted && wanted < top.TotalHits)
            {
                complete = false;
            }
            if (complete)
            {
                // Exact when every hit was read (or filtered); otherwise the hits less the duplicates seen.
                var total = filter is not null || top.ScoreDocs.Length == top.TotalHits ? distinct : top.TotalHits - skipped;
                return (total, skipped, included);
            }
            // Duplicates (a map that returned several entries) or deleted documents used up the
            // window: read a larger one.
            output.ResetWrittenCount();
            run.Shape.StartResults(output);
            included?.Clear();
            filter?.Reset();
            // The first window was too small: ask for what the page needs (grown further only when
            // duplicates or deleted documents used it up).
            wanted = (int)Math.Min(top.TotalHits, wanted < needed ? needed : (long)wanted * 2);
        }
    }

    /// <summary>The (lowercased) id of a hit, from the <c>@id@s</c> doc values of its segment; null when the segment has none.</summary>
    public static string? IdOf(IList<AtomicReaderContext> leaves, int doc, Lucene.Net.Util.BytesRef scratch)
    {
        var leaf = leaves[ReaderUtil.SubIndex(doc, leaves)];
        var values = leaf.AtomicReader.GetSortedDocValues(LuceneFields.Id + LuceneFields.StringSortSuffix);
        if (values is null)
        {
            return null;
        }
        var ord = values.GetOrd(doc - leaf.DocBase);
        if (ord < 0)
        {
            return null;
        }
        values.LookupOrd(ord, scratch);
        return scratch.Utf8ToString();
    }

    /// <summary>The fields a static index's entries have (from Lucene's field infos and the @exists terms).</summary>
    private static HashSet<string> KnownFields(Indexing.Index index, IndexReader reader)
    {
        var known = new HashSet<string>(StringComparer.Ordinal);
        if (index.Definition.IsAuto)
        {
            return known;
        }
        foreach (var name in index.Definition.Fields.Keys)
        {
            known.Add(name);
        }
        var terms = MultiFields.GetTerms(reader, LuceneFields.Exists);
        if (terms is not null)
        {
            var iterator = terms.GetEnumerator();
            while (iterator.MoveNext())
            {
                known.Add(iterator.Term.Utf8ToString());
            }
        }
        return known;
    }

    private static FieldPlan Resolve(Indexing.Index index, HashSet<string> known, IndexReader reader, string text, RqlPath path, FieldIndexing indexing, int position)
    {
        var name = path.ToString();
        if (index.Definition.IsAuto)
        {
            var field = index.Definition.AutoFields.FirstOrDefault(f => f.Path == name && f.Indexing == indexing)
                ?? index.Definition.AutoFields.FirstOrDefault(f => f.Path == name && indexing == FieldIndexing.Exact && f.Indexing == FieldIndexing.Default);
            if (field is null)
            {
                throw new InvalidQueryException(text, position, $"the index '{index.Name}' has no field '{new AutoIndexField(name, indexing).Key}'; its fields are {string.Join(", ", index.Definition.AutoFields.Select(f => f.Key))}. Query the collection instead and an auto-index covering it is made.");
            }
            return new FieldPlan(field.LuceneName, field.Indexing, false);
        }
        if (!known.Contains(name) && reader.NumDocs > 0)
        {
            throw new InvalidQueryException(text, position, $"the index '{index.Name}' has no field '{name}'; its fields are {string.Join(", ", known.Order(StringComparer.Ordinal))}.");
        }
        return index.PlanOf(name);
    }

    private static Sort? BuildSort(Indexing.Index index, HashSet<string> known, IndexReader reader, RqlQuery query, string text, LuceneQueryBuilder builder)
    {
        if (query.OrderBy.Count == 0)
        {
            return null;
        }
        var infos = MultiFields.GetMergedFieldInfos(reader);
        var fields = new List<SortField>();
        foreach (var order in query.OrderBy)
        {
            if (order.IsId)
            {
                fields.Add(new SortField(LuceneFields.Id + LuceneFields.StringSortSuffix, SortFieldType.STRING, order.Descending));
                continue;
            }
            if (order.IsScore)
            {
                fields.Add(order.Descending ? new SortField(null, SortFieldType.SCORE, reverse: true) : SortField.FIELD_SCORE);
                continue;
            }
            var plan = Resolve(index, known, reader, text, order.Path!, FieldIndexing.Default, order.Position);
            if (string.Equals(order.As, "alphaNumeric", StringComparison.OrdinalIgnoreCase))
            {
                fields.Add(new SortField(plan.LuceneName + LuceneFields.StringSortSuffix, new AlphaNumericComparer.Source(), order.Descending));
                continue;
            }
            var numeric = order.As?.ToLowerInvariant() switch
            {
                "long" or "double" => true,
                "string" => false,
                null => infos.FieldInfo(plan.LuceneName + LuceneFields.StringSortSuffix) is null && infos.FieldInfo(plan.LuceneName + LuceneFields.NumberSortSuffix) is not null,
                _ => throw new InvalidQueryException(text, order.Position, $"'order by ... as {order.As}' is not known; use long, double, string or alphaNumeric."),
            };
            if (numeric)
            {
                // From memory per segment; missing numbers first, as nulls come first in ascending order.
                fields.Add(new SortField(plan.LuceneName + LuceneFields.NumberSortSuffix, CachedDoubleComparerSource.Instance, order.Descending));
            }
            else
            {
                var field = new SortField(plan.LuceneName + LuceneFields.StringSortSuffix, SortFieldType.STRING, order.Descending);
                field.SetMissingValue(SortField.STRING_FIRST);
                fields.Add(field);
            }
        }
        return new Sort(fields.ToArray());
    }
}
