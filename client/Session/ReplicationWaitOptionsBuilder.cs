namespace Jackdaw.Client;

/// <summary>
/// The options of <see cref="IAdvancedSessionOperations.WaitForReplicationAfterSaveChanges(Action{ReplicationWaitOptionsBuilder})"/>,
/// as RavenDB's Java and Node.js clients' <c>ReplicationWaitOptsBuilder</c>: a timeout (the
/// conventions' by default), whether a timeout throws (yes by default), and one replica or a majority.
/// </summary>
public sealed class ReplicationWaitOptionsBuilder
{
    internal TimeSpan? Timeout { get; private set; }

    internal bool ThrowOnTimeoutValue { get; private set; } = true;

    internal int Replicas { get; private set; } = 1;

    internal bool MajorityValue { get; private set; }

    public ReplicationWaitOptionsBuilder WithTimeout(TimeSpan timeout)
    {
        Timeout = timeout;
        return this;
    }

    public ReplicationWaitOptionsBuilder ThrowOnTimeout(bool shouldThrow)
    {
        ThrowOnTimeoutValue = shouldThrow;
        return this;
    }

    public ReplicationWaitOptionsBuilder NumberOfReplicas(int replicas)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(replicas);
        Replicas = replicas;
        return this;
    }

    public ReplicationWaitOptionsBuilder Majority(bool waitForMajority)
    {
        MajorityValue = waitForMajority;
        return this;
    }
}
