using System.Runtime.CompilerServices;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Indexing;

namespace Jackdaw.Server.Changes;

/// <summary>
/// The changes feed of one database: the connections watching it, fed from the durable-commit
/// notifications (document changes, in commit order, only once durable), the index store's
/// events and the operations' status changes (bulk insert progress, about once a second, and
/// their end). Created with the first connection (a database nobody watches pays nothing) and
/// closed with its database, which closes every connection (their clients reconnect to the
/// database opened next).
/// </summary>
/// <remarks>
/// Everything here runs on the publishing thread of the notifications, on an index loop, on the
/// operations' progress timer or on the request that ended an operation, so it only queues: a commit goes, as one shared <see cref="PublishedCommit"/>, to each connection that
/// watches documents, whose sender picks and serializes its changes (each serialized once for all
/// connections). A connection whose queue is full is closed (<see cref="ChangesCloseReason.TooSlow"/>);
/// nothing ever waits for a client.
/// </remarks>
public sealed class ChangesFeed
{
    private static readonly ConditionalWeakTable<DocumentDatabase, ChangesFeed> Feeds = new();

    private readonly Lock _lock = new();
    private readonly IDisposable _commits;
    private readonly IDisposable? _batches;
    private readonly IDisposable? _indexEvents;
    private readonly IDisposable _operations;
    private volatile ChangesConnection[] _connections = [];
    private bool _closed;

    private ChangesFeed(DocumentDatabase database)
    {
        Database = database;
        _commits = database.Notifications.Subscribe(OnCommit);
        _operations = database.Operations.Subscribe(OnOperation);
        if (database.GetComponent<IndexStore>() is { } indexes)
        {
            _batches = indexes.SubscribeBatches(OnBatch);
            _indexEvents = indexes.SubscribeIndexEvents(OnIndexEvent);
        }
        database.Notifications.Closed.ContinueWith(static (_, state) => ((ChangesFeed)state!).Close(), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    /// <summary>The feed of <paramref name="database"/>, created on first use (with <paramref name="options"/>, else the defaults).</summary>
    public static ChangesFeed For(DocumentDatabase database, ChangesOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(database);
        if (Feeds.TryGetValue(database, out var feed))
        {
            return feed;
        }
        // Created under a lock: a second feed made in a race would stay subscribed for nothing.
        lock (Feeds)
        {
            if (!Feeds.TryGetValue(database, out feed))
            {
                feed = new ChangesFeed(database);
                if (options is not null)
                {
                    feed.Options = options;
                }
                Feeds.Add(database, feed);
            }
            return feed;
        }
    }

    /// <summary>The connections open on <paramref name="database"/>'s feed, without creating the feed (0 when it has none).</summary>
    public static int ConnectionCount(DocumentDatabase database) =>
        Feeds.TryGetValue(database, out var feed) ? feed._connections.Length : 0;

    public DocumentDatabase Database { get; }

    /// <summary>Limits of the connections opened from now on.</summary>
    public ChangesOptions Options { get; set; } = new();

    /// <summary>The open connections.</summary>
    public IReadOnlyList<ChangesConnection> Connections => _connections;

    /// <summary>
    /// Registers a connection; from now on it is offered every change it watches. A feed whose
    /// database has closed gives a connection already closed (<see cref="ChangesCloseReason.DatabaseClosed"/>).
    /// </summary>
    public ChangesConnection Connect(ChangesProtocol protocol, WatchSet? watches = null)
    {
        var connection = new ChangesConnection(this, protocol, watches ?? WatchSet.Empty);
        lock (_lock)
        {
            if (!_closed)
            {
                _connections = [.. _connections, connection];
                return connection;
            }
        }
        connection.Close(ChangesCloseReason.DatabaseClosed);
        return connection;
    }

    /// <summary>Closes the connection with that id (<c>DELETE /changes?id=</c>); false when there is none.</summary>
    public bool Drop(long id)
    {
        foreach (var connection in Connections)
        {
            if (connection.Id == id)
            {
                connection.Close(ChangesCloseReason.Dropped);
                return true;
            }
        }
        return false;
    }

    internal void Remove(ChangesConnection connection)
    {
        lock (_lock)
            _connections = Array.FindAll(_connections, c => c != connection);
    }

    private void OnCommit(DurableCommit commit)
    {
        var connections = _connections;
        PublishedCommit? published = null;
        foreach (var connection in connections)
        {
            if (!connection.Watches.WatchesDocuments)
            {
                continue;
            }
            published ??= new PublishedCommit(commit, Database.DatabaseId);
            connection.Offer(ChangesMessage.ForCommit(published));
        }
    }

    private void OnBatch(Indexing.Index index, IndexingBatch batch) => PublishIndexChange(index.Name, IndexChangeType.BatchCompleted);

    private void OnIndexEvent(string name, IndexEventKind kind) =>
        PublishIndexChange(name, kind switch
        {
            IndexEventKind.Added => IndexChangeType.IndexAdded,
            IndexEventKind.Removed => IndexChangeType.IndexRemoved,
            _ => IndexChangeType.SideBySideReplace,
        });

    private void PublishIndexChange(string name, IndexChangeType type)
    {
        byte[]? payload = null;
        foreach (var connection in _connections)
        {
            if (!connection.Watches.MatchesIndex(name))
            {
                continue;
            }
            payload ??= ChangesJson.IndexChangeValue(name, type);
            connection.Offer(ChangesMessage.ForIndex(payload));
        }
    }

    /// <summary>An operation's status change, serialized once for every connection that watches it (they are few).</summary>
    private void OnOperation(DatabaseOperationState state)
    {
        byte[]? payload = null;
        foreach (var connection in _connections)
        {
            if (!connection.Watches.MatchesOperation(state.OperationId))
            {
                continue;
            }
            payload ??= ChangesJson.OperationStatusChangeValue(state);
            connection.Offer(ChangesMessage.ForOperation(payload));
        }
    }

    /// <summary>The database closed: every connection closes and the feed takes no new one.</summary>
    private void Close()
    {
        ChangesConnection[] connections;
        lock (_lock)
        {
            _closed = true;
            connections = _connections;
        }
        _commits.Dispose();
        _batches?.Dispose();
        _indexEvents?.Dispose();
        _operations.Dispose();
        foreach (var connection in connections)
        {
            connection.Close(ChangesCloseReason.DatabaseClosed);
        }
    }
}
