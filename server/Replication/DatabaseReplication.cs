using System.Buffers.Binary;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Replication;

/// <summary>
/// Replication's part of one open database (a database component): its registered trees (the
/// sources' positions, its settings), what it received, and its conflict policy. The policy is
/// stored in <c>ReplicationSettings</c> under <c>conflict-solver</c> as RavenDB's ConflictSolver
/// JSON (<c>{"ResolveToLatest":true,"ResolveByCollection":{}}</c>); without one, the latest write wins.
/// It holds the database's tombstones until every destination has them (a tombstone consumer
/// at the lowest acknowledged etag of the database's senders), so a node that was down for long
/// still learns every deletion. That hold is also stored (<c>tombstone-hold</c>, int64 LE, in
/// <c>ReplicationSettings</c>; absent when the database replicates to no one) and moved only
/// once the new value is durable, so after a restart, until the cluster gives the topology
/// again, tombstones stay held where they were. It holds revision tombstones likewise, at the
/// lowest revision etag the senders acknowledged (<see cref="IRevisionTombstoneConsumer"/>).
/// </summary>
public sealed class DatabaseReplication : IAsyncDisposable, ITombstoneConsumer, IRevisionTombstoneConsumer
{
    public const string SettingsTree = "ReplicationSettings";
    private static readonly byte[] ConflictSolverKey = "conflict-solver"u8.ToArray();
    private static readonly byte[] TombstoneHoldKey = "tombstone-hold"u8.ToArray();

    private readonly DocumentDatabase _database;
    private readonly ReplicationHub _hub;
    private readonly IDisposable _tombstones;
    private volatile string? _conflictSolverJson;
    private readonly Lock _holdLock = new();
    private long? _durableHold;
    private bool _holdWriting;

    public DatabaseReplication(DocumentDatabase database, ReplicationHub hub)
    {
        _database = database;
        _hub = hub;
        database.RegisterTrees("Replication", ReplicationPositions.TreeName, SettingsTree, ReplicationPositions.RevisionsTreeName);
        _tombstones = database.Tombstones.Register(this);
        using var reader = database.BeginRead();
        if (reader.GetTree(SettingsTree) is { } tree && tree.TryGet(ConflictSolverKey, out var json))
        {
            _conflictSolverJson = Encoding.UTF8.GetString(json);
        }
        if (reader.GetTree(SettingsTree) is { } settings && settings.TryGet(TombstoneHoldKey, out var hold))
        {
            _durableHold = BinaryPrimitives.ReadInt64LittleEndian(hold);
        }
    }

    /// <summary>The stored tombstone hold (see the type); null when none is stored.</summary>
    public long? DurableTombstoneHold
    {
        get
        {
            lock (_holdLock)
            {
                return _durableHold;
            }
        }
    }

    public static DatabaseReplication Of(DocumentDatabase database) =>
        database.GetComponent<DatabaseReplication>() ?? throw new InvalidOperationException($"Database '{database.Name}' was opened without replication.");

    /// <summary>What this database received by replication since it opened.</summary>
    public ReplicationStats Stats { get; } = new();

    /// <summary>
    /// The change vector this node vouches for to its sources (in <c>Hello</c> and every
    /// <c>Ack</c>): a sender leaves out items it covers (<see cref="DestinationKnowledge"/>). Only
    /// this copy's own entry, at its durable last etag: every version this copy made carries its
    /// entry at that version's etag, and the copy holds the id at that version or a newer one
    /// (versions of an id only grow), so its own writes never come back to it. Entries it merely
    /// received are not vouched for: a feed sends each document at its latest version, so a node
    /// can hold X's version at etag 9 without X's version at 5 of another id, which X replaced
    /// (moved past 9) before sending; had it vouched X:9, a third node holding only the version at
    /// 5 would leave it out, and if X died before sending its replacement the id would be missing
    /// here for good. Empty before the copy's first write.
    /// </summary>
    public string KnownChangeVector()
    {
        var etag = _database.LastEtag;
        return etag > 0 ? Documents.ChangeVectors.Format(_database.NodeTag, etag, _database.DatabaseId) : "";
    }

    /// <summary>RavenDB's ConflictSolver JSON as last set, or null (the default: the latest write wins).</summary>
    public string? ConflictSolverJson => _conflictSolverJson;

    public ConflictPolicy Policy => PolicyOf(_conflictSolverJson);

    /// <summary>Stores RavenDB's ConflictSolver (<c>ResolveToLatest</c>: true, the latest write wins; false, conflicts are kept).</summary>
    public async Task SetConflictSolverAsync(string json)
    {
        PolicyOf(json);
        await _database.EnqueueAsync(new SetConflictSolverCommand(Encoding.UTF8.GetBytes(json))).ConfigureAwait(false);
        _conflictSolverJson = json;
    }

    private static ConflictPolicy PolicyOf(string? json)
    {
        if (json is null)
        {
            return ConflictPolicy.ResolveToLatest;
        }
        try
        {
            using var document = JsonDocument.Parse(json);
            if (document.RootElement.ValueKind != JsonValueKind.Object)
            {
                throw new Errors.BadRequestException("A conflict solver is a JSON object such as {\"ResolveToLatest\":true}.");
            }
            return document.RootElement.TryGetProperty("ResolveToLatest", out var latest) && latest.ValueKind == JsonValueKind.False
                ? ConflictPolicy.Keep
                : ConflictPolicy.ResolveToLatest;
        }
        catch (JsonException e)
        {
            throw new Errors.BadRequestException($"The conflict solver is not valid JSON: {e.Message}");
        }
    }

    string ITombstoneConsumer.Name => "Replication";

    // While the database replicates, or did when it was last open and the cluster has not said
    // otherwise since: a single node keeps its clean-up as it was.
    bool ITombstoneConsumer.Consumes(string lowerCollection) => Hold() != long.MaxValue;

    long ITombstoneConsumer.GetLastProcessedTombstoneEtag(string lowerCollection) => Hold();

    /// <summary>
    /// Where tombstones are held: the stored hold until the topology is set; then the lowest
    /// acknowledged etag of the senders, but never past the stored hold until that is written
    /// (which this starts); <see cref="long.MaxValue"/> when the database replicates to no one.
    /// </summary>
    private long Hold()
    {
        if (!_hub.IsTopologySet(_database.Name))
        {
            return DurableTombstoneHold ?? long.MaxValue;
        }
        var senders = _hub.Outgoing(_database.Name);
        long? wanted = senders.Count == 0 ? null : Math.Max(0, senders.Min(s => s.AcknowledgedEtag));
        long? durable;
        var store = false;
        lock (_holdLock)
        {
            durable = _durableHold;
            if (durable != wanted && !_holdWriting)
            {
                _holdWriting = true;
                store = true;
            }
        }
        if (store)
        {
            _ = StoreHoldAsync(wanted);
        }
        if (wanted is null)
        {
            // Until the stored hold is gone, keep to it.
            return durable ?? long.MaxValue;
        }
        return Math.Min(wanted.Value, durable ?? 0);
    }

    private async Task StoreHoldAsync(long? hold)
    {
        try
        {
            await _database.EnqueueAsync(new SetTombstoneHoldCommand(hold)).ConfigureAwait(false);
            lock (_holdLock)
            {
                _durableHold = hold;
            }
        }
        catch (Exception e) when (e is Errors.DatabaseUnavailableException or ObjectDisposedException or IOException)
        {
            // Closed or failing: the stored hold stays where it was, which holds more, never less.
        }
        finally
        {
            lock (_holdLock)
            {
                _holdWriting = false;
            }
        }
    }

    /// <summary>
    /// Revision tombstones are held at the lowest revision etag the senders had acknowledged (all of
    /// them while one has not answered yet); after a restart, until the topology is set, all of them
    /// when the database replicated when it was last open (its tombstone hold is stored).
    /// </summary>
    long IRevisionTombstoneConsumer.GetLastProcessedRevisionTombstoneEtag()
    {
        if (!_hub.IsTopologySet(_database.Name))
        {
            return DurableTombstoneHold is null ? long.MaxValue : 0;
        }
        var senders = _hub.Outgoing(_database.Name);
        return senders.Count == 0 ? long.MaxValue : Math.Max(0, senders.Min(s => s.AcknowledgedRevisionEtag));
    }

    string? ITombstoneConsumer.HoldReason =>
        _hub.Outgoing(_database.Name).FirstOrDefault(s => !s.Connected) is { } down
            ? $"replication to node {down.Destination.Tag} ({down.Destination.Url}) is not connected: {down.LastError ?? "connecting"}"
            : null;

    public ValueTask DisposeAsync()
    {
        _tombstones.Dispose();
        return ValueTask.CompletedTask;
    }

    private sealed class SetTombstoneHoldCommand(long? hold) : Documents.IMergedCommand<DatabaseTransaction>
    {
        public void Execute(DatabaseTransaction transaction)
        {
            var tree = transaction.GetTree(SettingsTree);
            if (hold is { } etag)
            {
                Span<byte> value = stackalloc byte[sizeof(long)];
                BinaryPrimitives.WriteInt64LittleEndian(value, etag);
                tree.Put(TombstoneHoldKey, value);
            }
            else
            {
                tree.Delete(TombstoneHoldKey);
            }
        }
    }

    private sealed class SetConflictSolverCommand(byte[] json) : Documents.IMergedCommand<DatabaseTransaction>
    {
        public void Execute(DatabaseTransaction transaction) => transaction.GetTree(SettingsTree).Put(ConflictSolverKey, json);
    }
}
