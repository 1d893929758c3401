namespace Jackdaw.Server.Errors;

/// <summary>
/// A cluster operation cannot be done as asked: an unknown node tag, a node that cannot be added,
/// a replication factor larger than the cluster. The message says what to do instead.
/// </summary>
public sealed class ClusterException : Exception
{
    public ClusterException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
