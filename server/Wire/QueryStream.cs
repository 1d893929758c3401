using System.Text;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Rql;
using Lucene.Net.Search;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Runs a query for <c>/streams/queries</c>: planned as <see cref="QueryRunner"/> plans it, then
/// its results written one by one as they are read, with RavenDB's statistics first
/// (<see cref="StreamResultsWriter"/>), any number of them and none held in memory.
/// <list type="bullet">
/// <item>The document store (a collection with no <c>where</c> but on <c>id()</c>): read in etag
/// order (<c>order by id()</c>: in id order, from the <c>Docs</c> tree, filtered to the
/// collection), resuming after the last etag or key in a fresh snapshot after each flush, as
/// <see cref="DocumentStream"/> does. <c>TotalResults</c> is the collection's count (a <c>where</c>
/// on <c>id()</c> counts its matches first, in one pass that writes nothing).</item>
/// <item>An index: one searcher is held for the whole stream (its segments stay on disk until the
/// stream ends); hits come from a <see cref="HitStream"/> (index order without an
/// <c>order by</c> or <c>search()</c>, else ranked a page at a time) and each is resolved in the
/// document store, in a snapshot closed before every flush. <c>TotalResults</c> is the number of
/// matching index entries.</item>
/// </list>
/// Errors found before the first byte (a bad query, a missing index) are ordinary error answers;
/// later ones end the stream in its shape. A client that goes away stops the stream at its next
/// flush, quietly.
/// </summary>
public static class QueryStream
{
    /// <param name="start">Results to skip beyond the query's own <c>offset</c> (the GET form's <c>start</c>).</param>
    /// <param name="pageSize">At most this many results, whatever larger <c>limit</c> the query has.</param>
    public static async ValueTask WriteAsync(StreamResultsWriter output, DocumentDatabase database, QueryRequest request, long start, long pageSize, CancellationToken cancellationToken)
    {
        // An index deleted, reset or replaced between planning and reading: plan again (before
        // anything is written; the answer cannot change course after that).
        for (var attempt = 0; ; attempt++)
        {
            var plan = await QueryPlanner.PlanAsync(database, request, cancellationToken).ConfigureAwait(false);
            if (plan.Query.Update is { } update)
            {
                throw new InvalidQueryException(request.Text, update.Position, "an 'update' clause patches the documents it finds: send it with PATCH /databases/{db}/queries (a patch by query), not as a stream.");
            }
            if (plan.Query.Include.Count > 0)
            {
                throw new InvalidQueryException(request.Text, plan.Query.Include[0].Position, "a stream returns no includes; remove the 'include' clause (or run the query without streaming).");
            }
            if (plan.Query.IncludeTimings)
            {
                throw new InvalidQueryException(request.Text, 0, "a stream carries no timings; remove 'include timings()' (or run the query without streaming).");
            }
            var filter = QueryFilter.Of(plan.Query, request, QueryPlanner.Count(plan.Query.FilterLimit, request, "filter_limit"));
            var state = new State(plan.Query, plan.Offset + start, Math.Min(plan.Limit ?? long.MaxValue, pageSize), filter);
            try
            {
                if (plan.Index is null)
                {
                    await StreamDocumentsAsync(output, database, request, state, cancellationToken).ConfigureAwait(false);
                }
                else
                {
                    await StreamHitsAsync(output, database, plan.Index, request, state, cancellationToken).ConfigureAwait(false);
                }
                return;
            }
            catch (ObjectDisposedException) when (!output.Started && attempt < 3 && !database.IsClosing)
            {
            }
        }
    }

    private static async ValueTask StreamDocumentsAsync(StreamResultsWriter output, DocumentDatabase database, QueryRequest request, State state, CancellationToken cancellationToken)
    {
        var query = state.Query;
        var collection = QueryPlanner.IsAllDocs(query.From.Name) ? null : query.From.Name;
        var scan = new DocumentScan(collection, query.OrderBy.FirstOrDefault(o => o.IsId), query.Where is null ? null : new RqlEvaluator(request.Text, request.Parameters));
        var reader = database.BeginRead();
        try
        {
            output.StartQuery(new StreamQueryStatistics(
                QueryResultEtag.Compute(request, reader.LastEtag, collection ?? "@all_docs", 0, 0),
                IsStale: false,
                collection is null ? "AllDocs" : "collection/" + collection,
                scan.Count(reader, query),
                DateTime.UtcNow));
            while (scan.WriteSome(output, reader, state))
            {
                reader.Dispose();
                reader = null;
                if (!await output.FlushAsync(cancellationToken).ConfigureAwait(false))
                {
                    return;
                }
                reader = database.BeginRead();
            }
            output.End();
        }
        catch (Exception e) when (output.ReportsInStream(e, cancellationToken))
        {
            reader?.Dispose();
            reader = null;
            await output.WriteErrorAsync(e.Message, cancellationToken).ConfigureAwait(false);
            throw;
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
            // The client went away (a reset may surface as an I/O error, not a cancellation):
            // nobody to answer and nothing to log.
            return;
        }
        finally
        {
            reader?.Dispose();
        }
        await output.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    private static async ValueTask StreamHitsAsync(StreamResultsWriter output, DocumentDatabase database, Indexing.Index index, QueryRequest request, State state, CancellationToken cancellationToken)
    {
        var query = state.Query;
        DatabaseReader? reader = null;
        IndexSearcher? searcher = null;
        try
        {
            StreamQueryStatistics statistics;
            while (true)
            {
                // As a query does: read again after acquiring the searcher, and start again when the
                // index rolled back meanwhile (its progress went back with its searchers).
                reader = database.BeginRead();
                var generation = index.Generation;
                var progress = index.Progress;
                var stale = index.IsStale(reader);
                statistics = new StreamQueryStatistics(
                    QueryResultEtag.Compute(request, reader.LastEtag, index.Name, progress.CaughtUpTo, progress.LastIndexedEtag),
                    stale,
                    index.Name,
                    0,
                    index.LastIndexingTime ?? DateTime.UtcNow);
                searcher = index.Acquire();
                if (index.Generation == generation)
                {
                    break;
                }
                index.Release(searcher);
                searcher = null;
                reader.Dispose();
                reader = null;
            }

            var (luceneQuery, sort) = IndexQueryExecutor.BuildSearch(index, searcher.IndexReader, query, request);
            var hits = HitStream.Create(searcher, luceneQuery, sort, ranked: HasSearch(query.Where));
            output.StartQuery(statistics with { TotalResults = hits.TotalHits });
            var needsStored = query.Select.Any(p => index.PlanOf(p.Path.ToString()).Stored);
            while (WriteSomeHits(output, reader, hits, searcher, index, needsStored, state))
            {
                reader.Dispose();
                reader = null;
                if (!await output.FlushAsync(cancellationToken).ConfigureAwait(false))
                {
                    return;
                }
                reader = database.BeginRead();
            }
            output.End();
        }
        catch (Exception e) when (output.ReportsInStream(e, cancellationToken))
        {
            reader?.Dispose();
            reader = null;
            await output.WriteErrorAsync(e.Message, cancellationToken).ConfigureAwait(false);
            throw;
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
            // The client went away (a reset may surface as an I/O error, not a cancellation):
            // nobody to answer and nothing to log.
            return;
        }
        finally
        {
            reader?.Dispose();
            if (searcher is not null)
            {
                index.Release(searcher);
            }
        }
        await output.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    private static bool WriteSomeHits(StreamResultsWriter output, DocumentsReader reader, HitStream hits, IndexSearcher searcher, Indexing.Index index, bool needsStored, State state)
    {
        while (hits.MoveNext())
        {
            // Another entry of a document already written, or a document deleted since it was
            // indexed: not a result (a query counts both in SkippedResults).
            if (hits.IsRepeat || !reader.TryGetByKey(hits.Key, out var record))
            {
                continue;
            }
            switch (state.Next(record.Id, record.Document))
            {
                case Step.Skip:
                    continue;
                case Step.Done:
                    return false;
            }
            if (state.Query.Select.Count == 0)
            {
                output.WriteDocument(record.Document);
            }
            else
            {
                output.BeginResult();
                QueryProjection.WriteResult(output.Output, state.Query, record.Id, record.Document, needsStored ? searcher.Doc(hits.Doc) : null, index);
                output.EndResult();
            }
            if (output.ShouldFlush)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Whether the query ranks by relevance: a <c>search()</c> anywhere in its <c>where</c>.</summary>
    private static bool HasSearch(RqlExpression? expression) => expression switch
    {
        RqlMethod method => method.Method == RqlMethodKind.Search,
        RqlProximity => true,
        RqlBinary binary => HasSearch(binary.Left) || HasSearch(binary.Right),
        RqlNot not => HasSearch(not.Operand),
        RqlExact exact => HasSearch(exact.Inner),
        _ => false,
    };

    private enum Step
    {
        Write,
        Skip,
        Done,
    }

    /// <summary>The query and how many results are still to skip, and how many were written.</summary>
    private sealed class State(RqlQuery query, long offset, long limit, QueryFilter? filter)
    {
        private long _toSkip = offset;
        private long _written;

        public RqlQuery Query { get; } = query;

        /// <summary>
        /// For the next document found: skip it (the filter refuses it, or it is before the page),
        /// write it (counted), or stop: the page is full, or the filter examined its filter_limit.
        /// </summary>
        public Step Next(string id, ReadOnlySpan<byte> document)
        {
            if (filter is not null)
            {
                if (filter.Exhausted)
                {
                    return Step.Done;
                }
                if (!filter.Matches(id, document))
                {
                    return Step.Skip;
                }
            }
            if (_toSkip > 0)
            {
                _toSkip--;
                return Step.Skip;
            }
            if (_written >= limit)
            {
                return Step.Done;
            }
            _written++;
            return Step.Write;
        }
    }

    /// <summary>A collection scan that resumes, across snapshots, after the last etag (or id) it read.</summary>
    private sealed class DocumentScan(string? collection, RqlOrder? byId, RqlEvaluator? where)
    {
        private readonly byte[]? _lowerCollection = collection is null ? null : StorageKeys.LowerCollection(collection);
        private long _afterEtag;
        private byte[] _afterKey = [];

        /// <summary>The number of results before paging: the collection's count, or the matches of the <c>where</c>.</summary>
        public long Count(DocumentsReader reader, RqlQuery query)
        {
            if (where is null)
            {
                return collection is null ? reader.DocumentCount : reader.CountOf(collection);
            }
            long count = 0;
            foreach (var record in reader.GetDocumentsFrom(collection, 0))
            {
                if (where.Matches(query.Where, record.Id, record.Document))
                {
                    count++;
                }
            }
            return count;
        }

        public bool WriteSome(StreamResultsWriter output, DocumentsReader reader, State state)
        {
            if (byId is not null)
            {
                return WriteSomeById(output, reader, state);
            }
            foreach (var record in reader.GetDocumentsFrom(collection, _afterEtag))
            {
                _afterEtag = record.Etag;
                var step = Write(output, record, state);
                if (step == Step.Done)
                {
                    return false;
                }
                if (step == Step.Write && output.ShouldFlush)
                {
                    return true;
                }
            }
            return false;
        }

        /// <summary><c>order by id()</c>: the <c>Docs</c> tree in key order, the collection's documents only.</summary>
        private bool WriteSomeById(StreamResultsWriter output, DocumentsReader reader, State state)
        {
            using var documents = reader.GetDocumentsById([], _afterKey, byId!.Descending).GetEnumerator();
            while (documents.MoveNext())
            {
                if (_lowerCollection is not null && !InCollection(documents.Current.CollectionUtf8))
                {
                    continue;
                }
                var step = Write(output, documents.Current, state);
                if (step == Step.Done)
                {
                    return false;
                }
                if (step == Step.Write && output.ShouldFlush)
                {
                    _afterKey = documents.CurrentKey.ToArray();
                    return true;
                }
            }
            return false;
        }

        private Step Write(StreamResultsWriter output, in DocumentRecord record, State state)
        {
            if (where is not null && !where.Matches(state.Query.Where, record.Id, record.Document))
            {
                return Step.Skip;
            }
            var step = state.Next(record.Id, record.Document);
            if (step != Step.Write)
            {
                return step;
            }
            if (state.Query.Select.Count == 0)
            {
                output.WriteDocument(record.Document);
            }
            else
            {
                output.BeginResult();
                QueryProjection.WriteResult(output.Output, state.Query, record.Id, record.Document, null, null);
                output.EndResult();
            }
            return Step.Write;
        }

        private bool InCollection(ReadOnlySpan<byte> written)
        {
            var lower = _lowerCollection!;
            if (written.Length == lower.Length && System.Text.Ascii.EqualsIgnoreCase(written, lower))
            {
                return true;
            }
            // Non-ASCII names: compare as the collection keys do (lowercased, invariant culture).
            return !System.Text.Ascii.IsValid(written) && Encoding.UTF8.GetString(written).ToLowerInvariant().AsSpan().SequenceEqual(Encoding.UTF8.GetString(lower));
        }
    }
}
