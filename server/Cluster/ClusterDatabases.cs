using System.Text.Json;
using System.Threading.Channels;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Keeps this node's databases as the committed records say: creates the local database when a
/// record names this node, deletes it when a record stops naming it (or is deleted), and tells
/// replication each database's other nodes whenever they or their URLs change, and builds, changes
/// and deletes the indexes of each local database as its record's definitions change
/// (<c>ClusterDatabases.Indexes.cs</c>; an index that fails is tried again on its own,
/// <c>ClusterDatabases.IndexRetries.cs</c>), after the record's analyzers (<c>ClusterDatabases.Analyzers.cs</c>), and puts the registered certificates in this node's
/// certificate store (<c>ClusterDatabases.Certificates.cs</c>), and hands each local copy its record's periodic
/// backup tasks (<c>ClusterDatabases.Backups.cs</c>). Works off the state machine's thread, one state after another.
/// <para>
/// Each state is compared with the state this node last acted on (<c>acted.json</c> beside the
/// log, written durably whenever the records, members or certificates it holds change), never with the state
/// before it: at start DotNext applies the committed log again after the latest snapshot, and a
/// replayed delete must not remove the copy (or the index) a later create made. A state at or
/// before the acted one changes nothing; a later one (a replayed entry, or a snapshot a lagging
/// node installs) is compared with it, so a node that missed a delete while down deletes its copy
/// when it catches up, and a database is never deleted because a state lacks it unless this node
/// once held it by the record.
/// </para>
/// </summary>
internal sealed partial class ClusterDatabases : IAsyncDisposable
{
    private const string ActedFile = "acted.json";
    private static readonly TimeSpan RetryAfter = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan RetryAtMost = TimeSpan.FromMinutes(1);

    private readonly ClusterNode _node;
    private readonly string _folder;
    private readonly Func<DatabasesLandlord> _databases;
    private readonly ILogger _logger;
    private readonly Channel<ClusterState> _changes =
        Channel.CreateUnbounded<ClusterState>(new UnboundedChannelOptions { SingleReader = true });
    private readonly CancellationTokenSource _stopping = new();
    private ClusterState _acted = ClusterState.Empty;
    // 5 s after a failed step, doubling while steps keep failing (a database that cannot be opened
    // here), up to a minute; back to 5 s once a state is done whole. A failed index is not a failed
    // step: it is retried on its own (ClusterDatabases.IndexRetries.cs).
    private TimeSpan _retryDelay = RetryAfter;
    private Task _loop = Task.CompletedTask;

    /// <param name="folder"><c>System/Cluster</c>: where <c>acted.json</c> is kept.</param>
    public ClusterDatabases(ClusterNode node, string folder, Func<DatabasesLandlord> databases, ILogger logger)
    {
        _node = node;
        _folder = folder;
        _databases = databases;
        _logger = logger;
    }

    /// <summary>
    /// Starts applying states: first the one the node has now (every local database's peers are
    /// told to replication once, and whatever changed since the acted state is done).
    /// </summary>
    public void Start(ClusterState current)
    {
        _acted = LoadActed();
        _changes.Writer.TryWrite(current);
        _loop = Task.Run(LoopAsync);
    }

    public void Enqueue(ClusterState after) => _changes.Writer.TryWrite(after);

    private async Task LoopAsync()
    {
        var first = true;
        await foreach (var after in _changes.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            // Only the newest state matters: intermediate ones are covered by the comparison.
            var target = after;
            while (_changes.Reader.TryRead(out var later))
            {
                target = later.Etag >= target.Etag ? later : target;
            }
            if (target.Etag < _acted.Etag)
            {
                // A replayed state older than what this node acted on: the local databases
                // already follow a later one (told to replication once, at start).
                target = _acted;
            }
            else if (target.Etag == _acted.Etag && !first)
            {
                // Nothing new: a wake-up for the indexes that failed (ClusterDatabases.IndexRetries.cs), or a state seen already.
                await RetryFailedIndexesAsync().ConfigureAwait(false);
                continue;
            }
            if (Outside(_acted, target))
            {
                // Not a member yet (a passive node taking the log before its tag is known): nothing
                // is acted on, so that once it is a member it compares with what it really did.
                Done(target);
                continue;
            }
            try
            {
                _lastApplied = target;
                var complete = await ApplyAsync(_acted, target, announceAll: first).ConfigureAwait(false);
                if (first)
                {
                    // Indexes that failed in a run before (nothing remembers them) are tried again now.
                    RecomputeFailedIndexes(target);
                }
                first = false;
                if (complete)
                {
                    _retryDelay = RetryAfter;
                    var changed = !SameRecords(_acted, target);
                    _acted = target.WithoutAppliedIds();
                    if (changed)
                    {
                        SaveActed(WithFailedDeletes(_acted));
                    }
                }
                else
                {
                    // Keep the acted state where it was, so the failed steps are compared again;
                    // requests waiting for this state are answered all the same (the failure is logged).
                    _ = RetryLaterAsync(target);
                }
                Done(target);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                LogFailed(_logger, e);
                _ = RetryLaterAsync(target);
            }
            Done(after);
            await RetryFailedIndexesAsync().ConfigureAwait(false);
        }
    }

    private async Task RetryLaterAsync(ClusterState target)
    {
        var delay = _retryDelay;
        _retryDelay = delay * 2 < RetryAtMost ? delay * 2 : RetryAtMost;
        try
        {
            await Task.Delay(delay, _stopping.Token).ConfigureAwait(false);
            _changes.Writer.TryWrite(target);
        }
        catch (OperationCanceledException)
        {
            // Stopping: the next start compares with the acted state again.
        }
    }

    /// <summary>Brings the local databases from <paramref name="before"/> to <paramref name="after"/>; false when a step failed (logged).</summary>
    private async Task<bool> ApplyAsync(ClusterState before, ClusterState after, bool announceAll)
    {
        var me = _node.NodeTag;
        var complete = true;
        try
        {
            ApplyCertificates(before.Certificates, after.Certificates, announceAll);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            LogCertificatesFailed(_logger, e);
            complete = false;
        }
        var landlord = _databases();
        foreach (var record in before.Databases.Values)
        {
            // Off this node, or deleted and created again under its name since (another database:
            // the old copy's documents must not go into it).
            if (!record.Nodes.Contains(me)
                || (after.Databases.TryGetValue(record.Name, out var now) && now.Nodes.Contains(me) && now.CreatedIndex == record.CreatedIndex))
            {
                continue;
            }
            try
            {
                _node.Replication.SetTopology(record.Name, me, []);
                if (await landlord.TryDeleteAsync(record.Name).ConfigureAwait(false))
                {
                    LogDeleted(_logger, record.Name, me);
                }
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                LogDatabaseFailed(_logger, record.Name, e);
                complete = false;
            }
        }
        foreach (var record in after.Databases.Values)
        {
            if (!record.Nodes.Contains(me))
            {
                continue;
            }
            try
            {
                var created = false;
                if (!landlord.Names.Contains(record.Name, StringComparer.OrdinalIgnoreCase))
                {
                    created = landlord.TryCreate(record.Name);
                    LogCreated(_logger, record.Name, me);
                }
                // A copy new here (or new to this node) builds every index of the record; else the changes.
                var hadIndexes = !created && before.Databases.TryGetValue(record.Name, out var previous) && previous.Nodes.Contains(me)
                    ? previous.Indexes
                    : ClusterDatabaseRecord.NoIndexes;
                // Analyzers put before the indexes that name them, deleted after the indexes that named them.
                var hadAnalyzers = !created && before.Databases.TryGetValue(record.Name, out var analyzed) && analyzed.Nodes.Contains(me)
                    ? analyzed.Analyzers
                    : ClusterDatabaseRecord.NoAnalyzers;
                complete &= await ApplyAnalyzersAsync(landlord, record.Name, hadAnalyzers, record.Analyzers, deletes: false).ConfigureAwait(false);
                if (!ReferenceEquals(hadIndexes, record.Indexes))
                {
                    complete &= await ApplyIndexesAsync(landlord, record.Name, hadIndexes, record.Indexes).ConfigureAwait(false);
                }
                complete &= await ApplyAnalyzersAsync(landlord, record.Name, hadAnalyzers, record.Analyzers, deletes: true).ConfigureAwait(false);
                if (record.ConflictSolver is not null && (created || announceAll || !before.Databases.TryGetValue(record.Name, out var solved) || solved.ConflictSolver != record.ConflictSolver))
                {
                    await ApplyConflictSolverAsync(landlord, record).ConfigureAwait(false);
                }
                var revisionsBefore = !created && !announceAll && before.Databases.TryGetValue(record.Name, out var revised) && revised.Nodes.Contains(me) ? revised : null;
                await ApplyRevisionsAsync(landlord, revisionsBefore, record).ConfigureAwait(false);
                if (!ReferenceEquals(before.Subscriptions.Of(record.Name), after.Subscriptions.Of(record.Name))
                    || !ReferenceEquals(before.Members, after.Members) || !before.Databases.ContainsKey(record.Name) || announceAll || created)
                {
                    RefreshSubscriptions(landlord, record.Name);
                }
                var held = !created && before.Databases.TryGetValue(record.Name, out var heldBefore) && heldBefore.Nodes.Contains(me) ? heldBefore : null;
                complete &= await ApplyBackupsAsync(landlord, held, record, always: announceAll).ConfigureAwait(false);
                var others = PeersOf(record, after, me);
                if (announceAll || !before.Databases.TryGetValue(record.Name, out var old) || old.TopologyEtag != record.TopologyEtag
                    || !others.SequenceEqual(PeersOf(old, before, me)))
                {
                    _node.Replication.SetTopology(record.Name, me, others);
                }
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                LogDatabaseFailed(_logger, record.Name, e);
                complete = false;
            }
        }
        return complete;
    }

    /// <summary>Whether this node is a member of neither state (or waits to be added): it has nothing to act on.</summary>
    private bool Outside(ClusterState before, ClusterState after)
    {
        var me = _node.NodeTag;
        return me == ClusterNode.PassiveTag || !after.Members.ContainsKey(me) && !before.Members.ContainsKey(me);
    }

    /// <summary>This node's copy takes the cluster's subscriptions (new, changed, moved to or from this node, deleted).</summary>
    private void RefreshSubscriptions(DatabasesLandlord landlord, string database)
    {
        try
        {
            Subscriptions.SubscriptionStore.Of(landlord.GetDatabase(database)).RefreshFromCluster();
        }
        catch (Exception e)
        {
            LogSubscriptionsFailed(_logger, database, e);
        }
    }

    private static List<ClusterPeer> PeersOf(ClusterDatabaseRecord record, ClusterState state, string me) =>
        [.. record.Nodes.Where(n => n != me && state.Members.ContainsKey(n)).Select(n => new ClusterPeer(n, state.Members[n]))];

    /// <summary>Whether both states hold the same members, certificates and records (records are immutable: an unchanged one is the same object).</summary>
    private static bool SameRecords(ClusterState a, ClusterState b)
    {
        if (a.Databases.Count != b.Databases.Count || !a.Members.SequenceEqual(b.Members) || !a.Certificates.SequenceEqual(b.Certificates))
        {
            return false;
        }
        foreach (var (name, record) in a.Databases)
        {
            if (!b.Databases.TryGetValue(name, out var other) || !ReferenceEquals(record, other))
            {
                return false;
            }
        }
        return true;
    }

    private ClusterState LoadActed()
    {
        var path = Path.Combine(_folder, ActedFile);
        if (!File.Exists(path))
        {
            return ClusterState.Empty;
        }
        try
        {
            return ClusterState.FromJson(File.ReadAllBytes(path));
        }
        catch (Exception e) when (e is JsonException or InvalidDataException or IOException)
        {
            // Written by rename, so never torn; unreadable only when damaged. Comparing with the
            // empty state deletes nothing (it only creates what the records name).
            LogActedUnreadable(_logger, path, e);
            return ClusterState.Empty;
        }
    }

    private void SaveActed(ClusterState acted)
    {
        Directory.CreateDirectory(_folder);
        var path = Path.Combine(_folder, ActedFile);
        var temporary = path + ".tmp";
        using (var file = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            file.Write(acted.ToJson());
            file.Flush(flushToDisk: true);
        }
        File.Move(temporary, path, overwrite: true);
        Storage.Engine.FileDurability.SyncFolder(_folder);
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        _changes.Writer.TryComplete();
        await _loop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _stopping.Dispose();
    }

    [LoggerMessage(EventId = 710, Level = LogLevel.Information, Message = "Created database {Database} on node {Tag}, as the cluster's record says")]
    private static partial void LogCreated(ILogger logger, string database, string tag);

    [LoggerMessage(EventId = 711, Level = LogLevel.Information, Message = "Deleted database {Database} from node {Tag}, as the cluster's record says")]
    private static partial void LogDeleted(ILogger logger, string database, string tag);

    [LoggerMessage(EventId = 723, Level = LogLevel.Warning, Message = "Could not bring the subscriptions of database {Database} in line with the cluster's state")]
    private static partial void LogSubscriptionsFailed(ILogger logger, string database, Exception exception);

    [LoggerMessage(EventId = 712, Level = LogLevel.Error, Message = "Could not bring this node's databases in line with the cluster's records; tried again shortly")]
    private static partial void LogFailed(ILogger logger, Exception exception);

    [LoggerMessage(EventId = 724, Level = LogLevel.Error, Message = "Could not bring database {Database} in line with the cluster's record; tried again shortly")]
    private static partial void LogDatabaseFailed(ILogger logger, string database, Exception exception);

    [LoggerMessage(EventId = 726, Level = LogLevel.Error, Message = "Could not bring this node's registered certificates in line with the cluster's state; tried again shortly")]
    private static partial void LogCertificatesFailed(ILogger logger, Exception exception);

    [LoggerMessage(EventId = 725, Level = LogLevel.Warning, Message = "The databases this node last acted on ({Path}) cannot be read; only creating what the records name")]
    private static partial void LogActedUnreadable(ILogger logger, string path, Exception exception);
}
