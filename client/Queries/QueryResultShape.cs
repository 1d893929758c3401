using Jackdaw.Client.Queries.Linq;

namespace Jackdaw.Client.Queries;

internal enum QueryResultMode
{
    /// <summary>Documents of the queried type, tracked by the session like loaded ones.</summary>
    Track,

    /// <summary>Documents deserialized but not tracked (<c>NoTracking()</c>).</summary>
    NoTracking,

    /// <summary>A LINQ <c>Select</c>: results read as <see cref="Projection"/> says, never tracked.</summary>
    Projection,

    /// <summary>A raw query: documents are tracked, results the server marks <c>@projection</c> (or that have no <c>@id</c>) are not.</summary>
    Auto,
}

/// <summary>How a query's results become objects; <paramref name="EntityType"/> is the type documents are read as (the result type when null).</summary>
internal sealed record QueryResultShape(QueryResultMode Mode, Projection? Projection = null, Type? EntityType = null);

/// <summary>A query's results and the number of documents that matched before paging.</summary>
internal sealed record QueryResult<T>(List<T> Results, long TotalResults);
