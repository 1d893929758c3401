using System.Buffers;
using System.Text.Json;
using DotNext.IO;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The Raft state machine: applies each committed <see cref="ClusterCommand"/> to the in-memory
/// <see cref="ClusterState"/>. DotNext's <see cref="SimpleStateMachine"/> writes a snapshot of the
/// whole state (its JSON) every <see cref="SnapshotEvery"/> applied commands, under
/// <c>System/Cluster/snapshots</c>, and the log drops what a snapshot covers. On start the latest
/// snapshot is read and the log replays the committed entries after it.
/// </summary>
public sealed class ClusterStateMachine : SimpleStateMachine
{
    private readonly int _snapshotEvery;
    private readonly NonBlocking.ConcurrentDictionary<string, string?> _outcomes = new(StringComparer.Ordinal);
    private ClusterState _state = ClusterState.Empty;
    private int _sinceSnapshot;

    public ClusterStateMachine(DirectoryInfo snapshots, int snapshotEvery)
        : base(snapshots)
    {
        _snapshotEvery = snapshotEvery;
    }

    /// <summary>How many applied commands between two snapshots.</summary>
    public int SnapshotEvery => _snapshotEvery;

    public ClusterState State => Volatile.Read(ref _state);

    /// <summary>Raised after each command that changed the state, with the state before and after (on DotNext's applier).</summary>
    public event Action<ClusterState, ClusterState>? Changed;

    /// <summary>
    /// Why the command <paramref name="id"/> changed nothing (null: it applied), once it was applied
    /// on this node; false while it was not. Read (and forgotten) by the node that proposed it.
    /// </summary>
    public bool TryTakeOutcome(string id, out string? refused) => _outcomes.TryRemove(id, out refused);

    public static byte[] Serialize(ClusterCommand command) => JsonSerializer.SerializeToUtf8Bytes(command);

    protected override ValueTask<bool> ApplyAsync(LogEntry entry, CancellationToken token)
    {
        if (entry.IsConfiguration || !entry.TryGetPayload(out var payload) || payload.IsEmpty)
        {
            return ValueTask.FromResult(false);
        }
        var command = Deserialize(payload);
        var before = State;
        var (after, refused) = before.Apply(command, entry.Index);
        _outcomes[command.Id] = refused;
        if (_outcomes.Count > 1024)
        {
            // Outcomes nobody took (commands proposed by other nodes): forget them.
            _outcomes.Clear();
        }
        if (!ReferenceEquals(before, after))
        {
            Volatile.Write(ref _state, after);
            if (refused is null)
            {
                Changed?.Invoke(before, after);
            }
        }
        return ValueTask.FromResult(++_sinceSnapshot % _snapshotEvery == 0);
    }

    private static ClusterCommand Deserialize(ReadOnlySequence<byte> payload)
    {
        var reader = new Utf8JsonReader(payload);
        return JsonSerializer.Deserialize<ClusterCommand>(ref reader)
            ?? throw new InvalidDataException("A cluster log entry holds no command.");
    }

    protected override async ValueTask PersistAsync(IAsyncBinaryWriter writer, CancellationToken token) =>
        await writer.Invoke(State.ToJson(), token).ConfigureAwait(false);

    protected override async ValueTask RestoreAsync(FileInfo snapshotFile, CancellationToken token)
    {
        var bytes = await File.ReadAllBytesAsync(snapshotFile.FullName, token).ConfigureAwait(false);
        var before = State;
        var after = ClusterState.FromJson(bytes);
        Volatile.Write(ref _state, after);
        Changed?.Invoke(before, after);
    }
}
