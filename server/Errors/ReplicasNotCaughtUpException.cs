namespace Jackdaw.Server.Errors;

/// <summary>
/// A batch that asked to wait for replicas (<c>waitForReplicasTimeout</c>,
/// <c>numberOfReplicasToWaitFor</c>, <c>throwOnTimeoutInWaitForReplicas</c>) was saved here, but
/// fewer other nodes than asked held it in time. Answered 408 with RavenDB's type name,
/// <c>TimeoutException</c>, as RavenDB answers it.
/// </summary>
public sealed class ReplicasNotCaughtUpException : Exception
{
    public ReplicasNotCaughtUpException(string message)
        : base(message)
    {
    }
}
