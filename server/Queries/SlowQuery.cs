namespace Jackdaw.Server.Queries;

/// <summary>
/// One entry of a database's <see cref="SlowQueryLog"/>: the query's text, its literals masked, and
/// the names of its parameters (their values are never kept), what answered it and how long each stage took.
/// </summary>
/// <param name="IndexName">What answered (an index, <c>collection/Orders</c>); null for a <c>304</c> answer, which names none.</param>
/// <param name="Timings">The stages' timings as JSON (RavenDB's <c>{"DurationInMs","Timings":{...}}</c>); null when not measured.</param>
public sealed record SlowQuery(
    DateTime At,
    long DurationInMs,
    string Query,
    IReadOnlyList<string> ParameterNames,
    string? IndexName,
    bool? IsStale,
    long? TotalResults,
    byte[]? Timings);
