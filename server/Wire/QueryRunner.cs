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

namespace Jackdaw.Server.Wire;

/// <summary>A query's answer: the JSON body, or nothing when the client's <c>If-None-Match</c> still holds.</summary>
public sealed record QueryAnswer(string ResultEtag, ReadOnlyMemory<byte> Body, bool NotModified);

/// <summary>
/// Plans and runs an RQL query, writing RavenDB's answer shape. A query on a collection with no
/// <c>where</c> (or one on <c>id()</c> only) and no <c>order by</c> reads the document store; any
/// other collection query goes to the auto-index that covers its fields (made, or widened, when
/// none does); <c>from index 'Name'</c> to that index. Results are written from the documents'
/// blittable form; projections read stored fields where the index keeps them.
/// </summary>
public static class QueryRunner
{
    /// <summary>How many hits a query asks Lucene for first.</summary>
    public const int FirstWindow = 128;

    /// <summary>The most results one query returns when it names no limit.</summary>
    public const int DefaultPageSize = 1024 * 1024;

    public static async Task<QueryAnswer> RunAsync(DocumentDatabase database, QueryRequest request, string? ifNoneMatch, CancellationToken cancellationToken)
    {
        // An index deleted, reset or rebuilt under the query: plan again (a few times at most).
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                return await RunOnceAsync(database, request, ifNoneMatch, cancellationToken).ConfigureAwait(false);
            }
            catch (ObjectDisposedException) when (attempt < 3 && !database.IsClosing)
            {
            }
        }
    }

    private static async Task<QueryAnswer> RunOnceAsync(DocumentDatabase database, QueryRequest request, string? ifNoneMatch, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        var query = RqlParser.Parse(request.Text);
        var timings = query.IncludeTimings ? new QueryTimings() : null;
        var plan = await PlanAsync(database, request, query, timings, cancellationToken).ConfigureAwait(false);
        var limit = plan.Limit ?? DefaultPageSize;
        var filter = QueryFilter.Of(plan.Query, request, Count(plan.Query.FilterLimit, request, "filter_limit"));
        var run = new QueryRun(request, plan.Offset, limit, filter, timings, started);
        return plan.Index is null
            ? RunOnDocuments(database, plan.Query, run, ifNoneMatch)
            : Execute(database, plan.Index, plan.Query, run, ifNoneMatch);
    }

    /// <summary>What one run of a query carries beside the query: paging, its filter, its timings.</summary>
    private sealed record QueryRun(QueryRequest Request, long Offset, long Limit, QueryFilter? Filter, QueryTimings? Timings, long Started);

    /// <summary>
    /// <c>POST /queries?debug=explain</c>: which index the query would use and why, without running
    /// it (nor creating an auto-index): <c>{"IndexName":...,"Results":[{"Index":...,"Reason":...}]}</c>.
    /// </summary>
    public static ReadOnlyMemory<byte> Explain(DocumentDatabase database, QueryRequest request)
    {
        var query = RqlParser.Parse(request.Text);
        string indexName;
        List<(string Index, string Reason)> reasons;
        if (query.From.IsIndex)
        {
            var index = IndexStore.Of(database).Get(query.From.Name);
            indexName = index.Name;
            reasons = [(index.Name, "The query names this index ('from index').")];
        }
        else if (!query.From.IsIndex && LuceneQueryBuilder.OnIdOnly(query.Where) && query.OrderBy.All(o => o.IsId || o.IsScore))
        {
            indexName = IsAllDocs(query.From.Name) ? "AllDocs" : "collection/" + query.From.Name;
            reasons = [(indexName, query.Where is null
                ? "The query has no where on fields and no order by: the documents are read from the collection, no index is needed."
                : "The query's where is on id() only: the documents are read by id from the collection, no index is needed.")];
        }
        else if (IsAllDocs(query.From.Name))
        {
            throw new InvalidQueryException(request.Text, query.From.Position, "a where on fields or an order by over @all_docs needs a static index; query a collection, or define an index and query it with 'from index'.");
        }
        else
        {
            var (name, found) = IndexStore.Of(database).ExplainAutoIndex(query.From.Name, LuceneQueryBuilder.NeededFields(query));
            indexName = name;
            reasons = [.. found];
        }
        var output = new ArrayBufferWriter<byte>(512);
        using (var writer = new Utf8JsonWriter(output, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping }))
        {
            writer.WriteStartObject();
            writer.WriteString("IndexName", indexName);
            writer.WriteStartArray("Results");
            foreach (var (index, reason) in reasons)
            {
                writer.WriteStartObject();
                writer.WriteString("Index", index);
                writer.WriteString("Reason", reason);
                writer.WriteEndObject();
            }
            writer.WriteEndArray();
            writer.WriteEndObject();
        }
        return output.WrittenMemory;
    }

    /// <summary>
    /// Parses the query and decides what answers it: the document store (no index), or an index
    /// (an auto-index made or widened when none covers the query), waited for as the request asks
    /// (and for a new index's first batch). Queries and streams plan alike.
    /// </summary>
    internal static Task<QueryPlan> PlanAsync(DocumentDatabase database, QueryRequest request, CancellationToken cancellationToken) =>
        PlanAsync(database, request, RqlParser.Parse(request.Text), null, cancellationToken);

    private static async Task<QueryPlan> PlanAsync(DocumentDatabase database, QueryRequest request, RqlQuery query, QueryTimings? timings, CancellationToken cancellationToken)
    {
        var optimizer = timings?.Start("Optimizer");
        var offset = Count(query.Offset, request, "offset") ?? 0;
        var limit = Count(query.Limit, request, "limit");
        if (!query.From.IsIndex && LuceneQueryBuilder.OnIdOnly(query.Where) && query.OrderBy.All(o => o.IsId || o.IsScore))
        {
            optimizer?.Dispose();
            return new QueryPlan(query, offset, limit, null);
        }

        var store = IndexStore.Of(database);
        Indexing.Index index;
        if (query.From.IsIndex)
        {
            index = await store.GetAsync(query.From.Name).ConfigureAwait(false);
        }
        else
        {
            if (IsAllDocs(query.From.Name))
                throw new InvalidQueryException(request.Text, query.From.Position, "a where on fields or an order by over @all_docs needs a static index; query a collection, or define an index and query it with 'from index'.");
            index = await store.GetOrCreateAutoIndexAsync(query.From.Name, LuceneQueryBuilder.NeededFields(query)).ConfigureAwait(false);
        }
        index.MarkQueried();
        optimizer?.Dispose();

        using var staleness = timings?.Start("Staleness");
        if (!request.WaitForNonStaleResults)
        {
            await index.WaitForFirstBatchAsync(FirstBatchWait, cancellationToken).ConfigureAwait(false);
        }
        else
        {
            var cutoff = database.LastEtag;
            if (!await index.WaitForEtagAsync(cutoff, request.WaitTimeout, cancellationToken).ConfigureAwait(false))
            {
                throw new QueryTimeoutException(index.State == IndexState.Error
                    ? $"Index '{index.Name}' is in error state; it cannot catch up until it is reset (see /indexes/errors)."
                    : $"Waited {request.WaitTimeout} for index '{index.Name}' to index every change up to etag {cutoff}; it has not yet. Retry, or query without WaitForNonStaleResults to get stale results.");
            }
        }
        return new QueryPlan(query, offset, limit, index);
    }

    /// <summary>
    /// Runs a query on a given index (a test index of <c>POST /indexes/test</c>), whatever its
    /// <c>from</c> names; no waiting, no caching. Returns the answer's JSON.
    /// </summary>
    public static ReadOnlyMemory<byte> RunOn(DocumentDatabase database, Indexing.Index index, QueryRequest request)
    {
        var query = RqlParser.Parse(request.Text);
        var offset = Count(query.Offset, request, "offset") ?? 0;
        var limit = Count(query.Limit, request, "limit") ?? DefaultPageSize;
        var filter = QueryFilter.Of(query, request, Count(query.FilterLimit, request, "filter_limit"));
        var run = new QueryRun(request, offset, limit, filter, query.IncludeTimings ? new QueryTimings() : null, Stopwatch.GetTimestamp());
        return Execute(database, index, query, run, null).Body;
    }

    private static QueryAnswer Execute(DocumentDatabase database, Indexing.Index index, RqlQuery query, QueryRun run, string? ifNoneMatch)
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
            var resultEtag = ResultEtag(request, reader.LastEtag, index.Name, progress.CaughtUpTo, progress.LastIndexedEtag);
            if (ifNoneMatch is not null && ifNoneMatch.Trim('"') == resultEtag)
                return new QueryAnswer(resultEtag, default, NotModified: true);

            var searcher = index.Acquire();
            try
            {
                if (index.Generation != generation)
                    continue;
                var (luceneQuery, sort) = BuildSearch(index, searcher.IndexReader, query, request);
                var output = new ArrayBufferWriter<byte>(16 * 1024);
                output.Write("{\"Results\":["u8);
                var (total, skipped, included) = WriteHits(searcher, luceneQuery, sort, query, run, reader, index, output);
                WriteIncludes(output, reader, included, run.Timings);
                WriteTail(output, total, skipped, index.Name, stale, index.LastIndexingTime ?? DateTime.UtcNow, resultEtag, run);
                return new QueryAnswer(resultEtag, output.WrittenMemory, NotModified: false);
            }
            finally
            {
                index.Release(searcher);
            }
        }
    }

    /// <summary>The Lucene query and sort of <paramref name="query"/> on <paramref name="index"/>, as <paramref name="reader"/> (a searcher's) sees its fields.</summary>
    internal static (Query Query, Sort? Sort) BuildSearch(Indexing.Index index, IndexReader reader, RqlQuery query, QueryRequest request)
    {
        var known = KnownFields(index, reader);
        var builder = new LuceneQueryBuilder(request.Text, request.Parameters, (path, indexing, position) => Resolve(index, known, reader, request.Text, path, indexing, position), index.IsMultiValued);
        var luceneQuery = builder.Build(query.Where);
        return (luceneQuery, BuildSort(index, known, reader, query, request.Text, builder));
    }

    internal static bool IsAllDocs(string name) => string.Equals(name, "@all_docs", StringComparison.OrdinalIgnoreCase);

    private static void WriteIncludes(ArrayBufferWriter<byte> output, DocumentsReader reader, HashSet<string>? included, QueryTimings? timings)
    {
        output.Write("],\"Includes\":"u8);
        if (included is null)
        {
            output.Write("{}"u8);
            return;
        }
        using var timing = timings?.Start("Includes");
        DocumentIncludes.Write(output, reader, included);
    }

    /// <summary>A collection scan: no index needed.</summary>
    private static QueryAnswer RunOnDocuments(DocumentDatabase database, RqlQuery query, QueryRun run, string? ifNoneMatch)
    {
        var (request, offset, limit, filter) = (run.Request, run.Offset, run.Limit, run.Filter);
        var timing = run.Timings?.Start("Query");
        var evaluator = new RqlEvaluator(request.Text, request.Parameters);
        var collection = IsAllDocs(query.From.Name) ? null : query.From.Name;
        var includes = IncludePaths(query);
        using var reader = database.BeginRead();
        var resultEtag = ResultEtag(request, reader.LastEtag, collection ?? "@all_docs", 0, 0);
        if (ifNoneMatch is not null && ifNoneMatch.Trim('"') == resultEtag)
            return new QueryAnswer(resultEtag, default, NotModified: true);
        var included = includes is null ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var output = new ArrayBufferWriter<byte>(16 * 1024);
        output.Write("{\"Results\":["u8);
        long total = 0;
        long written = 0;
        var byId = query.OrderBy.FirstOrDefault(o => o.IsId);
        if (byId is null)
        {
            using var storage = run.Timings?.Start("Storage");
            foreach (var record in reader.GetDocumentsFrom(collection, 0))
            {
                if (query.Where is not null && !evaluator.Matches(query.Where, record.Id, record.Document))
                    continue;
                if (filter is not null)
                {
                    if (filter.Exhausted)
                        break;
                    if (!filter.Matches(record.Id, record.Document))
                        continue;
                }
                total++;
                if (total <= offset || written >= limit)
                    continue;
                if (written++ > 0)
                    output.Write(","u8);
                WriteResult(output, query, record.Id, record.Document, null, null);
                if (included is not null)
                    DocumentIncludes.Collect(record.Document, includes!, included);
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
                    ids.Add(record.Id);
            }
            ids.Sort((a, b) => string.CompareOrdinal(a.ToLowerInvariant(), b.ToLowerInvariant()) * (byId.Descending ? -1 : 1));
            if (filter is null)
                total = ids.Count;
            long matched = 0;
            foreach (var id in ids)
            {
                // A filter examines the documents in the query's order, as far as its filter_limit.
                if (filter is null && (matched >= offset + limit))
                    break;
                if (!reader.TryGet(id, out var record))
                    continue;
                if (filter is not null)
                {
                    if (filter.Exhausted)
                        break;
                    if (!filter.Matches(record.Id, record.Document))
                        continue;
                }
                if (matched++ < offset || written >= limit)
                    continue;
                if (written++ > 0)
                    output.Write(","u8);
                WriteResult(output, query, record.Id, record.Document, null, null);
                if (included is not null)
                    DocumentIncludes.Collect(record.Document, includes!, included);
            }
            if (filter is not null)
                total = matched;
        }
        timing?.Dispose();
        WriteIncludes(output, reader, included, run.Timings);
        WriteTail(output, total, 0, collection is null ? "AllDocs" : "collection/" + collection, false, DateTime.UtcNow, resultEtag, run);
        return new QueryAnswer(resultEtag, output.WrittenMemory, NotModified: false);
    }

    internal static List<string[]>? IncludePaths(RqlQuery query) =>
        query.Include.Count == 0 ? null : query.Include.Select(p => p.Segments.Select(s => s.Name).ToArray()).ToList();

    private static (long Total, long Skipped, HashSet<string>? Included) WriteHits(IndexSearcher searcher, Query luceneQuery, Sort? sort, RqlQuery query, QueryRun run, DocumentsReader reader, Indexing.Index index, ArrayBufferWriter<byte> output)
    {
        var (offset, limit, filter, timings) = (run.Offset, run.Limit, run.Filter, run.Timings);
        using var timing = timings?.Start("Query");
        var includes = IncludePaths(query);
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
                top = sort is null ? searcher.Search(luceneQuery, wanted) : searcher.Search(luceneQuery, null, wanted, sort);
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
                        break;
                    if (!filter.Matches(record.Id, record.Document))
                        continue;
                }
                distinct++;
                if (distinct <= offset)
                    continue;
                if (written >= limit)
                {
                    // A filtered query counts every match; an unfiltered one has its total from Lucene.
                    if (filter is null)
                        break;
                    continue;
                }
                if (written++ > 0)
                    output.Write(","u8);
                WriteResult(output, query, record.Id, record.Document, stored, index);
                if (included is not null)
                    DocumentIncludes.Collect(record.Document, includes!, included);
            }
            if (filter is null && written < limit && top.ScoreDocs.Length == wanted && wanted < top.TotalHits)
                complete = false;
            // Duplicates or deleted documents kept the filter from examining its filter_limit.
            if (filter is not null && !filter.Exhausted && top.ScoreDocs.Length == wanted && wanted < top.TotalHits)
                complete = false;
            if (complete)
            {
                // Exact when every hit was read (or filtered); otherwise the hits less the duplicates seen.
                var total = filter is not null || top.ScoreDocs.Length == top.TotalHits ? distinct : top.TotalHits - skipped;
                return (total, skipped, included);
            }
            // Duplicates (a map that returned several entries) or deleted documents used up the
            // window: read a larger one.
            output.ResetWrittenCount();
            output.Write("{\"Results\":["u8);
            included?.Clear();
            filter?.Reset();
            // The first window was too small: ask for what the page needs (grown further only when
            // duplicates or deleted documents used it up).
            wanted = (int)Math.Min(top.TotalHits, wanted < needed ? needed : (long)wanted * 2);
        }
    }

    /// <summary>The (lowercased) id of a hit, from the <c>@id@s</c> doc values of its segment; null when the segment has none.</summary>
    internal static string? IdOf(IList<AtomicReaderContext> leaves, int doc, Lucene.Net.Util.BytesRef scratch)
    {
        var leaf = leaves[ReaderUtil.SubIndex(doc, leaves)];
        var values = leaf.AtomicReader.GetSortedDocValues(LuceneFields.Id + LuceneFields.StringSortSuffix);
        if (values is null)
            return null;
        var ord = values.GetOrd(doc - leaf.DocBase);
        if (ord < 0)
            return null;
        values.LookupOrd(ord, scratch);
        return scratch.Utf8ToString();
    }

    /// <summary>How long a query waits for a new index's first batch (<see cref="Indexing.Index.WaitForFirstBatchAsync"/>): a batch takes at most 2 s.</summary>
    public static readonly TimeSpan FirstBatchWait = TimeSpan.FromSeconds(5);

    /// <summary>A document, or its projection when the query selects, as JSON (also a subscription's batch items).</summary>
    internal static void WriteResult(IBufferWriter<byte> output, RqlQuery query, string id, ReadOnlySpan<byte> document, Lucene.Net.Documents.Document? stored, Indexing.Index? index)
    {
        if (query.Select.Count == 0)
        {
            BlittableJsonWriter.WriteTo(document, output);
            return;
        }
        using var writer = new Utf8JsonWriter(output, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true });
        writer.WriteStartObject();
        var root = BlittableReader.Open(document);
        foreach (var projection in query.Select)
        {
            var name = projection.Alias ?? projection.Path.ToString();
            writer.WritePropertyName(name);
            var storedJson = stored is not null && index is not null && index.PlanOf(projection.Path.ToString()).Stored
                ? stored.Get(projection.Path.ToString() + LuceneFields.StoredSuffix)
                : null;
            if (storedJson is not null)
            {
                writer.WriteRawValue(storedJson, skipInputValidation: true);
                continue;
            }
            var value = new ArrayBufferWriter<byte>(64);
            WritePath(value, root, projection.Path);
            writer.WriteRawValue(value.WrittenSpan, skipInputValidation: true);
        }
        writer.WritePropertyName("@metadata");
        writer.WriteStartObject();
        writer.WriteString("@id", id);
        writer.WriteBoolean("@projection", true);
        writer.WriteEndObject();
        writer.WriteEndObject();
    }

    /// <summary>The value a path reaches in a document (arrays walked: several values become an array; none is null).</summary>
    private static void WritePath(ArrayBufferWriter<byte> output, BlittableObject root, RqlPath path)
    {
        var segments = path.Segments.Select(s => s.Name).ToArray();
        var values = new ArrayBufferWriter<byte>();
        var count = 0;
        Walk(root, segments, 0, values, ref count, path.Segments.Any(s => s.Array));
        if (count == 0)
        {
            output.Write("null"u8);
            return;
        }
        output.Write(values.WrittenSpan);
    }

    private static void Walk(BlittableObject current, string[] path, int depth, ArrayBufferWriter<byte> values, ref int count, bool asArray)
    {
        if (!current.TryGet(path[depth], out var value))
            return;
        if (depth == path.Length - 1)
        {
            Append(values, value, ref count);
            return;
        }
        Visit(value, path, depth + 1, values, ref count);
    }

    private static void Visit(BlittableValue value, string[] path, int depth, ArrayBufferWriter<byte> values, ref int count)
    {
        switch (value.Type)
        {
            case BlittableToken.Object:
                var obj = value.GetObject();
                if (obj.TryGet(path[depth], out var next))
                {
                    if (depth == path.Length - 1)
                        Append(values, next, ref count);
                    else
                        Visit(next, path, depth + 1, values, ref count);
                }
                return;
            case BlittableToken.Array:
                // A path through an array projects every element's value, as an array.
                var array = value.GetArray();
                var inner = new ArrayBufferWriter<byte>();
                var innerCount = 0;
                for (var i = 0; i < array.Length; i++)
                    Visit(array[i], path, depth, inner, ref innerCount);
                var wrapped = new ArrayBufferWriter<byte>();
                wrapped.Write("["u8);
                wrapped.Write(inner.WrittenSpan);
                wrapped.Write("]"u8);
                AppendRaw(values, wrapped.WrittenSpan, ref count);
                return;
        }
    }

    private static void Append(ArrayBufferWriter<byte> values, BlittableValue value, ref int count)
    {
        if (count++ > 0)
            values.Write(","u8);
        BlittableJsonWriter.WriteValue(value, values);
    }

    private static void AppendRaw(ArrayBufferWriter<byte> values, ReadOnlySpan<byte> json, ref int count)
    {
        if (count++ > 0)
            values.Write(","u8);
        values.Write(json);
    }

    private static void WriteTail(ArrayBufferWriter<byte> output, long total, long skipped, string indexName, bool stale, DateTime indexTimestamp, string resultEtag, QueryRun run)
    {
        if (run.Filter is not null)
            output.Write(Encoding.UTF8.GetBytes($",\"ScannedResults\":{run.Filter.Scanned}"));
        if (run.Timings is not null)
        {
            output.Write(","u8);
            run.Timings.Write(output);
        }
        var started = run.Started;
        var now = JsonDefaults.FormatTime(DateTime.UtcNow);
        var tail = $",\"TotalResults\":{total},\"SkippedResults\":{skipped},\"IndexName\":{JsonSerializer.Serialize(indexName)},\"IsStale\":{(stale ? "true" : "false")}," +
            $"\"IndexTimestamp\":\"{JsonDefaults.FormatTime(indexTimestamp)}\",\"LastQueryTime\":\"{now}\",\"ResultEtag\":{resultEtag},\"NodeTag\":\"A\"," +
            $"\"DurationInMs\":{(long)Stopwatch.GetElapsedTime(started).TotalMilliseconds}}}";
        output.Write(Encoding.UTF8.GetBytes(tail));
    }

    /// <summary>
    /// What the results depend on: the query, its parameters, the database's snapshot and how far
    /// the index has indexed. Equal etags mean equal answers (RavenDB's <c>ResultEtag</c>).
    /// </summary>
    internal static string ResultEtag(QueryRequest request, long databaseEtag, string source, long caughtUpTo, long lastIndexed)
    {
        var hash = new XxHash64();
        hash.Append(Encoding.UTF8.GetBytes(request.Text));
        foreach (var (name, value) in request.Parameters.OrderBy(p => p.Key, StringComparer.Ordinal))
        {
            hash.Append(Encoding.UTF8.GetBytes(name));
            hash.Append(Encoding.UTF8.GetBytes(value.GetRawText()));
        }
        hash.Append(Encoding.UTF8.GetBytes(source));
        Span<byte> numbers = stackalloc byte[24];
        BitConverter.TryWriteBytes(numbers, databaseEtag);
        BitConverter.TryWriteBytes(numbers[8..], caughtUpTo);
        BitConverter.TryWriteBytes(numbers[16..], lastIndexed);
        hash.Append(numbers);
        // A positive int64: RavenDB's clients read ResultEtag as a number.
        return ((long)(hash.GetCurrentHashAsUInt64() >> 1)).ToString(CultureInfo.InvariantCulture);
    }

    /// <summary>The fields a static index's entries have (from Lucene's field infos and the @exists terms).</summary>
    private static HashSet<string> KnownFields(Indexing.Index index, IndexReader reader)
    {
        var known = new HashSet<string>(StringComparer.Ordinal);
        if (index.Definition.IsAuto)
            return known;
        foreach (var name in index.Definition.Fields.Keys)
            known.Add(name);
        var terms = MultiFields.GetTerms(reader, LuceneFields.Exists);
        if (terms is not null)
        {
            var iterator = terms.GetEnumerator();
            while (iterator.MoveNext())
                known.Add(iterator.Term.Utf8ToString());
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
                throw new InvalidQueryException(text, position, $"the index '{index.Name}' has no field '{new AutoIndexField(name, indexing).Key}'; its fields are {string.Join(", ", index.Definition.AutoFields.Select(f => f.Key))}. Query the collection instead and an auto-index covering it is made.");
            return new FieldPlan(field.LuceneName, field.Indexing, false);
        }
        if (!known.Contains(name) && reader.NumDocs > 0)
            throw new InvalidQueryException(text, position, $"the index '{index.Name}' has no field '{name}'; its fields are {string.Join(", ", known.Order(StringComparer.Ordinal))}.");
        return index.PlanOf(name);
    }

    private static Sort? BuildSort(Indexing.Index index, HashSet<string> known, IndexReader reader, RqlQuery query, string text, LuceneQueryBuilder builder)
    {
        if (query.OrderBy.Count == 0)
            return null;
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

    /// <summary>A limit or offset; null when none is given (RavenDB's clients send a null parameter for "none").</summary>
    internal static long? Count(RqlValue? value, QueryRequest request, string what)
    {
        if (value is null || value.Kind == RqlValueKind.Null)
            return null;
        if (value.Kind == RqlValueKind.Parameter && request.Parameters.TryGetValue(value.Text, out var none) && none.ValueKind == JsonValueKind.Null)
            return null;
        long count;
        if (value.Kind == RqlValueKind.Number && long.TryParse(value.Text, NumberStyles.None, CultureInfo.InvariantCulture, out count))
            return count;
        if (value.Kind == RqlValueKind.Parameter && request.Parameters.TryGetValue(value.Text, out var given) && given.ValueKind == JsonValueKind.Number && given.TryGetInt64(out count) && count >= 0)
            return count;
        throw new InvalidQueryException(request.Text, value.Position, $"'{what}' must be a whole number of at least 0 (or a parameter holding one).");
    }
}
