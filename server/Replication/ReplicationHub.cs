using System.Net.WebSockets;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Replication;

/// <summary>
/// The server's replication: for each database, this node's tag and the other nodes that hold it
/// (given by <see cref="SetTopology"/>, which the cluster calls whenever a database's nodes or a
/// member's URL change), one <see cref="OutgoingReplication"/> per other node, and the waits of
/// write assurance (<see cref="WaitForReplicasAsync"/>). Incoming pushes are served per request
/// (<see cref="IncomingReplication"/>); each database's part is its <see cref="DatabaseReplication"/>
/// component (<see cref="Component"/>).
/// </summary>
public sealed class ReplicationHub : IAsyncDisposable
{
    private readonly Func<DatabasesLandlord> _databases;
    private readonly ILogger _logger;
    private readonly Lock _lock = new();
    private readonly Dictionary<string, Dictionary<string, OutgoingReplication>> _outgoing = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, HashSet<string>> _members = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> _topologySet = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<Task> _stopping = [];
    private TaskCompletionSource _progress = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private bool _disposed;

    public ReplicationHub(Func<DatabasesLandlord> databases, ILoggerFactory loggerFactory)
    {
        _databases = databases;
        _logger = loggerFactory.CreateLogger("Jackdaw.Replication");
    }

    public ILogger Logger => _logger;

    /// <summary>
    /// Applied to every sender's WebSocket before it connects: on a secured cluster the cluster
    /// adds the node's client certificate here (the push route needs <c>ClusterAdmin</c>).
    /// Senders started afterwards use it.
    /// </summary>
    public Action<ClientWebSocketOptions>? ConfigureSocket { get; set; }

    /// <summary>Builds each database's replication part when it opens (a <see cref="DocumentDatabaseOptions.Components"/> entry).</summary>
    public Func<DocumentDatabase, IAsyncDisposable> Component => database => new DatabaseReplication(database, this);

    /// <summary>
    /// Sets the other nodes <paramref name="database"/> pushes its feed to (this node, tag
    /// <paramref name="myTag"/>, left out if listed): senders to new nodes start, those to nodes no
    /// longer listed (or at a new URL) stop. An empty list stops replicating it.
    /// </summary>
    public void SetTopology(string database, string myTag, IReadOnlyList<ReplicationNode> others)
    {
        ArgumentException.ThrowIfNullOrEmpty(database);
        ArgumentException.ThrowIfNullOrEmpty(myTag);
        var stopped = new List<OutgoingReplication>();
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (!_outgoing.TryGetValue(database, out var current))
            {
                _outgoing[database] = current = new Dictionary<string, OutgoingReplication>(StringComparer.OrdinalIgnoreCase);
            }
            var wanted = others.Where(n => !string.Equals(n.Tag, myTag, StringComparison.OrdinalIgnoreCase))
                .GroupBy(n => n.Tag, StringComparer.OrdinalIgnoreCase).ToDictionary(g => g.Key, g => g.Last(), StringComparer.OrdinalIgnoreCase);
            foreach (var (tag, sender) in current.ToList())
            {
                if (!wanted.TryGetValue(tag, out var node) || node != sender.Destination || sender.MyTag != myTag)
                {
                    current.Remove(tag);
                    stopped.Add(sender);
                }
            }
            foreach (var (tag, node) in wanted)
            {
                if (!current.ContainsKey(tag))
                {
                    current[tag] = new OutgoingReplication(database, myTag, node, _databases, SignalProgress, ConfigureSocket, _logger);
                }
            }
            if (current.Count == 0)
            {
                _outgoing.Remove(database);
            }
            _topologySet.Add(database);
            if (wanted.Count == 0)
            {
                _members.Remove(database);
            }
            else
            {
                _members[database] = new HashSet<string>(wanted.Keys, StringComparer.OrdinalIgnoreCase);
            }
        }
        foreach (var sender in stopped)
        {
            var stopping = sender.DisposeAsync().AsTask();
            lock (_lock)
            {
                _stopping.RemoveAll(t => t.IsCompleted);
                _stopping.Add(stopping);
            }
        }
        SignalProgress();
    }

    /// <summary>
    /// Whether a push into <paramref name="database"/> from the copy <paramref name="sourceDatabaseId"/>
    /// on node <paramref name="sourceTag"/> may be accepted: the tag is one of the other nodes the
    /// last <see cref="SetTopology"/> gave, and, once this node's sender to that node has heard its
    /// database id, the id is that one. Nothing is accepted before the first SetTopology.
    /// </summary>
    public bool IsKnownSource(string database, string? sourceTag, string sourceDatabaseId)
    {
        lock (_lock)
        {
            if (sourceTag is null || !_members.TryGetValue(database, out var members) || !members.Contains(sourceTag))
            {
                return false;
            }
            if (_outgoing.TryGetValue(database, out var current) && current.TryGetValue(sourceTag, out var sender)
                && sender.DestinationDatabaseId is { } known && known != sourceDatabaseId)
            {
                return false;
            }
            return true;
        }
    }

    /// <summary>Whether <see cref="SetTopology"/> was called for the database since the server started (an empty list included).</summary>
    public bool IsTopologySet(string database)
    {
        lock (_lock)
        {
            return _topologySet.Contains(database);
        }
    }

    /// <summary>
    /// RavenDB's <c>numberOfReplicasToWaitFor=majority</c>: (other nodes + 1) / 2 + 1 replicas,
    /// the other nodes being those the last <see cref="SetTopology"/> gave.
    /// </summary>
    public int MajorityOf(string database)
    {
        lock (_lock)
        {
            var others = _members.TryGetValue(database, out var members) ? members.Count : 0;
            return (others + 1) / 2 + 1;
        }
    }

    /// <summary>The senders of a database (empty when it replicates to no one).</summary>
    public IReadOnlyList<OutgoingReplication> Outgoing(string database)
    {
        lock (_lock)
        {
            return _outgoing.TryGetValue(database, out var current) ? [.. current.Values] : [];
        }
    }

    /// <summary>
    /// How far this node's feed of <paramref name="database"/> reached node <paramref name="tag"/>:
    /// this node's last etag (read first), the etag the destination acknowledged holding everything
    /// up to (-1 before it answered), and whether the sender is connected; then the same of the
    /// revisions' feed (its last revision etag, read with the last etag, and the revision etag
    /// acknowledged); null when this node does not replicate the database to that node.
    /// </summary>
    public (long LastEtag, long Acknowledged, bool Connected, long LastRevisionEtag, long AcknowledgedRevision)? ProgressTo(string database, string tag)
    {
        OutgoingReplication? sender;
        lock (_lock)
        {
            sender = _outgoing.TryGetValue(database, out var current) && current.TryGetValue(tag, out var found) ? found : null;
        }
        if (sender is null)
        {
            return null;
        }
        long lastEtag, lastRevisionEtag;
        using (var reader = _databases().GetDatabase(database).BeginRead())
        {
            lastEtag = reader.LastEtag;
            lastRevisionEtag = reader.LastRevisionEtag;
        }
        return (lastEtag, sender.AcknowledgedEtag, sender.Connected, lastRevisionEtag, sender.AcknowledgedRevisionEtag);
    }

    /// <summary>
    /// Waits until <paramref name="replicas"/> other nodes hold everything of this node's feed up
    /// to <paramref name="etag"/>, or the timeout passes; returns the tags of the nodes that do
    /// (fewer than asked on a timeout: also when the database has fewer other nodes, or none yet,
    /// as RavenDB answers).
    /// </summary>
    public async Task<IReadOnlyList<string>> WaitForReplicasAsync(string database, long etag, int replicas, TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var timer = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timer.CancelAfter(timeout);
        while (true)
        {
            Task progress;
            lock (_lock)
            {
                progress = _progress.Task;
            }
            var senders = Outgoing(database);
            var holding = senders.Where(s => s.AcknowledgedEtag >= etag).Select(s => s.Destination.Tag).Order(StringComparer.Ordinal).ToList();
            if (holding.Count >= replicas)
            {
                return holding;
            }
            try
            {
                await progress.WaitAsync(timer.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                return holding;
            }
        }
    }

    private void SignalProgress()
    {
        TaskCompletionSource done;
        lock (_lock)
        {
            done = _progress;
            _progress = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        done.TrySetResult();
    }

    public async ValueTask DisposeAsync()
    {
        List<OutgoingReplication> senders;
        List<Task> stopping;
        lock (_lock)
        {
            _disposed = true;
            senders = [.. _outgoing.Values.SelectMany(d => d.Values)];
            _outgoing.Clear();
            stopping = [.. _stopping];
            _stopping.Clear();
        }
        foreach (var sender in senders)
        {
            await sender.DisposeAsync().ConfigureAwait(false);
        }
        // Those SetTopology stopped: their loops may still be closing a connection.
        await Task.WhenAll(stopping).ConfigureAwait(false);
    }
}
