using System.Globalization;
using System.IO.Hashing;
using System.Text;

namespace Jackdaw.Server.Queries;

/// <summary>RavenDB's <c>ResultEtag</c> of a query (answered as its <c>ETag</c>; a stream's statistics carry it too).</summary>
public static class QueryResultEtag
{
    /// <summary>
    /// What the results depend on: the query, its parameters, the database's snapshot and how far
    /// the index has indexed. Equal etags mean equal answers (RavenDB's <c>ResultEtag</c>).
    /// </summary>
    public static string Compute(QueryRequest request, long databaseEtag, string source, long caughtUpTo, long lastIndexed)
    {
        var hash = new XxHash64();
        hash.Append(Encoding.UTF8.GetBytes(request.Text));
        foreach (var (name, value) in request.Parameters.OrderBy(p => p.Key, StringComparer.Ordinal))
        {
            hash.Append(Encoding.UTF8.GetBytes(name));
            hash.Append(Encoding.UTF8.GetBytes(value.GetRawText()));
        }
        hash.Append(Encoding.UTF8.GetBytes(source));
        // Two pages of one query are two answers; a request without ?start=, ?pageSize= or
        // ?timings= hashes as it did before they existed.
        if (request.Start != 0 || request.PageSize is not null || request.IncludeTimings)
        {
            Span<byte> page = stackalloc byte[17];
            BitConverter.TryWriteBytes(page, request.Start);
            BitConverter.TryWriteBytes(page[8..], request.PageSize ?? -1);
            page[16] = request.IncludeTimings ? (byte)1 : (byte)0;
            hash.Append(page);
        }
        Span<byte> numbers = stackalloc byte[24];
        BitConverter.TryWriteBytes(numbers, databaseEtag);
        BitConverter.TryWriteBytes(numbers[8..], caughtUpTo);
        BitConverter.TryWriteBytes(numbers[16..], lastIndexed);
        hash.Append(numbers);
        // A positive int64: RavenDB's clients read ResultEtag as a number.
        return ((long)(hash.GetCurrentHashAsUInt64() >> 1)).ToString(CultureInfo.InvariantCulture);
    }
}
