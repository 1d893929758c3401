namespace Jackdaw.Server.Replication;

/// <summary>
/// The default policy for concurrent versions: the latest write wins, by last-modified time, ties
/// broken by the change vector's text (ordinal), so that every node, whichever version it held
/// and whichever it received, picks the same one. The result carries the merge of both change
/// vectors, which is also the same on every node: a node that resolved first forwards it, and the
/// others skip it as already merged.
/// </summary>
public static class ConflictSolver
{
    /// <summary>Whether the incoming version wins over the local one.</summary>
    public static bool IncomingWins(long incomingTicks, string incomingChangeVector, long localTicks, string localChangeVector)
    {
        if (incomingTicks != localTicks)
            return incomingTicks > localTicks;
        return string.CompareOrdinal(incomingChangeVector, localChangeVector) > 0;
    }
}
