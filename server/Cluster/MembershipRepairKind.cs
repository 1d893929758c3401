namespace Jackdaw.Server.Cluster;

/// <summary>What the leader does about a node that is in one of the two membership lists (the cluster's state, Raft's) and not the other.</summary>
public enum MembershipRepairKind
{
    /// <summary>Reserved in the state and already a Raft voter: commit <see cref="ClusterCommandKind.PutMember"/> (the add completes).</summary>
    CompleteAdd,

    /// <summary>Reserved in the state, not in Raft: add it to Raft and commit its member entry if it still waits as passive, else drop the reservation.</summary>
    ResumeAdd,

    /// <summary>A Raft voter with no tag in the state (an add never reserved, or a remove left half-way): remove it from Raft.</summary>
    RemoveVoter,

    /// <summary>A member of the state that Raft lacks: add it to Raft again.</summary>
    RestoreVoter,

    /// <summary>This node leads but the state names it neither member nor node being added (it was removed, and Raft not yet told): it steps down, so that a member leads and removes it.</summary>
    StepDown,
}
