using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// The backup routes on the real server: periodic tasks (create, status, task info, delete), their
/// refusals, restore and verify refusals, the server's operations, and backups end to end (those
/// need the core's <c>DatabaseBackups</c> and <c>DatabaseRestore</c>).
/// </summary>
public sealed class PeriodicBackupRoutesTests(ServerFixture fixture) : IClassFixture<ServerFixture>, IDisposable
{
    private readonly TempFolder _backups = new("jackdaw-backup-routes");

    private HttpClient Client => fixture.Client;

    private string Configuration(string full = "0 2 * * *", string? folder = null, long taskId = 0) => JsonSerializer.Serialize(new Dictionary<string, object?>
    {
        ["TaskId"] = taskId,
        ["Name"] = "nightly",
        ["BackupType"] = "Snapshot",
        ["FullBackupFrequency"] = full,
        ["IncrementalBackupFrequency"] = "0 * * * *",
        ["LocalSettings"] = new Dictionary<string, object?> { ["FolderPath"] = folder ?? _backups.Path },
        ["RetentionPolicy"] = new Dictionary<string, object?> { ["Disabled"] = false, ["MinimumBackupAgeToKeep"] = "14.00:00:00" },
    });

    private async Task<long> CreateTaskAsync(string db)
    {
        using var response = await Client.PostAsync($"/databases/{db}/admin/periodic-backup", Api.Json(Configuration()));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        var taskId = body.GetProperty("TaskId").GetInt64();
        Assert.Equal(taskId, body.GetProperty("RaftCommandIndex").GetInt64());
        return taskId;
    }

    [Fact]
    public async Task ALoneServersTaskIsDisabledAndEnabledAgainAsRavenDBsToggleAsks()
    {
        var db = await fixture.CreateDatabaseAsync();
        var taskId = await CreateTaskAsync(db);

        using (var disabled = await Client.PostAsync($"/databases/{db}/admin/tasks/state?key={taskId}&type=Backup&disable=true", null))
        {
            var body = await Api.JsonAsync(disabled);
            Assert.Equal(HttpStatusCode.OK, disabled.StatusCode);
            Assert.Equal((taskId, "A"), (body.GetProperty("TaskId").GetInt64(), body.GetProperty("ResponsibleNode").GetString()));
        }
        using (var task = await Client.GetAsync($"/databases/{db}/task?key={taskId}&type=Backup"))
        {
            var body = await Api.JsonAsync(task);
            Assert.Equal("Disabled", body.GetProperty("TaskState").GetString());
            Assert.Equal(JsonValueKind.Null, body.GetProperty("NextBackup").ValueKind);
            Assert.Equal("A", body.GetProperty("ResponsibleNode").GetProperty("NodeTag").GetString());
        }
        using (var enabled = await Client.PostAsync($"/databases/{db}/admin/tasks/state?key={taskId}&type=Backup&disable=false", null))
        {
            Assert.Equal(HttpStatusCode.OK, enabled.StatusCode);
        }
        using (var task = await Client.GetAsync($"/databases/{db}/task?key={taskId}&type=Backup"))
        {
            var body = await Api.JsonAsync(task);
            Assert.Equal("Enabled", body.GetProperty("TaskState").GetString());
            // The configuration is otherwise as it was.
            Assert.Equal("nightly", body.GetProperty("TaskName").GetString());
        }
        using (var unknown = await Client.PostAsync($"/databases/{db}/admin/tasks/state?key=999&type=Backup&disable=true", null))
        {
            Assert.Equal(HttpStatusCode.BadRequest, unknown.StatusCode);
        }
        using (var bad = await Client.PostAsync($"/databases/{db}/admin/tasks/state?key={taskId}&type=Backup&disable=maybe", null))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        }
    }

    [Fact]
    public async Task APeriodicTaskIsCreatedAndReadBackWithItsStatusAndNextRun()
    {
        var db = await fixture.CreateDatabaseAsync();
        var taskId = await CreateTaskAsync(db);

        using var status = await Client.GetAsync($"/periodic-backup/status?name={db}&taskId={taskId}");
        var body = await Api.JsonAsync(status);
        Assert.Equal(HttpStatusCode.OK, status.StatusCode);
        Assert.False(body.GetProperty("IsSharded").GetBoolean());
        var state = body.GetProperty("Status");
        Assert.Equal(taskId, state.GetProperty("TaskId").GetInt64());
        Assert.Equal("Snapshot", state.GetProperty("BackupType").GetString());
        Assert.Equal(JsonValueKind.Null, state.GetProperty("LastFullBackup").ValueKind);
        Assert.Equal(JsonValueKind.Null, state.GetProperty("Error").ValueKind);
        // No chain yet: the next run, at the first occurrence of either schedule, is a snapshot.
        Assert.True(state.GetProperty("NextBackup").GetProperty("IsFull").GetBoolean());

        using var underDatabase = await Client.GetAsync($"/databases/{db}/periodic-backup/status?taskId={taskId}");
        Assert.Equal(taskId, (await Api.JsonAsync(underDatabase)).GetProperty("Status").GetProperty("TaskId").GetInt64());

        using var task = await Client.GetAsync($"/databases/{db}/task?key={taskId}&type=Backup");
        var info = await Api.JsonAsync(task);
        Assert.Equal("nightly", info.GetProperty("TaskName").GetString());
        Assert.Equal("Enabled", info.GetProperty("TaskState").GetString());
        Assert.Equal("14.00:00:00", info.GetProperty("RetentionPolicy").GetProperty("MinimumBackupAgeToKeep").GetString());

        using var configuration = await Client.GetAsync($"/periodic-backup?name={db}&taskId={taskId}");
        var stored = await Api.JsonAsync(configuration);
        Assert.Equal(_backups.Path, stored.GetProperty("LocalSettings").GetProperty("FolderPath").GetString());
        Assert.Equal("0 2 * * *", stored.GetProperty("FullBackupFrequency").GetString());

        // An update keeps the id; a delete removes the task.
        using (var update = await Client.PostAsync($"/databases/{db}/admin/periodic-backup", Api.Json(Configuration(full: "0 3 * * *", taskId: taskId))))
        {
            Assert.Equal(taskId, (await Api.JsonAsync(update)).GetProperty("TaskId").GetInt64());
        }
        using (var delete = await Client.DeleteAsync($"/databases/{db}/admin/tasks?id={taskId}&type=Backup"))
        {
            Assert.Equal(HttpStatusCode.OK, delete.StatusCode);
        }
        using var gone = await Client.GetAsync($"/periodic-backup/status?name={db}&taskId={taskId}");
        Assert.Equal(JsonValueKind.Null, (await Api.JsonAsync(gone)).GetProperty("Status").ValueKind);
    }

    [Fact]
    public async Task TheTasksRouteListsEveryPeriodicTaskAsRavenDBsOngoingTasks()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var empty = await Client.GetAsync($"/databases/{db}/tasks"))
        {
            var none = await Api.JsonAsync(empty);
            Assert.Equal(HttpStatusCode.OK, empty.StatusCode);
            Assert.Empty(none.GetProperty("OngoingTasksList").EnumerateArray());
            Assert.Equal(0, none.GetProperty("SubscriptionsCount").GetInt32());
        }
        var first = await CreateTaskAsync(db);
        var second = await CreateTaskAsync(db);
        using (var subscription = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("""{"Name":"s","Query":"from Orders"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, subscription.StatusCode);
        }

        using var response = await Client.GetAsync($"/databases/{db}/tasks");
        var body = await Api.JsonAsync(response);
        var tasks = body.GetProperty("OngoingTasksList").EnumerateArray().ToArray();
        Assert.Equal([first, second], tasks.Select(t => t.GetProperty("TaskId").GetInt64()));
        using var single = await Client.GetAsync($"/databases/{db}/task?key={second}&type=Backup");
        var one = await Api.JsonAsync(single);
        // Each entry is what /task answers for that task.
        foreach (var field in new[] { "TaskType", "TaskName", "TaskState", "BackupType", "LastFullBackup", "Error" })
        {
            Assert.Equal(one.GetProperty(field).ToString(), tasks[1].GetProperty(field).ToString());
        }
        Assert.Equal(one.GetProperty("NextBackup").GetProperty("DateTime").GetString(), tasks[1].GetProperty("NextBackup").GetProperty("DateTime").GetString());
        Assert.Equal(1, body.GetProperty("SubscriptionsCount").GetInt32());
        Assert.Empty(body.GetProperty("PullReplications").EnumerateArray());
    }

    [Theory]
    [InlineData("0 2 * *", null, "FullBackupFrequency")]
    [InlineData("0 2 * * *", "relative/backups", "LocalSettings.FolderPath")]
    [InlineData("0 2 * * *", "", "LocalSettings.FolderPath")]
    public async Task ABadConfigurationIsA400NamingTheField(string full, string? folder, string field)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/admin/periodic-backup", Api.Json(Configuration(full, folder)));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains(field, message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task StartingAnUnknownTaskOrUpdatingOneIsRefused()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var start = await Client.PostAsync($"/databases/{db}/admin/backup/database?isFullBackup=true&taskId=999", null))
        {
            Assert.Contains("999", await Api.AssertErrorAsync(start, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        }
        using (var update = await Client.PostAsync($"/databases/{db}/admin/periodic-backup", Api.Json(Configuration(taskId: 999))))
        {
            Assert.Contains("999", await Api.AssertErrorAsync(update, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        }
        using (var once = await Client.PostAsync($"/databases/{db}/admin/backup", Api.Json("""{"BackupType":"Snapshot","LocalSettings":{"FolderPath":"here"}}""")))
        {
            Assert.Contains("LocalSettings.FolderPath", await Api.AssertErrorAsync(once, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task ARestoreIsRefusedAtOnceForATakenNameOrAFolderWithoutASnapshot()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var taken = await Client.PostAsync("/admin/restore/database", Api.Json(Restore(db, _backups.Path))))
        {
            await Api.AssertErrorAsync(taken, HttpStatusCode.Conflict, "DatabaseAlreadyExistsException");
        }
        using (var empty = await Client.PostAsync("/admin/restore/database", Api.Json(Restore(db + "-new", _backups.Path))))
        {
            Assert.Contains(_backups.Path, await Api.AssertErrorAsync(empty, HttpStatusCode.BadRequest, "BackupException"), StringComparison.Ordinal);
        }
        var missing = Path.Combine(_backups.Path, "nothing-here");
        using (var absent = await Client.PostAsync("/admin/restore/database", Api.Json(Restore(db + "-new", missing))))
        {
            Assert.Contains(missing, await Api.AssertErrorAsync(absent, HttpStatusCode.BadRequest, "BackupException"), StringComparison.Ordinal);
        }
        using (var verify = await Client.PostAsync($"/admin/backup/verify?path={Uri.EscapeDataString(_backups.Path)}", null))
        {
            await Api.AssertErrorAsync(verify, HttpStatusCode.BadRequest, "BackupException");
        }
        using var unknown = await Client.GetAsync("/operations/state?id=987654");
        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
    }

    [Fact]
    public async Task AStartedTaskBacksUpAndItsChainRestoresIntoANewDatabase()
    {
        var db = await fixture.CreateDatabaseAsync();
        for (var i = 1; i <= 3; i++)
        {
            using var put = await Client.PutAsync($"/databases/{db}/docs?id=orders/{i}", Api.Json("{\"Total\":" + i + ",\"@metadata\":{\"@collection\":\"Orders\"}}"));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        var taskId = await CreateTaskAsync(db);
        using var start = await Client.PostAsync($"/databases/{db}/admin/backup/database?isFullBackup=true&taskId={taskId}", null);
        var started = await Api.JsonAsync(start);
        Assert.True(start.StatusCode == HttpStatusCode.OK, started.ToString());
        Assert.Equal("A", started.GetProperty("ResponsibleNode").GetString());
        var state = await CompletedAsync($"/databases/{db}/operations/state?id={started.GetProperty("OperationId").GetInt64()}");
        Assert.Equal("Full", state.GetProperty("Result").GetProperty("Kind").GetString());

        using var status = await Client.GetAsync($"/periodic-backup/status?name={db}&taskId={taskId}");
        var chain = (await Api.JsonAsync(status)).GetProperty("Status").GetProperty("LocalBackup").GetProperty("BackupDirectory").GetString()!;
        Assert.StartsWith(_backups.Path, chain, StringComparison.Ordinal);

        using var restore = await Client.PostAsync("/admin/restore/database", Api.Json(Restore(db + "-restored", chain)));
        var operation = (await Api.JsonAsync(restore)).GetProperty("OperationId").GetInt64();
        await CompletedAsync($"/operations/state?id={operation}");
        using var restored = await Client.GetAsync($"/databases/{db}-restored/docs?id=orders/3");
        Assert.Equal(HttpStatusCode.OK, restored.StatusCode);
    }

    [Fact]
    public async Task AOneTimeBackupWritesASnapshotIntoTheFolder()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=a", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        var folder = Path.Combine(_backups.Path, "once");
        using var response = await Client.PostAsync($"/databases/{db}/admin/backup", Api.Json(JsonSerializer.Serialize(new { BackupType = "Snapshot", LocalSettings = new { FolderPath = folder } })));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        var state = await CompletedAsync($"/databases/{db}/operations/state?id={body.GetProperty("OperationId").GetInt64()}");
        var file = state.GetProperty("Result").GetProperty("FilePath").GetString()!;
        Assert.Equal(folder, Path.GetDirectoryName(file));
        Assert.True(File.Exists(file));
    }

    private static string Restore(string name, string location) =>
        JsonSerializer.Serialize(new { DatabaseName = name, BackupLocation = location, Type = "Local" });

    /// <summary>Polls an operation's state until it ended; asserts it completed.</summary>
    private async Task<JsonElement> CompletedAsync(string stateUrl)
    {
        JsonElement state = default;
        await Poll.UntilAsync(async () =>
        {
            using var response = await Client.GetAsync(stateUrl);
            state = await Api.JsonAsync(response);
            return state.GetProperty("Status").GetString() != "InProgress";
        }, TimeSpan.FromMinutes(2), stateUrl);
        Assert.True(state.GetProperty("Status").GetString() == "Completed", state.ToString());
        return state;
    }

    public void Dispose() => _backups.Dispose();
}
