using Jackdaw.Server.Databases;
using Jackdaw.Server.Rql;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Queries;

/// <summary>
/// A database's slow-query log: the last <see cref="SlowQueryOptions.LogSize"/> queries that took
/// at least <see cref="SlowQueryOptions.ThresholdMs"/>, in memory (gone with a restart), newest
/// first, and a Warning line in the server log for each. A query's parameter values are dropped
/// when it is recorded: only their names are kept; and the literals of its text are masked
/// (<see cref="RqlRedaction"/>), so neither the ring, which every admin of the database may read,
/// nor the log holds a value a client sent. An entry's text is cut to <see cref="MaxQueryLength"/> characters, so
/// the ring's memory and each log line stay bounded whatever clients send. Built with every
/// database (<see cref="Component"/>).
/// </summary>
public sealed partial class SlowQueryLog : IAsyncDisposable
{
    /// <summary>The most characters of a query's text an entry (and its log line) keeps: 8 KiB.</summary>
    public const int MaxQueryLength = 8 * 1024;

    private readonly Lock _lock = new();
    private readonly SlowQuery?[] _ring;
    private readonly ILogger _logger;
    private readonly string _database;
    private int _next;
    private int _count;

    private SlowQueryLog(string database, SlowQueryOptions options, ILogger logger)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(options.ThresholdMs);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(options.LogSize);
        _database = database;
        ThresholdMs = options.ThresholdMs;
        _ring = new SlowQuery?[options.LogSize];
        _logger = logger;
    }

    /// <summary>A query that takes at least this long is logged.</summary>
    public int ThresholdMs { get; }

    /// <summary>The most entries kept.</summary>
    public int Capacity => _ring.Length;

    /// <summary>The factory a database's options list: builds the log of each database as it opens.</summary>
    public static Func<DocumentDatabase, IAsyncDisposable> Component(SlowQueryOptions options, ILoggerFactory loggerFactory) =>
        database => new SlowQueryLog(database.Name, options, loggerFactory.CreateLogger("Jackdaw.Queries.Slow"));

    /// <summary>The log of <paramref name="database"/>; null for a database opened without one (tests that open storage alone).</summary>
    public static SlowQueryLog? Of(DocumentDatabase database) => database.GetComponent<SlowQueryLog>();

    /// <summary>Whether a query that took <paramref name="duration"/> is logged.</summary>
    public bool IsSlow(TimeSpan duration) => duration.TotalMilliseconds >= ThresholdMs;

    /// <summary>
    /// Records <paramref name="request"/> when it took at least the threshold: its text with its
    /// literals masked, its parameters' names (not their values), and what <paramref name="statistics"/> says of it.
    /// </summary>
    /// <returns>Whether it was slow (and so recorded).</returns>
    public bool Offer(QueryRequest request, QueryStatistics? statistics, TimeSpan duration)
    {
        if (!IsSlow(duration))
        {
            return false;
        }
        var names = new string[request.Parameters.Count];
        var i = 0;
        foreach (var name in request.Parameters.Keys)
        {
            names[i++] = name;
        }
        var entry = new SlowQuery(
            DateTime.UtcNow,
            (long)duration.TotalMilliseconds,
            Bounded(RqlRedaction.MaskLiterals(request.Text)),
            names,
            statistics?.IndexName,
            statistics?.IsStale,
            statistics?.TotalResults,
            statistics?.Timings?.ToJson());
        lock (_lock)
        {
            _ring[_next] = entry;
            _next = (_next + 1) % _ring.Length;
            _count = Math.Min(_count + 1, _ring.Length);
        }
        LogSlowQuery(_logger, _database, entry.DurationInMs, entry.IndexName ?? "-", entry.Query);
        return true;
    }

    /// <summary>
    /// <paramref name="query"/>, or its first <see cref="MaxQueryLength"/> characters followed by a
    /// note of how many were left out (a cut never splits a surrogate pair).
    /// </summary>
    internal static string Bounded(string query)
    {
        if (query.Length <= MaxQueryLength)
        {
            return query;
        }
        var kept = char.IsHighSurrogate(query[MaxQueryLength - 1]) ? MaxQueryLength - 1 : MaxQueryLength;
        return string.Concat(query.AsSpan(0, kept), $"... ({query.Length - kept} more characters left out)");
    }

    /// <summary>The entries kept, newest first.</summary>
    public IReadOnlyList<SlowQuery> Snapshot()
    {
        lock (_lock)
        {
            var entries = new SlowQuery[_count];
            for (var i = 0; i < _count; i++)
            {
                entries[i] = _ring[(_next - 1 - i + _ring.Length) % _ring.Length]!;
            }
            return entries;
        }
    }

    /// <summary>Forgets every entry.</summary>
    public void Clear()
    {
        lock (_lock)
        {
            Array.Clear(_ring);
            _next = 0;
            _count = 0;
        }
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;

    [LoggerMessage(EventId = 1, Level = LogLevel.Warning, Message = "Slow query on database {Database}: {DurationInMs} ms, answered by {IndexName}: {Query}")]
    private static partial void LogSlowQuery(ILogger logger, string database, long durationInMs, string indexName, string query);
}
