namespace Jackdaw.Client;

/// <summary>
/// A request failed on every node of the database's topology it was tried on, at least one of them
/// unreachable (RavenDB's exception of the name), or a server-wide request found none of the
/// store's URLs accepting a connection. The message lists the nodes and their failures.
/// </summary>
public sealed class AllTopologyNodesDownException(string message, Exception? innerException)
    : ServerUnavailableException(message, innerException);
