using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// The leader's reconciliation of the two membership lists (<see cref="MembershipReconciler"/>):
/// every second while it leads, after the same repairs were planned for
/// <see cref="RepairAfter"/> (so that a leader just elected, still applying the log, or an add in
/// progress on another path, is not taken for a half-done change), and never during a change of
/// members on this node (<c>_membership</c>).
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>How long a mismatch must last on this leader before it is repaired.</summary>
    private static readonly TimeSpan RepairAfter = TimeSpan.FromSeconds(2);

    private Task _reconciling = Task.CompletedTask;

    private async Task ReconcileLoopAsync(CancellationToken token)
    {
        IReadOnlyList<MembershipRepair> seen = [];
        var seenSince = DateTime.UtcNow;
        while (!token.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(TimeSpan.FromSeconds(1), token).ConfigureAwait(false);
                var planned = IsLeader && _raft is { } raft && Url is { } self
                    ? MembershipReconciler.Plan(State, [.. raft.Members.Select(UrlOf)], self)
                    : [];
                if (!planned.SequenceEqual(seen))
                {
                    (seen, seenSince) = (planned, DateTime.UtcNow);
                    continue;
                }
                if (planned.Count == 0 || DateTime.UtcNow - seenSince < RepairAfter || !await _membership.WaitAsync(0, token).ConfigureAwait(false))
                {
                    continue;
                }
                try
                {
                    foreach (var repair in planned)
                    {
                        await RepairAsync(repair, token).ConfigureAwait(false);
                        LogRepaired(_logger, repair.Kind.ToString(), repair.Tag ?? "(none)", repair.Url);
                    }
                }
                finally
                {
                    _membership.Release();
                }
                (seen, seenSince) = ([], DateTime.UtcNow);
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // The next pass plans again from the lists as they are then.
                LogRepairFailed(_logger, e.Message);
                (seen, seenSince) = ([], DateTime.UtcNow);
            }
        }
    }

    /// <summary>Carries out one repair (under <c>_membership</c>, on the leader).</summary>
    private async Task RepairAsync(MembershipRepair repair, CancellationToken token)
    {
        LogRepair(_logger, repair.Kind.ToString(), repair.Tag ?? "(none)", repair.Url);
        switch (repair.Kind)
        {
            case MembershipRepairKind.CompleteAdd:
                await ExecuteAsync(new ClusterCommand($"repair/{ClusterCommand.NewId()}", ClusterCommandKind.PutMember) { Tag = repair.Tag, Url = repair.Url }, token).ConfigureAwait(false);
                break;
            case MembershipRepairKind.ResumeAdd:
                if (await IsPassiveAsync(repair.Url, token).ConfigureAwait(false) is (true, var thumbprint))
                {
                    await AddVoterAsync(repair.Url, token).ConfigureAwait(false);
                    await ExecuteAsync(new ClusterCommand($"repair/{ClusterCommand.NewId()}", ClusterCommandKind.PutMember) { Tag = repair.Tag, Url = repair.Url, Thumbprint = thumbprint }, token).ConfigureAwait(false);
                }
                else
                {
                    await ExecuteAsync(new ClusterCommand($"repair/{ClusterCommand.NewId()}", ClusterCommandKind.RemoveMember) { Tag = repair.Tag }, token).ConfigureAwait(false);
                }
                break;
            case MembershipRepairKind.RemoveVoter:
                await RemoveVoterAsync(repair.Url, token).ConfigureAwait(false);
                break;
            case MembershipRepairKind.RestoreVoter:
                await AddVoterAsync(repair.Url, token).ConfigureAwait(false);
                break;
            case MembershipRepairKind.StepDown:
                await _raft!.Cluster.ResignAsync(token).ConfigureAwait(false);
                break;
        }
    }

    /// <summary>Whether the node at <paramref name="url"/> answers as a passive node known by that URL, and its certificate's thumbprint.</summary>
    private async Task<(bool Passive, string? Thumbprint)> IsPassiveAsync(string url, CancellationToken token)
    {
        try
        {
            return (true, await CheckPassiveAsync(url, token).ConfigureAwait(false));
        }
        catch (ClusterException)
        {
            return (false, null);
        }
    }

    /// <summary>Makes the node at <paramref name="url"/> a Raft voter (caught up first), within 60 s; nothing when it is one.</summary>
    /// <exception cref="NotLeaderException">The leader changed.</exception>
    /// <exception cref="ClusterException">The node was not caught up within the 60 s.</exception>
    private async Task AddVoterAsync(string url, CancellationToken token)
    {
        var raft = _raft!;
        if (raft.Members.Any(m => ClusterUrls.Same(UrlOf(m), url)))
        {
            return;
        }
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token, _stopping.Token);
        timeout.CancelAfter(TimeSpan.FromSeconds(60));
        // DotNext gives up when the node has not caught up within its warm-up rounds, which a
        // loaded machine can take: the node answered as passive just before, so each refusal is
        // tried again, with a pause, until the 60 s are spent.
        var pause = TimeSpan.FromMilliseconds(250);
        while (true)
        {
            bool added;
            try
            {
                added = await raft.Cluster.AddMemberAsync(new Uri(url + "/"), timeout.Token).ConfigureAwait(false);
                if (!added && !raft.Members.Any(m => ClusterUrls.Same(UrlOf(m), url)))
                {
                    await Task.Delay(pause, timeout.Token).ConfigureAwait(false);
                    pause = TimeSpan.FromTicks(Math.Min(pause.Ticks * 2, TimeSpan.FromSeconds(4).Ticks));
                    continue;
                }
            }
            catch (DotNext.Net.Cluster.Consensus.Raft.NotLeaderException)
            {
                throw NotLeader();
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested && IsLeader && !_stopping.IsCancellationRequested)
            {
                // Still the leader: the 60 s passed without the node catching up.
                throw new ClusterException($"The node at {url} could not be caught up with the cluster's log within 60 s; check that it runs and that this node reaches it, then retry.");
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                // DotNext cancels it when the cluster elects a new leader.
                throw new NotLeaderException($"The node at {url} was not made a voter: the leader changed. Check /cluster/topology, then retry (the leader also completes the add itself).");
            }
            return;
        }
    }

    /// <summary>Takes the node at <paramref name="url"/> out of Raft's membership, within 30 s; nothing when it is not in it.</summary>
    private async Task RemoveVoterAsync(string url, CancellationToken token)
    {
        var raft = _raft!;
        if (!raft.Members.Any(m => ClusterUrls.Same(UrlOf(m), url)))
        {
            return;
        }
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token, _stopping.Token);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        bool removed;
        try
        {
            removed = await raft.Cluster.RemoveMemberAsync(new Uri(url + "/"), timeout.Token).ConfigureAwait(false);
        }
        catch (DotNext.Net.Cluster.Consensus.Raft.NotLeaderException)
        {
            throw NotLeader();
        }
        catch (OperationCanceledException) when (!token.IsCancellationRequested)
        {
            throw new NotLeaderException($"The node at {url} left the cluster's state but not yet Raft's membership: the leader changed, or it took over 30 s. The leader completes it; check /cluster/topology.");
        }
        if (!removed && raft.Members.Any(m => ClusterUrls.Same(UrlOf(m), url)))
        {
            throw new NotLeaderException($"The node at {url} left the cluster's state but Raft did not remove it yet; the leader completes it, check /cluster/topology.");
        }
    }

    [LoggerMessage(EventId = 706, Level = LogLevel.Warning, Message = "Membership repair: {Kind} of node {Tag} at {Url}")]
    private static partial void LogRepair(ILogger logger, string kind, string tag, string url);

    [LoggerMessage(EventId = 708, Level = LogLevel.Information, Message = "Membership repaired: {Kind} of node {Tag} at {Url}")]
    private static partial void LogRepaired(ILogger logger, string kind, string tag, string url);

    [LoggerMessage(EventId = 707, Level = LogLevel.Warning, Message = "A membership repair failed (tried again): {Error}")]
    private static partial void LogRepairFailed(ILogger logger, string error);
}
