using Jackdaw.Server.WebSockets;

namespace Jackdaw.Server.Traffic;

/// <summary>One watcher of <see cref="TrafficWatch"/>: its database filter and its bounded queue. Dispose to stop watching.</summary>
public sealed class TrafficWatchConnection : IDisposable
{
    private readonly TrafficWatch _watch;

    internal TrafficWatchConnection(TrafficWatch watch, string? database, int capacity)
    {
        _watch = watch;
        Database = database;
        Feed = new WebSocketFeed<TrafficWatchChange>(capacity);
    }

    /// <summary>The database watched; null: every request.</summary>
    public string? Database { get; }

    /// <summary>The changes waiting to be sent.</summary>
    public WebSocketFeed<TrafficWatchChange> Feed { get; }

    /// <summary>Whether a request to <paramref name="database"/> (null: a server route) is for this connection.</summary>
    public bool Watches(string? database) =>
        Database is null || string.Equals(Database, database, StringComparison.OrdinalIgnoreCase);

    public void Dispose() => _watch.Disconnect(this);
}
