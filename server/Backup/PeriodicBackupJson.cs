using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Backup;

/// <summary>
/// A periodic backup task as RavenDB's clients read it: its status (<c>PeriodicBackupStatus</c>,
/// what <c>GetPeriodicBackupStatusOperation</c> revives) and its ongoing-task view
/// (<c>OngoingTaskBackup</c>, what <c>GetOngoingTaskInfoOperation</c> reads).
/// </summary>
/// <remarks>
/// Status: <c>TaskId, BackupType, IsFull, NodeTag, LastFullBackup, LastIncrementalBackup,
/// LastFullBackupInternal, LastIncrementalBackupInternal, LocalBackup {BackupDirectory, FileName,
/// TempFolderUsed, LastFullBackup, LastIncrementalBackup, FullBackupDurationInMs,
/// IncrementalBackupDurationInMs, Exception}, UploadToS3.. null, LastEtag, LastDatabaseChangeVector,
/// LastRaftIndex {LastEtag}, FolderName, DurationInMs, LocalRetentionDurationInMs, Version, Error
/// {Exception, At} | null, LastOperationId, IsEncrypted</c>, and Jackdaw's <c>NextBackup {TimeSpan,
/// DateTime, IsFull} | null, OnGoingBackup {StartTime, IsFull, RunningBackupTaskId, OperationId} |
/// null, SizeInBytes, TransactionId, Note</c>.
/// </remarks>
public static class PeriodicBackupJson
{
    public static void WriteStatus(Utf8JsonWriter writer, PeriodicBackupConfiguration configuration, PeriodicBackupStatus status, NextBackup? next, (long OperationId, DateTime Started, bool IsFull)? running, string nodeTag, DateTime now)
    {
        writer.WriteStartObject();
        writer.WriteNumber("TaskId", configuration.TaskId);
        writer.WriteString("BackupType", configuration.BackupType);
        writer.WriteBoolean("IsFull", status.IsFull);
        writer.WriteString("NodeTag", status.NodeTag ?? nodeTag);
        writer.WriteNull("DelayUntil");
        writer.WriteNull("OriginalBackupTime");
        JsonDefaults.WriteTime(writer, "LastFullBackup", status.LastFullBackup);
        JsonDefaults.WriteTime(writer, "LastIncrementalBackup", status.LastIncrementalBackup);
        JsonDefaults.WriteTime(writer, "LastFullBackupInternal", status.LastFullBackupInternal);
        JsonDefaults.WriteTime(writer, "LastIncrementalBackupInternal", status.LastIncrementalBackupInternal);
        writer.WriteStartObject("LocalBackup");
        writer.WriteString("BackupDirectory", status.FolderName);
        writer.WriteString("FileName", status.FileName);
        writer.WriteBoolean("TempFolderUsed", false);
        JsonDefaults.WriteTime(writer, "LastFullBackup", status.LastFullBackup);
        JsonDefaults.WriteTime(writer, "LastIncrementalBackup", status.LastIncrementalBackup);
        WriteNumber(writer, "FullBackupDurationInMs", status.FullBackupDurationInMs);
        WriteNumber(writer, "IncrementalBackupDurationInMs", status.IncrementalBackupDurationInMs);
        writer.WriteString("Exception", status.Error);
        writer.WriteEndObject();
        foreach (var upload in (string[])["UploadToS3", "UploadToGlacier", "UploadToAzure", "UploadToGoogleCloud", "UploadToFtp"])
        {
            writer.WriteNull(upload);
        }
        writer.WriteNumber("LastEtag", status.LastEtag);
        writer.WriteString("LastDatabaseChangeVector", status.LastDatabaseChangeVector);
        writer.WriteStartObject("LastRaftIndex");
        writer.WriteNumber("LastEtag", 0);
        writer.WriteEndObject();
        writer.WriteString("FolderName", status.FolderName is null ? null : Path.GetFileName(status.FolderName));
        WriteNumber(writer, "DurationInMs", status.DurationInMs);
        writer.WriteNull("LocalRetentionDurationInMs");
        writer.WriteNumber("Version", 0);
        if (status.Error is { } error)
        {
            writer.WriteStartObject("Error");
            writer.WriteString("Exception", error);
            JsonDefaults.WriteTime(writer, "At", status.ErrorAt);
            writer.WriteEndObject();
        }
        else
        {
            writer.WriteNull("Error");
        }
        WriteNumber(writer, "LastOperationId", status.LastOperationId);
        writer.WriteBoolean("IsEncrypted", false);
        WriteNext(writer, next, now);
        WriteRunning(writer, configuration.TaskId, running);
        writer.WriteNumber("SizeInBytes", status.SizeInBytes);
        WriteNumber(writer, "TransactionId", status.TransactionId);
        writer.WriteString("Note", status.Note);
        writer.WriteEndObject();
    }

    /// <summary>RavenDB's <c>OngoingTaskBackup</c> (<c>GET /databases/*/task?key=&amp;type=Backup</c>); <paramref name="nodeTag"/> and <paramref name="nodeUrl"/> are the node that runs the task (<c>ResponsibleNode</c>).</summary>
    public static void WriteOngoingTask(Utf8JsonWriter writer, PeriodicBackupConfiguration configuration, PeriodicBackupStatus status, NextBackup? next, (long OperationId, DateTime Started, bool IsFull)? running, string nodeTag, string nodeUrl, DateTime now)
    {
        writer.WriteStartObject();
        writer.WriteNumber("TaskId", configuration.TaskId);
        writer.WriteString("TaskType", "Backup");
        writer.WriteString("TaskName", configuration.Name);
        writer.WriteString("TaskState", configuration.Disabled ? "Disabled" : "Enabled");
        writer.WriteString("TaskConnectionStatus", configuration.Disabled ? "NotActive" : "Active");
        writer.WriteStartObject("ResponsibleNode");
        writer.WriteString("NodeTag", nodeTag);
        writer.WriteString("NodeUrl", nodeUrl);
        writer.WriteEndObject();
        writer.WriteString("Error", status.Error);
        writer.WriteString("MentorNode", configuration.MentorNode);
        writer.WriteBoolean("PinToMentorNode", configuration.PinToMentorNode);
        writer.WriteString("BackupType", configuration.BackupType);
        writer.WriteStartArray("BackupDestinations");
        writer.WriteStringValue("Local");
        writer.WriteEndArray();
        JsonDefaults.WriteTime(writer, "LastFullBackup", status.LastFullBackup);
        JsonDefaults.WriteTime(writer, "LastIncrementalBackup", status.LastIncrementalBackup);
        writer.WriteString("LastExecutingNodeTag", status.NodeTag ?? (status.LastOperationId is null ? null : nodeTag));
        WriteRunning(writer, configuration.TaskId, running);
        WriteNext(writer, next, now);
        writer.WriteStartObject("RetentionPolicy");
        writer.WriteBoolean("Disabled", configuration.MinimumBackupAgeToKeep is null);
        writer.WriteString("MinimumBackupAgeToKeep", configuration.MinimumBackupAgeToKeep?.ToString("c", CultureInfo.InvariantCulture));
        writer.WriteEndObject();
        writer.WriteBoolean("IsEncrypted", false);
        writer.WriteEndObject();
    }

    private static void WriteNext(Utf8JsonWriter writer, NextBackup? next, DateTime now)
    {
        if (next is not { } due)
        {
            writer.WriteNull("NextBackup");
            return;
        }
        writer.WriteStartObject("NextBackup");
        var wait = due.DateTime > now ? due.DateTime - now : TimeSpan.Zero;
        writer.WriteString("TimeSpan", wait.ToString("c", CultureInfo.InvariantCulture));
        JsonDefaults.WriteTime(writer, "DateTime", due.DateTime);
        writer.WriteBoolean("IsFull", due.IsFull);
        writer.WriteNull("OriginalBackupTime");
        writer.WriteEndObject();
    }

    private static void WriteRunning(Utf8JsonWriter writer, long taskId, (long OperationId, DateTime Started, bool IsFull)? running)
    {
        if (running is not { } run)
        {
            writer.WriteNull("OnGoingBackup");
            return;
        }
        writer.WriteStartObject("OnGoingBackup");
        JsonDefaults.WriteTime(writer, "StartTime", run.Started);
        writer.WriteBoolean("IsFull", run.IsFull);
        writer.WriteNumber("RunningBackupTaskId", taskId);
        writer.WriteNumber("OperationId", run.OperationId);
        writer.WriteEndObject();
    }

    private static void WriteNumber(Utf8JsonWriter writer, string name, long? value)
    {
        if (value is { } number)
        {
            writer.WriteNumber(name, number);
        }
        else
        {
            writer.WriteNull(name);
        }
    }
}
