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
    private readonly NonBlocking.ConcurrentDictionary<string, Outcome> _outcomes = new(StringComparer.Ordinal);
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
    /// Asks to be told what becomes of command <paramref name="id"/> when it is applied here (the
    /// node that proposes it, before it does); <see cref="TakeOutcome"/> reads and forgets it.
    /// Only expected commands leave an outcome, so none is dropped to make room for others.
    /// </summary>
    public void Expect(string id) => _outcomes[id] = new Outcome();

    /// <summary>Why the expected command <paramref name="id"/> changed nothing (null: it applied, or it was not applied here yet), and forgets it.</summary>
    public string? TakeOutcome(string id) => _outcomes.TryRemove(id, out var outcome) ? outcome.Refused : null;

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
        if (_outcomes.TryGetValue(command.Id, out var outcome))
        {
            outcome.Refused = refused;
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

    /// <summary>What became of a command its proposer waits for.</summary>
    private sealed class Outcome
    {
        public volatile string? Refused;
    }
}
