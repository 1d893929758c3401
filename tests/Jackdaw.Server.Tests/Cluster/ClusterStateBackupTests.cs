using Jackdaw.Server.Backup;
using Jackdaw.Server.Cluster;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateBackupTests
{
    private const string Nightly = """{"TaskId":0,"Name":"nightly","BackupType":"Snapshot","FullBackupFrequency":"0 2 * * *","LocalSettings":{"FolderPath":"/backups"}}""";

    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return after;
    }

    private static string Refused(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Same(state.Databases, after.Databases);
        return Assert.IsType<string>(refused);
    }

    private static ClusterState WithDatabase(params string[] nodes)
    {
        var state = ClusterState.Empty;
        var index = 1;
        foreach (var tag in (string[])["A", "B", "C"])
        {
            state = Apply(state, index++, new ClusterCommand("m" + tag, ClusterCommandKind.PutMember) { Tag = tag, Url = $"http://127.0.0.1:{index}" });
        }
        return Apply(state, 10, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = nodes.Length == 0 ? ["A", "B", "C"] : nodes });
    }

    private static ClusterCommand Put(string id, long taskId = 0, string? mentor = null, bool pinned = false, string? responsible = null, IReadOnlyList<string>? avoid = null) =>
        new(id, ClusterCommandKind.PutBackupTask)
        {
            Database = "orders",
            Backup = new ClusterBackupChange(taskId) { Name = "nightly", Configuration = Nightly, MentorNode = mentor, PinToMentorNode = pinned, ResponsibleNode = responsible, Avoid = avoid },
        };

    private static ClusterCommand Command(string id, ClusterCommandKind kind, ClusterBackupChange change) => new(id, kind) { Database = "Orders", Backup = change };

    [Fact]
    public void ABackupTaskIsCreatedWithTheCommandsLogIndexAsItsIdThenReplacedToggledAndDeleted()
    {
        var state = Apply(WithDatabase(), 11, Put("p1"));
        var task = Assert.Single(state.Databases["Orders"].Backups.Values);
        Assert.Equal((11L, "nightly", Nightly, "p1", false), (task.TaskId, task.Name, task.Configuration, task.CreatedBy, task.Disabled));
        Assert.Contains(task.ResponsibleNode, (string[])["A", "B", "C"]);
        Assert.Equal(11, state.Etag);

        // A second task gets its own id, unique in the cluster.
        state = Apply(state, 12, Put("p2"));
        Assert.Equal([11L, 12L], state.Databases["Orders"].Backups.Keys);

        var status = new PeriodicBackupStatus { TaskId = 11, NodeTag = task.ResponsibleNode, LastEtag = 7, LastFullBackupInternal = new DateTime(2026, 1, 1, 2, 0, 0, DateTimeKind.Utc) };
        state = Apply(state, 13, Command("s1", ClusterCommandKind.UpdateBackupStatus, new ClusterBackupChange(11) { Status = status }));
        state = Apply(state, 14, Put("r1", taskId: 11) with { Backup = Put("r1", taskId: 11).Backup! with { Configuration = Nightly.Replace("0 2", "0 3", StringComparison.Ordinal), Name = "later" } });
        task = state.Databases["Orders"].Backups[11];
        // Replaced: the id, the node, the creating command and the status stay.
        Assert.Equal(("later", "p1", status), (task.Name, task.CreatedBy, task.Status));
        Assert.Contains("0 3", task.Configuration, StringComparison.Ordinal);

        state = Apply(state, 15, Command("t1", ClusterCommandKind.SetBackupTaskDisabled, new ClusterBackupChange(11) { Disabled = true }));
        Assert.True(state.Databases["Orders"].Backups[11].Disabled);
        state = Apply(state, 16, Command("t2", ClusterCommandKind.SetBackupTaskDisabled, new ClusterBackupChange(11) { Disabled = false }));
        Assert.False(state.Databases["Orders"].Backups[11].Disabled);

        state = Apply(state, 17, Command("d1", ClusterCommandKind.DeleteBackupTask, new ClusterBackupChange(11)));
        Assert.Equal([12L], state.Databases["Orders"].Backups.Keys);
        Assert.Equal(17, state.Etag);
    }

    [Fact]
    public void ABackupCommandRetriedWithItsIdIsAppliedOnce()
    {
        var put = Put("p1");
        var state = Apply(WithDatabase(), 11, put);
        var again = Apply(state, 12, put);
        Assert.Same(state, again);
        Assert.Single(again.Databases["Orders"].Backups);

        state = Apply(state, 13, Command("d1", ClusterCommandKind.DeleteBackupTask, new ClusterBackupChange(11)));
        // The delete retried after a lost answer changes nothing (no refusal either).
        Assert.Same(state, Apply(state, 14, Command("d1", ClusterCommandKind.DeleteBackupTask, new ClusterBackupChange(11))));
    }

    [Fact]
    public void BackupCommandsThatDoNotFitAreRefusedAlikeOnEveryNode()
    {
        var state = Apply(WithDatabase("A", "B"), 11, Put("p1"));
        Assert.Contains("no periodic backup task 99", Refused(state, 12, Put("r", taskId: 99)), StringComparison.Ordinal);
        Assert.Contains("no periodic backup task 99", Refused(state, 12, Command("d", ClusterCommandKind.DeleteBackupTask, new ClusterBackupChange(99))), StringComparison.Ordinal);
        Assert.Contains("MentorNode 'C'", Refused(state, 12, Put("m", mentor: "C")), StringComparison.Ordinal);
        Assert.Contains("does not exist", Refused(state, 12, Put("x") with { Database = "Nope" }), StringComparison.Ordinal);
        Assert.Contains("Node C does not hold", Refused(state, 12, Command("mv", ClusterCommandKind.SetBackupResponsibleNode, new ClusterBackupChange(11) { ResponsibleNode = "C" })), StringComparison.Ordinal);
        // A status from a node that no longer runs the task does not overwrite its successor's.
        var responsible = state.Databases["Orders"].Backups[11].ResponsibleNode;
        var other = responsible == "A" ? "B" : "A";
        Assert.Contains($"Node {other} no longer runs", Refused(state, 12, Command("s", ClusterCommandKind.UpdateBackupStatus, new ClusterBackupChange(11) { Status = new PeriodicBackupStatus { NodeTag = other } })), StringComparison.Ordinal);
    }

    [Fact]
    public void TheResponsibleNodeIsTheMentorWhenUpElseAStableHashChoiceThatSkipsNodesDown()
    {
        string[] nodes = ["A", "B", "C"];
        // The same id always gets the same node; ids spread over the nodes.
        var chosen = Enumerable.Range(1, 30).Select(id => ClusterState.ChooseBackupNode(id, null, false, nodes, _ => true)).ToList();
        Assert.Equal(chosen, Enumerable.Range(1, 30).Select(id => ClusterState.ChooseBackupNode(id, null, false, ["C", "A", "B"], _ => true)));
        Assert.Equal(3, chosen.Distinct().Count());
        // A node down is skipped.
        var first = ClusterState.ChooseBackupNode(5, null, false, nodes, _ => true);
        Assert.NotEqual(first, ClusterState.ChooseBackupNode(5, null, false, nodes, n => n != first));
        // The mentor while it is up; pinned, even while it is down.
        Assert.Equal("C", ClusterState.ChooseBackupNode(5, "C", false, nodes, _ => true));
        Assert.NotEqual("C", ClusterState.ChooseBackupNode(5, "C", false, nodes, n => n != "C"));
        Assert.Equal("C", ClusterState.ChooseBackupNode(5, "C", true, nodes, n => n != "C"));

        // Applied: the leader's choice (a mentor) is kept; a create skips the nodes the leader saw down.
        var state = Apply(WithDatabase(), 11, Put("p1", mentor: "B", responsible: "B"));
        Assert.Equal(("B", "B"), (state.Databases["Orders"].Backups[11].ResponsibleNode, state.Databases["Orders"].Backups[11].MentorNode));
        var hashed = ClusterState.ChooseBackupNode(12, null, false, nodes, _ => true);
        state = Apply(state, 12, Put("p2", avoid: [hashed]));
        Assert.NotEqual(hashed, state.Databases["Orders"].Backups[12].ResponsibleNode);
    }

    [Fact]
    public void ATaskMovesWhenTheLeaderSaysSoAndWhenItsNodeLeavesTheDatabase()
    {
        var state = Apply(WithDatabase(), 11, Put("p1", responsible: "A"));
        Assert.Equal("A", state.Databases["Orders"].Backups[11].ResponsibleNode);
        state = Apply(state, 12, Command("mv", ClusterCommandKind.SetBackupResponsibleNode, new ClusterBackupChange(11) { ResponsibleNode = "C" }));
        Assert.Equal("C", state.Databases["Orders"].Backups[11].ResponsibleNode);

        // Node C removed from the database: the task goes to one of the others, alike on every node.
        var removed = Apply(state, 13, new ClusterCommand("x", ClusterCommandKind.DeleteDatabase) { Database = "Orders", Nodes = ["C"] });
        var next = removed.Databases["Orders"].Backups[11].ResponsibleNode;
        Assert.Equal(ClusterState.ChooseBackupNode(11, null, false, ["A", "B"], _ => true), next);
        // And a member removed from the cluster likewise.
        var gone = Apply(state, 13, new ClusterCommand("rm", ClusterCommandKind.RemoveMember) { Tag = "C" });
        Assert.Equal(next, gone.Databases["Orders"].Backups[11].ResponsibleNode);

        // A status update from the new responsible node is stored with its node, for the node that takes over next.
        var status = new PeriodicBackupStatus { TaskId = 11, NodeTag = next, IsFull = true, FolderName = "/backups/x.jackdaw-Orders-" + next + "-snapshot" };
        gone = Apply(gone, 14, Command("s", ClusterCommandKind.UpdateBackupStatus, new ClusterBackupChange(11) { Status = status }));
        Assert.Equal(status, gone.Databases["Orders"].Backups[11].Status);
        // Statuses (one per run) are not remembered as applied ids, as acknowledgements are not.
        Assert.False(gone.WasApplied("s"));
    }

    [Fact]
    public void BackupTasksSurviveASnapshotAndAnOlderSnapshotWithoutThemStillReads()
    {
        var state = Apply(WithDatabase(), 11, Put("p1", mentor: "B", pinned: true, responsible: "B"));
        var status = new PeriodicBackupStatus { TaskId = 11, NodeTag = "B", LastEtag = 42, LastFullBackup = new DateTime(2026, 1, 1, 2, 0, 0, DateTimeKind.Utc), FolderName = "/backups/f" };
        state = Apply(state, 12, Command("s", ClusterCommandKind.UpdateBackupStatus, new ClusterBackupChange(11) { Status = status }));
        state = Apply(state, 13, Command("t", ClusterCommandKind.SetBackupTaskDisabled, new ClusterBackupChange(11) { Disabled = true }));

        var read = ClusterState.FromJson(state.ToJson());
        var task = read.Databases["Orders"].Backups[11];
        Assert.Equal(state.Databases["Orders"].Backups[11], task);
        Assert.Equal(("B", true, true, status), (task.MentorNode, task.PinToMentorNode, task.Disabled, task.Status));
        Assert.True(read.WasApplied("p1"));

        // A snapshot written before backup tasks were in the state: its records have none.
        var older = """{"Members":{"A":"http://127.0.0.1:1"},"Databases":[{"Name":"Orders","Nodes":["A"],"TopologyEtag":2,"Settings":{},"CreatedIndex":2}],"AppliedIds":["m1","db"],"Etag":2}""";
        var old = ClusterState.FromJson(System.Text.Encoding.UTF8.GetBytes(older));
        Assert.Empty(old.Databases["Orders"].Backups);
        Assert.Single(Apply(old, 3, Put("p1")).Databases["Orders"].Backups);
    }

    [Fact]
    public void TheLeaderMovesATaskOffANodeDownAtOnceButBackToItsMentorOnlyAfterTheRunInProgress()
    {
        string[] nodes = ["A", "B", "C"];
        var onA = new ClusterBackupTask(5, "nightly", Nightly, "A");
        bool None(string tag) => false;

        // Its node answers: it stays.
        Assert.Null(ClusterState.PlanBackupMove(onA, nodes, None, _ => true));
        // Its node down: another node at once (the node cannot be asked about a run).
        var (next, waits) = ClusterState.PlanBackupMove(onA, nodes, n => n == "A", n => n != "A")!.Value;
        Assert.NotEqual("A", next);
        Assert.False(waits);
        // Pinned to its mentor: it waits for it.
        Assert.Null(ClusterState.PlanBackupMove(onA with { MentorNode = "A", PinToMentorNode = true }, nodes, n => n == "A", n => n != "A"));

        // Its mentor C answers again while B runs it: back to C, after B's run (B answers).
        var onB = onA with { ResponsibleNode = "B", MentorNode = "C" };
        Assert.Equal(("C", true), ClusterState.PlanBackupMove(onB, nodes, None, _ => true));
        // The mentor not answering yet: it stays on B.
        Assert.Null(ClusterState.PlanBackupMove(onB, nodes, None, n => n != "C"));
        // B down meanwhile: to C at once.
        Assert.Equal(("C", false), ClusterState.PlanBackupMove(onB, nodes, n => n == "B", n => n != "B"));
    }
}
