using System.Net;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>A change of members stopped half-way by the leader's death: the next leader completes it.</summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterMembershipProcessTests
{
    [Fact]
    public async Task ANodeTheKilledLeaderRemovedFromTheStateButNotFromRaftIsRemovedByTheNextLeader()
    {
        await using var cluster = await TestCluster.StartAsync(4);
        var (a, b, c, d) = (cluster.Nodes[0], cluster.Nodes[1], cluster.Nodes[2], cluster.Nodes[3]);
        // C paused: A commits C's removal, then waits (up to 10 s) for C to apply it before taking
        // it out of Raft. A dies meanwhile: C is left a voter that the state has no tag for.
        c.Pause();
        var pending = cluster.Http.DeleteAsync($"{a.Url}/admin/cluster/node?nodeTag=C");
        await Poll.UntilAsync(async () => (await cluster.TopologyAsync(b)) is { } t && !t.GetProperty("Topology").GetProperty("Members").TryGetProperty("C", out _),
            TestCluster.Timeout, "C's removal committed");
        a.Kill();
        try
        {
            using var answer = await pending;
        }
        catch (HttpRequestException)
        {
            // A died before it answered.
        }

        // Four voters, A dead: B and D need C's vote for a leader. Whichever wins, a member ends up
        // leading (C, elected, steps down) and takes C out of Raft.
        c.Resume();
        var leader = await cluster.WaitForLeaderAsync(not: a);
        Assert.True(leader == b || leader == d, $"the leader is {leader.Url}");

        await Poll.UntilAsync(() => Task.FromResult(new[] { b, d }.Any(n => n.Output.Contains($"Membership repaired: RemoveVoter of node (none) at {c.Url}", StringComparison.Ordinal))),
            TestCluster.Timeout, "the leader to take C out of Raft");

        // Out of Raft, C is not needed for a majority: B and D are two of the three voters left (were
        // C still a voter, two of four could commit nothing).
        c.Pause();
        var last = "";
        try
        {
            await Poll.UntilAsync(async () =>
            {
                using var attempt = new CancellationTokenSource(TimeSpan.FromSeconds(15));
                try
                {
                    using var created = await cluster.Http.PutAsync($"{b.Url}/admin/databases?name=WithoutC&replicationFactor=2&raft-request-id=without-c", null, attempt.Token);
                    last = $"{(int)created.StatusCode} {await created.Content.ReadAsStringAsync()}";
                    return created.StatusCode == HttpStatusCode.Created;
                }
                catch (TaskCanceledException)
                {
                    last = "no answer in 15 s";
                    return false;
                }
            }, TestCluster.Timeout, "B and D to commit without C");
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} Last answer: {last}\nB:\n{b.Output}\nD:\n{d.Output}", e);
        }
        var topology = (await cluster.TopologyAsync(d))!.Value.GetProperty("Topology");
        Assert.Equal(["A", "B", "D"], topology.GetProperty("Members").EnumerateObject().Select(m => m.Name));
        Assert.Empty(topology.GetProperty("Promotables").EnumerateObject());
    }
}
