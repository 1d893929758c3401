using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// A periodic backup task of a clustered database, in real processes: its configuration is in the
/// database's record, one node (its responsible node, chosen by the cluster) runs it and records its
/// status in the cluster; when that node is killed another takes the task over, and its first run is
/// a snapshot (a chain of its own, named after its tag).
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class ClusterBackupTests(ITestOutputHelper output)
{
    private const string Database = "Orders";

    [Fact]
    public async Task APeriodicBackupTaskRunsOnItsResponsibleNodeAloneAndAfterThatNodeIsKilledAnotherTakesItOverWithASnapshot()
    {
        await using var cluster = await TestCluster.StartAsync(3);
        try
        {
            await RunsOnItsResponsibleNodeAsync(cluster);
        }
        catch
        {
            foreach (var node in cluster.Nodes)
            {
                output.WriteLine($"--- {node.Url}:\n" + string.Join("\n", node.Output.Split('\n').Where(l => l.Contains("ackup", StringComparison.Ordinal) || l.Contains("fail", StringComparison.OrdinalIgnoreCase))));
            }
            throw;
        }
    }

    private async Task RunsOnItsResponsibleNodeAsync(TestCluster cluster)
    {
        await CreateDatabaseAsync(cluster);
        using var folder = new TempFolder("jackdaw-cluster-backups");
        using (var written = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/databases/{Database}/docs?id=orders/1", Body("""{"Total":1,"@metadata":{"@collection":"Orders"}}""")))
        {
            Assert.True(written.IsSuccessStatusCode);
        }

        // Created through a node that does not lead (passed on to the leader); a yearly snapshot, so that only run-now runs it.
        var leader = await cluster.WaitForLeaderAsync();
        var follower = cluster.Nodes.First(n => n != leader);
        long taskId;
        using (var created = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/admin/periodic-backup", Body(Configuration(folder.Path))))
        {
            var body = await created.Content.ReadAsStringAsync();
            Assert.True(created.IsSuccessStatusCode, body);
            using var json = JsonDocument.Parse(body);
            taskId = json.RootElement.GetProperty("TaskId").GetInt64();
            Assert.True(json.RootElement.GetProperty("RaftCommandIndex").GetInt64() >= taskId);
        }

        // Every node knows the task, with the same responsible node.
        var responsible = await ResponsibleAsync(cluster, follower, taskId) ?? throw new InvalidOperationException("The task has no responsible node.");
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => await ResponsibleAsync(cluster, node, taskId) == responsible, TestCluster.Timeout, $"the task on {node.Url}");
        }
        var responsibleNode = cluster.NodeByTag(responsible);
        output.WriteLine($"task {taskId} runs on {responsible}; leader {leader.Url}");

        // Run now through a node that does not run it: passed on, the operation is the responsible node's.
        var other = cluster.Nodes.First(n => n != responsibleNode);
        Assert.Equal(responsible, await RunNowAsync(cluster, other, taskId));
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => await StatusAsync(cluster, node, taskId) is { } s && s.NodeTag == responsible && s.LastFullBackup is not null,
                TestCluster.Timeout, $"the status of the run on {node.Url}");
        }
        // Only the responsible node wrote files: chain folders carry the tag of the node that wrote them.
        Assert.Equal([responsible], ChainTags(folder.Path));

        responsibleNode.Kill();
        var survivor = cluster.Nodes.First(n => n != responsibleNode);
        string? next = null;
        await Poll.UntilAsync(async () => (next = await ResponsibleAsync(cluster, survivor, taskId)) is { } tag && tag != responsible, TestCluster.Timeout, "another node to take the task over");
        foreach (var node in cluster.Nodes.Where(n => n != responsibleNode))
        {
            await Poll.UntilAsync(async () => await ResponsibleAsync(cluster, node, taskId) == next, TestCluster.Timeout, $"the move on {node.Url}");
        }
        output.WriteLine($"task {taskId} moved to {next}");

        // An incremental asked of the new node is a snapshot: it cannot add to another node's chain.
        string? ran = null;
        await Poll.UntilAsync(async () => (ran = await RunNowAsync(cluster, survivor, taskId, full: false)) is not null, TestCluster.Timeout, "a run on the new node");
        Assert.Equal(next, ran);
        foreach (var node in cluster.Nodes.Where(n => n != responsibleNode))
        {
            await Poll.UntilAsync(async () => await StatusAsync(cluster, node, taskId) is { } s && s.NodeTag == next && s.IsFull,
                TestCluster.Timeout, $"the new node's status on {node.Url}");
        }
        Assert.Equal(new[] { responsible, next! }.Order(StringComparer.Ordinal), ChainTags(folder.Path));
    }

    [Fact]
    public async Task ABadBackupConfigurationSentToAFollowerIsA400AndNothingIsCommitted()
    {
        await using var cluster = await TestCluster.StartAsync(2);
        await CreateDatabaseAsync(cluster);
        var leader = await cluster.WaitForLeaderAsync();
        var follower = cluster.Nodes.First(n => n != leader);
        using var folder = new TempFolder("jackdaw-cluster-backups");
        var etag = await EtagAsync(cluster, leader);

        (string Body, string Says)[] bad =
        [
            (Configuration(folder.Path).Replace("0 0 1 1 *", "every day", StringComparison.Ordinal), "FullBackupFrequency"),
            (Configuration("relative/folder"), "not an absolute path"),
            (Configuration(folder.Path, mentor: "Z"), "MentorNode 'Z'"),
            (Configuration(folder.Path, taskId: 999), "no periodic backup task 999"),
            ("{\"Name\":", "not valid JSON"),
        ];
        foreach (var (body, says) in bad)
        {
            using var response = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/admin/periodic-backup", Body(body));
            var answer = await response.Content.ReadAsStringAsync();
            Assert.True(response.StatusCode == HttpStatusCode.BadRequest, $"{(int)response.StatusCode} {answer}");
            Assert.Contains(says, answer, StringComparison.Ordinal);
        }
        using (var toggle = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/admin/tasks/state?key=999&type=Backup&disable=true", null))
        {
            Assert.Equal(HttpStatusCode.BadRequest, toggle.StatusCode);
        }
        using (var delete = await cluster.Http.DeleteAsync($"{follower.Url}/databases/{Database}/admin/tasks?id=999&type=Backup"))
        {
            Assert.Equal(HttpStatusCode.BadRequest, delete.StatusCode);
        }

        // Nothing reached the log: the state's etag did not move, and no node has a task.
        Assert.Equal(etag, await EtagAsync(cluster, leader));
        foreach (var node in cluster.Nodes)
        {
            using var tasks = JsonDocument.Parse(await cluster.Http.GetStringAsync($"{node.Url}/databases/{Database}/tasks"));
            Assert.Empty(tasks.RootElement.GetProperty("OngoingTasksList").EnumerateArray());
        }

        // A good one through the follower, then disabled there: every node sees it disabled.
        long taskId;
        using (var created = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/admin/periodic-backup", Body(Configuration(folder.Path))))
        {
            using var json = JsonDocument.Parse(await created.Content.ReadAsStringAsync());
            taskId = json.RootElement.GetProperty("TaskId").GetInt64();
        }
        using (var toggle = await cluster.Http.PostAsync($"{follower.Url}/databases/{Database}/admin/tasks/state?key={taskId}&type=Backup&disable=true", null))
        {
            var answer = await toggle.Content.ReadAsStringAsync();
            Assert.True(toggle.IsSuccessStatusCode, answer);
            Assert.Contains("\"ResponsibleNode\"", answer, StringComparison.Ordinal);
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () =>
            {
                using var task = JsonDocument.Parse(await cluster.Http.GetStringAsync($"{node.Url}/databases/{Database}/task?key={taskId}&type=Backup"));
                return task.RootElement.GetProperty("TaskState").GetString() == "Disabled";
            }, TestCluster.Timeout, $"the task disabled on {node.Url}");
        }
    }

    [Fact]
    public async Task ALoneServersBackupTasksGoIntoTheRecordWhenItFoundsAClusterAndEveryNodeSeesThem()
    {
        await using var cluster = await TestCluster.StartAsync(2, form: false);
        var (a, b) = (cluster.Nodes[0], cluster.Nodes[1]);
        using var folder = new TempFolder("jackdaw-cluster-backups");
        using (var created = await cluster.Http.PutAsync($"{a.Url}/admin/databases?name={Database}", null))
        {
            Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        }
        using (var task = await cluster.Http.PostAsync($"{a.Url}/databases/{Database}/admin/periodic-backup", Body(Configuration(folder.Path))))
        {
            // A lone server's ids count from 1 in the database.
            Assert.Contains("\"TaskId\":1", await task.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        }
        Assert.Equal("A", await RunNowAsync(cluster, a, 1));
        await Poll.UntilAsync(async () => await StatusAsync(cluster, a, 1) is { LastFullBackup: not null }, TestCluster.Timeout, "the lone run");

        using (var added = await cluster.Http.PutAsync($"{a.Url}/admin/cluster/node?url={Uri.EscapeDataString(b.Url)}&tag=B", null))
        {
            Assert.True(added.IsSuccessStatusCode, await added.Content.ReadAsStringAsync());
        }
        await Poll.UntilAsync(async () => (await cluster.TopologyAsync(b)) is { } t && t.GetProperty("NodeTag").GetString() == "B", TestCluster.Timeout, "B to learn its tag");
        using (var node = await cluster.Http.PutAsync($"{a.Url}/admin/databases/node?name={Database}&node=B", null))
        {
            Assert.True(node.IsSuccessStatusCode, await node.Content.ReadAsStringAsync());
        }

        // The task is the record's now, with a cluster-wide id (a log index), run by A, its status kept.
        long taskId = 0;
        await Poll.UntilAsync(async () =>
        {
            using var tasks = JsonDocument.Parse(await cluster.Http.GetStringAsync($"{a.Url}/databases/{Database}/tasks"));
            var list = tasks.RootElement.GetProperty("OngoingTasksList").EnumerateArray().ToList();
            taskId = list.Count == 1 ? list[0].GetProperty("TaskId").GetInt64() : 0;
            return taskId > 1;
        }, TestCluster.Timeout, "the founder's task in the record");
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains(Database) && await ResponsibleAsync(cluster, node, taskId) == "A", TestCluster.Timeout, $"the task on {node.Url}");
            await Poll.UntilAsync(async () => await StatusAsync(cluster, node, taskId) is { NodeTag: "A", LastFullBackup: not null }, TestCluster.Timeout, $"the founder's status on {node.Url}");
        }
        // Deleted through B (passed on to the leader): gone from every node.
        using (var deleted = await cluster.Http.DeleteAsync($"{b.Url}/databases/{Database}/admin/tasks?id={taskId}&type=Backup"))
        {
            Assert.True(deleted.IsSuccessStatusCode, await deleted.Content.ReadAsStringAsync());
        }
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => await ResponsibleAsync(cluster, node, taskId) is null, TestCluster.Timeout, $"the task deleted on {node.Url}");
        }
    }

    private static string Configuration(string folder, string? mentor = null, long taskId = 0) =>
        JsonSerializer.Serialize(new
        {
            TaskId = taskId,
            Name = "nightly",
            BackupType = "Snapshot",
            FullBackupFrequency = "0 0 1 1 *",
            LocalSettings = new { FolderPath = folder },
            MentorNode = mentor,
        });

    private static async Task CreateDatabaseAsync(TestCluster cluster)
    {
        using var created = await cluster.Http.PutAsync($"{cluster.Nodes[0].Url}/admin/databases?name={Database}&replicationFactor={cluster.Nodes.Count}", null);
        Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync());
        foreach (var node in cluster.Nodes)
        {
            await Poll.UntilAsync(async () => (await cluster.DatabasesOnAsync(node)).Contains(Database), TestCluster.Timeout, $"{Database} on {node.Url}");
        }
    }

    private static async Task<long> EtagAsync(TestCluster cluster, ClusterNodeProcess node) =>
        (await cluster.TopologyAsync(node))?.GetProperty("Etag").GetInt64() ?? throw new InvalidOperationException($"{node.Url} did not answer.");

    /// <summary>The task's <c>ResponsibleNode.NodeTag</c> in the node's <c>/databases/*/tasks</c>; null when it does not answer or lacks the task.</summary>
    private static async Task<string?> ResponsibleAsync(TestCluster cluster, ClusterNodeProcess node, long taskId)
    {
        try
        {
            using var json = JsonDocument.Parse(await cluster.Http.GetStringAsync($"{node.Url}/databases/{Database}/tasks"));
            foreach (var task in json.RootElement.GetProperty("OngoingTasksList").EnumerateArray())
            {
                if (task.GetProperty("TaskId").GetInt64() == taskId)
                {
                    var responsible = task.GetProperty("ResponsibleNode");
                    Assert.False(string.IsNullOrEmpty(responsible.GetProperty("NodeUrl").GetString()));
                    return responsible.GetProperty("NodeTag").GetString();
                }
            }
            return null;
        }
        catch (HttpRequestException)
        {
            return null;
        }
    }

    /// <summary>RavenDB's <c>StartBackupOperation</c>: the answer's <c>ResponsibleNode</c>; null on a 503 (the node it would go to is down).</summary>
    private static async Task<string?> RunNowAsync(TestCluster cluster, ClusterNodeProcess node, long taskId, bool full = true)
    {
        using var response = await cluster.Http.PostAsync($"{node.Url}/databases/{Database}/admin/backup/database?isFullBackup={(full ? "true" : "false")}&taskId={taskId}", null);
        var body = await response.Content.ReadAsStringAsync();
        if (response.StatusCode == HttpStatusCode.ServiceUnavailable)
        {
            return null;
        }
        Assert.True(response.IsSuccessStatusCode, body);
        using var json = JsonDocument.Parse(body);
        Assert.True(json.RootElement.GetProperty("OperationId").GetInt64() > 0);
        return json.RootElement.GetProperty("ResponsibleNode").GetString();
    }

    private sealed record Status(string? NodeTag, string? LastFullBackup, bool IsFull);

    private static async Task<Status?> StatusAsync(TestCluster cluster, ClusterNodeProcess node, long taskId)
    {
        using var json = JsonDocument.Parse(await cluster.Http.GetStringAsync($"{node.Url}/periodic-backup/status?name={Database}&taskId={taskId}"));
        var status = json.RootElement.GetProperty("Status");
        return status.ValueKind == JsonValueKind.Null
            ? null
            : new Status(status.GetProperty("NodeTag").GetString(), status.GetProperty("LastFullBackup").GetString(), status.GetProperty("IsFull").GetBoolean());
    }

    /// <summary>The tags in the names of the chain folders (<c>{date}.jackdaw-Orders-{tag}-snapshot</c>) in the task's folder.</summary>
    private static List<string> ChainTags(string folder) =>
        [.. Directory.EnumerateDirectories(folder, $"*.jackdaw-{Database}-*-snapshot")
            .Select(f => Path.GetFileName(f).Split('-')[^2])
            .Distinct()
            .Order(StringComparer.Ordinal)];

    private static StringContent Body(string json) => new(json, Encoding.UTF8, "application/json");
}
