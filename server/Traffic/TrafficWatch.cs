namespace Jackdaw.Server.Traffic;

/// <summary>
/// Traffic watch (<c>GET /admin/traffic-watch</c>): who watches the server's requests, and the
/// hand-over of each finished request to them. One per server (<c>ServerContext.TrafficWatch</c>).
/// The request pipeline asks <see cref="IsWatched"/> as each request ends (one volatile read, the
/// whole cost when nobody watches) and only then builds a <see cref="TrafficWatchChange"/> and
/// <see cref="Publish"/>es it: each connection that watches its database queues it without waiting
/// (a bounded <see cref="WebSockets.WebSocketFeed{T}"/>; a slow reader loses the oldest).
/// </summary>
public sealed class TrafficWatch
{
    /// <summary>The route of the feed itself, whose own requests are never reported.</summary>
    public const string Route = "/admin/traffic-watch";

    /// <summary>The most changes a connection queues before it drops the oldest.</summary>
    public const int QueueCapacity = 1024;

    private const string DatabasesPrefix = "/databases/";

    private readonly Lock _lock = new();

    // Copy on write under _lock; null (not empty) when nobody watches, so that the request path's
    // check is a single volatile read of this field.
    private TrafficWatchConnection[]? _connections;
    private long _lastRequestId;

    /// <summary>Whether anyone watches: when false, a finished request is not looked at.</summary>
    public bool IsWatched => Volatile.Read(ref _connections) is not null;

    /// <summary>The open connections.</summary>
    public int ConnectionCount => Volatile.Read(ref _connections)?.Length ?? 0;

    /// <summary>The next request id (only watched requests take one).</summary>
    public long NextRequestId() => Interlocked.Increment(ref _lastRequestId);

    /// <summary>
    /// A new watcher: of every request when <paramref name="database"/> is null, else of the
    /// requests to that database (by name, case-insensitive). Dispose it to stop watching.
    /// </summary>
    public TrafficWatchConnection Connect(string? database)
    {
        var connection = new TrafficWatchConnection(this, database, QueueCapacity);
        lock (_lock)
        {
            _connections = [.. _connections ?? [], connection];
        }
        return connection;
    }

    internal void Disconnect(TrafficWatchConnection connection)
    {
        lock (_lock)
        {
            if (_connections is not { } connections)
            {
                return;
            }
            var left = Array.FindAll(connections, c => !ReferenceEquals(c, connection));
            _connections = left.Length == 0 ? null : left;
        }
    }

    /// <summary>Offers <paramref name="change"/> to every connection that watches its database; never waits.</summary>
    public void Publish(TrafficWatchChange change)
    {
        if (Volatile.Read(ref _connections) is not { } connections)
        {
            return;
        }
        foreach (var connection in connections)
        {
            if (connection.Watches(change.DatabaseName))
            {
                connection.Feed.Offer(change);
            }
        }
    }

    /// <summary>The database a path is about (<c>/databases/{name}/...</c>), or null.</summary>
    public static string? DatabaseOf(string path)
    {
        if (!path.StartsWith(DatabasesPrefix, StringComparison.Ordinal))
        {
            return null;
        }
        var end = path.IndexOf('/', DatabasesPrefix.Length);
        var name = end < 0 ? path[DatabasesPrefix.Length..] : path[DatabasesPrefix.Length..end];
        return name.Length == 0 ? null : name;
    }

    /// <summary>What a request was about, from its path's first segment under its database.</summary>
    public static TrafficWatchChangeType TypeOf(string path)
    {
        if (!path.StartsWith(DatabasesPrefix, StringComparison.Ordinal))
        {
            return TrafficWatchChangeType.None;
        }
        var start = path.IndexOf('/', DatabasesPrefix.Length);
        if (start < 0)
        {
            return TrafficWatchChangeType.None;
        }
        var rest = path.AsSpan(start + 1);
        var end = rest.IndexOf('/');
        var segment = end < 0 ? rest : rest[..end];
        return segment switch
        {
            "docs" or "attachments" or "revisions" or "collections" => TrafficWatchChangeType.Documents,
            "queries" => TrafficWatchChangeType.Queries,
            "streams" => TrafficWatchChangeType.Streams,
            "bulk_docs" or "bulk_insert" => TrafficWatchChangeType.BulkDocs,
            "multi_get" => TrafficWatchChangeType.MultiGet,
            "indexes" => TrafficWatchChangeType.Index,
            "hilo" => TrafficWatchChangeType.Hilo,
            "subscriptions" => TrafficWatchChangeType.Subscriptions,
            "operations" => TrafficWatchChangeType.Operations,
            "counters" => TrafficWatchChangeType.Counters,
            "timeseries" => TrafficWatchChangeType.TimeSeries,
            _ => TrafficWatchChangeType.None,
        };
    }
}
