namespace Jackdaw.Client;

/// <summary>
/// Which node of a database's topology a session reads from (RavenDB's <c>ReadBalanceBehavior</c>).
/// Writes always go to the preferred node: the first member of the topology that has not failed.
/// </summary>
public enum ReadBalanceBehavior
{
    /// <summary>Reads go to the preferred node, as writes do.</summary>
    None,

    /// <summary>
    /// Each session reads from one node, the next session from the next: the session's number
    /// modulo the number of nodes, skipping nodes that failed.
    /// </summary>
    RoundRobin,

    /// <summary>
    /// Reads go to the node that answered first most often in the last speed test: every read is
    /// sent to every node until one node has won ten of them (or the nodes have had ten each),
    /// and the test runs again every minute, when the fastest node failed, and when a new topology
    /// lost it.
    /// </summary>
    FastestNode,
}
