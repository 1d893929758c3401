namespace Jackdaw.Client.Http;

/// <summary>
/// Chooses the node of one database's topology a request goes to (RavenDB's <c>NodeSelector</c>):
/// the preferred node is the first member with no failure since it was last found healthy; a
/// session's reads under <see cref="ReadBalanceBehavior.RoundRobin"/> start at its own index; under
/// <see cref="ReadBalanceBehavior.FastestNode"/> at the winner of the last speed test. When every
/// node has failed, the choice rotates among them, so the caller gets an error or a recovered node.
/// Thread-safe: failures are counted with interlocked operations on the current state, and a new
/// topology replaces the state as a whole, under the lock of the speed test's fields (it copies
/// them). A failure or a recovery recorded on a state that was being replaced is recorded again on
/// the state that replaced it, so none is lost to the copy.
/// </summary>
internal sealed class NodeSelector
{
    /// <summary>Wins that end a speed test; and, times the number of nodes, rounds after which the best so far is taken.</summary>
    private const int SpeedTestWins = 10;

    private readonly object _speedTestLock = new();
    private State _state;

    public NodeSelector(Topology topology)
    {
        _state = new State(topology);
    }

    public Topology Topology => Volatile.Read(ref _state).Topology;

    /// <summary>The topology's etag as requests carry it in <c>Topology-Etag</c>: quoted, as RavenDB's clients send it (made once per topology).</summary>
    public string TopologyEtagHeader => Volatile.Read(ref _state).EtagHeader;

    /// <summary>
    /// Takes <paramref name="topology"/> when its etag is newer (or <paramref name="force"/>).
    /// Failure counts carry over for nodes of the same URL: a refresh does not send requests back
    /// to a node that is down and still being checked.
    /// </summary>
    public bool TryUpdate(Topology topology, bool force)
    {
        lock (_speedTestLock)
        {
            var current = Volatile.Read(ref _state);
            if (!force && topology.Etag <= current.Topology.Etag)
            {
                return false;
            }

            var next = new State(topology);
            for (var i = 0; i < topology.Nodes.Count; i++)
            {
                var old = current.IndexOf(topology.Nodes[i].Url);
                if (old >= 0)
                {
                    next.Failures[i] = Volatile.Read(ref current.Failures[old]);
                }
            }

            var fastest = current.Topology.Nodes.Count > current.Fastest ? next.IndexOf(current.Topology.Nodes[current.Fastest].Url) : -1;
            next.Fastest = Math.Max(fastest, 0);
            next.SpeedTestRounds = fastest < 0 ? 1 : 0;
            Volatile.Write(ref _state, next);
            return true;
        }
    }

    public (int Index, ServerNode Node) GetPreferredNode() => Preferred(Volatile.Read(ref _state));

    /// <summary>The session's node for reads: its number modulo the node count, or the next healthy member after it.</summary>
    public (int Index, ServerNode Node) GetNodeBySessionId(int sessionId)
    {
        var state = Volatile.Read(ref _state);
        var count = state.Topology.Nodes.Count;
        ThrowIfEmpty(state);
        var start = (int)((uint)sessionId % (uint)count);
        for (var step = 0; step < count; step++)
        {
            var i = (start + step) % count;
            if (state.IsHealthyMember(i))
            {
                return (i, state.Topology.Nodes[i]);
            }
        }

        return Preferred(state);
    }

    /// <summary>The last speed test's winner while it is healthy; otherwise the preferred node (and a new speed test).</summary>
    public (int Index, ServerNode Node) GetFastestNode()
    {
        var state = Volatile.Read(ref _state);
        ThrowIfEmpty(state);
        var fastest = Volatile.Read(ref state.Fastest);
        if (fastest < state.Topology.Nodes.Count && state.IsHealthyMember(fastest))
        {
            return (fastest, state.Topology.Nodes[fastest]);
        }

        StartSpeedTest();
        return Preferred(state);
    }

    public void OnFailedRequest(ServerNode node)
    {
        var state = Volatile.Read(ref _state);
        while (true)
        {
            var index = state.IndexOf(node.Url);
            if (index >= 0)
            {
                Interlocked.Increment(ref state.Failures[index]);
            }

            // TryUpdate may have copied the counts before the increment: count it on the new state
            // too (a count only says whether the node failed, so twice is no harm).
            var now = Volatile.Read(ref _state);
            if (ReferenceEquals(now, state))
            {
                return;
            }

            state = now;
        }
    }

    /// <summary>The node answered (or passed its health check): it is chosen again.</summary>
    public void Restore(ServerNode node)
    {
        var state = Volatile.Read(ref _state);
        while (true)
        {
            var index = state.IndexOf(node.Url);
            if (index >= 0 && Volatile.Read(ref state.Failures[index]) != 0)
            {
                Volatile.Write(ref state.Failures[index], 0);
            }

            var now = Volatile.Read(ref _state);
            if (ReferenceEquals(now, state))
            {
                return;
            }

            state = now;
        }
    }

    public bool IsFailed(ServerNode node)
    {
        var state = Volatile.Read(ref _state);
        var index = state.IndexOf(node.Url);
        return index >= 0 && Volatile.Read(ref state.Failures[index]) != 0;
    }

    public bool Contains(ServerNode node) => Volatile.Read(ref _state).IndexOf(node.Url) >= 0;

    /// <summary>A read now goes to every node, to find the fastest.</summary>
    public bool InSpeedTestPhase => Volatile.Read(ref Volatile.Read(ref _state).SpeedTestRounds) > 0;

    public void StartSpeedTest()
    {
        lock (_speedTestLock)
        {
            var state = Volatile.Read(ref _state);
            if (state.SpeedTestRounds > 0)
            {
                return;
            }

            Array.Clear(state.FastestRecords);
            Volatile.Write(ref state.SpeedTestRounds, 1);
        }
    }

    /// <summary>Counts a win of the node at <paramref name="index"/> (ignored when the topology changed meanwhile).</summary>
    public void RecordFastest(int index, ServerNode node)
    {
        lock (_speedTestLock)
        {
            var state = Volatile.Read(ref _state);
            if (state.SpeedTestRounds == 0 || index < 0 || index >= state.FastestRecords.Length || !ReferenceEquals(state.Topology.Nodes[index], node))
            {
                return;
            }

            // Fastest and SpeedTestRounds are read without the lock (GetFastestNode, InSpeedTestPhase): written so.
            if (++state.FastestRecords[index] >= SpeedTestWins)
            {
                Volatile.Write(ref state.Fastest, index);
                Volatile.Write(ref state.SpeedTestRounds, 0);
                return;
            }

            if (state.SpeedTestRounds + 1 > state.FastestRecords.Length * SpeedTestWins)
            {
                // Many races ran at once: take the best so far rather than test forever.
                Volatile.Write(ref state.Fastest, Array.IndexOf(state.FastestRecords, state.FastestRecords.Max()));
                Volatile.Write(ref state.SpeedTestRounds, 0);
                return;
            }

            Volatile.Write(ref state.SpeedTestRounds, state.SpeedTestRounds + 1);
        }
    }

    private static (int Index, ServerNode Node) Preferred(State state)
    {
        ThrowIfEmpty(state);
        for (var i = 0; i < state.Topology.Nodes.Count; i++)
        {
            if (state.IsHealthyMember(i))
            {
                return (i, state.Topology.Nodes[i]);
            }
        }

        for (var i = 0; i < state.Topology.Nodes.Count; i++)
        {
            if (Volatile.Read(ref state.Failures[i]) == 0)
            {
                return (i, state.Topology.Nodes[i]);
            }
        }

        // Everyone failed: rotate, so that each attempt tries another node.
        var next = (int)((uint)Interlocked.Increment(ref state.EveryoneFaultedChoice) % (uint)state.Topology.Nodes.Count);
        return (next, state.Topology.Nodes[next]);
    }

    private static void ThrowIfEmpty(State state)
    {
        if (state.Topology.Nodes.Count == 0)
        {
            throw new DatabaseDoesNotExistException("The database's topology has no nodes: no server holds it.");
        }
    }

    private sealed class State(Topology topology)
    {
        public readonly Topology Topology = topology;
        public readonly string EtagHeader = "\"" + topology.Etag.ToString(System.Globalization.CultureInfo.InvariantCulture) + "\"";
        public readonly int[] Failures = new int[topology.Nodes.Count];
        public readonly int[] FastestRecords = new int[topology.Nodes.Count];
        public int Fastest;
        public int SpeedTestRounds;
        public int EveryoneFaultedChoice = -1;

        public bool IsHealthyMember(int i) =>
            Volatile.Read(ref Failures[i]) == 0 && Topology.Nodes[i].ServerRole == ServerNode.Role.Member;

        public int IndexOf(string url)
        {
            for (var i = 0; i < Topology.Nodes.Count; i++)
            {
                if (string.Equals(Topology.Nodes[i].Url, url, StringComparison.OrdinalIgnoreCase))
                {
                    return i;
                }
            }

            return -1;
        }
    }
}
