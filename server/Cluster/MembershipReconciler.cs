namespace Jackdaw.Server.Cluster;

/// <summary>
/// Compares the two membership lists a change of members writes, one after the other: the
/// cluster's state (members and reservations, <see cref="ClusterState.Joining"/>) and Raft's
/// configuration. An add reserves the tag, then makes the node a Raft voter, then commits it as a
/// member; a remove takes it out of the state, then out of Raft. A failure between two steps (the
/// leader killed, a timeout) leaves a node in one list and not the other; the leader plans the
/// repairs here (a pure function) and carries them out (<c>ClusterNode.Reconciliation.cs</c>).
/// </summary>
public static class MembershipReconciler
{
    /// <param name="state">The cluster's state as the leader applied it.</param>
    /// <param name="voters">The URLs of Raft's members, the leader's own among them.</param>
    /// <param name="self">The leader's own URL: never repaired but by stepping down (a founder has no members yet, then itself).</param>
    public static IReadOnlyList<MembershipRepair> Plan(ClusterState state, IReadOnlyCollection<string> voters, string self)
    {
        var repairs = new List<MembershipRepair>();
        if (!state.Members.IsEmpty && state.TagOf(self) is null && state.JoiningTagOf(self) is null)
        {
            // Removed from the state while still a voter, and elected: only a member can repair it.
            return [new MembershipRepair(MembershipRepairKind.StepDown, null, self)];
        }
        bool IsVoter(string url) => voters.Any(v => ClusterUrls.Same(v, url));
        foreach (var (tag, url) in state.Joining)
        {
            if (state.Members.ContainsKey(tag))
            {
                continue;
            }
            repairs.Add(new MembershipRepair(IsVoter(url) ? MembershipRepairKind.CompleteAdd : MembershipRepairKind.ResumeAdd, tag, url));
        }
        foreach (var (tag, url) in state.Members)
        {
            if (!ClusterUrls.Same(url, self) && !IsVoter(url))
            {
                repairs.Add(new MembershipRepair(MembershipRepairKind.RestoreVoter, tag, url));
            }
        }
        foreach (var url in voters)
        {
            if (!ClusterUrls.Same(url, self) && state.TagOf(url) is null && state.JoiningTagOf(url) is null)
            {
                repairs.Add(new MembershipRepair(MembershipRepairKind.RemoveVoter, null, url));
            }
        }
        return repairs;
    }
}
