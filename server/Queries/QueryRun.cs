using System.Buffers;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Queries;

/// <summary>A query's answer: the JSON body, or nothing when the client's <c>If-None-Match</c> still holds.</summary>
public sealed record QueryAnswer(string ResultEtag, ReadOnlyMemory<byte> Body, bool NotModified)
{
    /// <summary>The statistics written after the results (null for a <see cref="NotModified"/> answer).</summary>
    public QueryStatistics? Statistics { get; init; }
}

/// <summary>What one run of a query carries beside the query: paging, its filter, its timings, and the shape its answer is written in.</summary>
public sealed record QueryRun(QueryRequest Request, long Offset, long Limit, QueryFilter? Filter, QueryTimings? Timings, long Started, IQueryAnswerShape Shape)
{
    /// <summary>The revisions the query includes, collected from its results; null when it includes none.</summary>
    public RevisionIncludes? Revisions { get; init; }
}

/// <summary>The statistics written after a query's results.</summary>
public sealed record QueryStatistics(long TotalResults, long SkippedResults, string IndexName, bool IsStale, DateTime IndexTimestamp, string ResultEtag, long? ScannedResults, QueryTimings? Timings, long Started);

/// <summary>
/// The shape of a query's answer, which the wire layer owns (RavenDB's <c>{"Results":[...],
/// "Includes":{...},"TotalResults":...}</c>): the executors write each result (comma-separated)
/// between <see cref="StartResults"/> and <see cref="EndResults"/>, then the statistics.
/// </summary>
public interface IQueryAnswerShape
{
    /// <summary>What comes before the first result (written again when a query reads a larger window).</summary>
    void StartResults(ArrayBufferWriter<byte> output);

    /// <summary>What follows the last result: the included documents, read from <paramref name="reader"/>'s snapshot.</summary>
    void EndResults(ArrayBufferWriter<byte> output, DocumentsReader reader, HashSet<string>? included, QueryTimings? timings, RevisionIncludes? revisions = null);

    /// <summary>The statistics, to the end of the answer.</summary>
    void WriteStatistics(ArrayBufferWriter<byte> output, QueryStatistics statistics);
}
