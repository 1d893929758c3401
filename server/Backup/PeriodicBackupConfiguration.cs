using System.Globalization;
using System.Text.Json;
using System.Text.Json.Nodes;
using Cronos;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Backup;

/// <summary>
/// One periodic backup task of a database, as RavenDB's <c>UpdatePeriodicBackupOperation</c> sends
/// it (<c>PeriodicBackupConfiguration</c>): when to take full and incremental files (cron
/// expressions, UTC), into which local folder, and how long to keep old chains. Stored in the
/// database's <c>PeriodicBackups</c> tree in the same shape (<see cref="ToJson"/>), so it reads back
/// through the same checks.
/// </summary>
public sealed record PeriodicBackupConfiguration
{
    /// <summary>The task's id (from 1), unique in its database.</summary>
    public required long TaskId { get; init; }

    public required string Name { get; init; }

    /// <summary>A disabled task keeps its configuration and status but never runs on its own.</summary>
    public bool Disabled { get; init; }

    /// <summary>RavenDB's <c>BackupType</c>: <c>Snapshot</c> writes the binary chain, <c>Backup</c> the logical one (<see cref="LogicalBackups"/>).</summary>
    public required string BackupType { get; init; }

    /// <summary>A logical chain (<c>BackupType</c> <c>Backup</c>): the task holds the tombstones its next incremental exports.</summary>
    public bool Logical => BackupType == "Backup";

    /// <summary>When to take a snapshot (5-field cron, UTC); null: only the first run of a chain is one.</summary>
    public string? FullBackupFrequency { get; init; }

    /// <summary>When to add an incremental file to the current chain; null: every run is a snapshot.</summary>
    public string? IncrementalBackupFrequency { get; init; }

    public CronExpression? FullSchedule { get; init; }

    public CronExpression? IncrementalSchedule { get; init; }

    /// <summary><c>LocalSettings.FolderPath</c>: an absolute folder; each snapshot starts a chain folder inside it.</summary>
    public required string FolderPath { get; init; }

    /// <summary>Jackdaw's <c>MinimalIncremental</c>: incrementals keep the newest version of each page instead of the journal records.</summary>
    public bool MinimalIncremental { get; init; }

    /// <summary><c>RetentionPolicy.MinimumBackupAgeToKeep</c> when the policy is on: chains whose newest file is older are deleted; null keeps all.</summary>
    public TimeSpan? MinimumBackupAgeToKeep { get; init; }

    public DateTime CreatedAt { get; init; }

    /// <summary>RavenDB's <c>MentorNode</c>: on a clustered database, the node that runs the task while it is up (null: the cluster chooses).</summary>
    public string? MentorNode { get; init; }

    /// <summary>RavenDB's <c>PinToMentorNode</c>: the task stays on its mentor even while the mentor is down.</summary>
    public bool PinToMentorNode { get; init; }

    /// <summary>The kind of backup as its chain folders are named: <c>snapshot</c> or <c>backup</c>.</summary>
    public string FolderKind => BackupType == "Snapshot" ? "snapshot" : "backup";

    /// <summary>
    /// Reads and checks a configuration. <paramref name="taskId"/> is the task's id (the caller
    /// decides it: a new one, or the one being updated); <paramref name="createdAt"/> is used when
    /// the JSON has none.
    /// </summary>
    /// <exception cref="BadRequestException">A field is missing or wrong; the message names it.</exception>
    public static PeriodicBackupConfiguration Parse(JsonElement json, long taskId, DateTime createdAt)
    {
        if (json.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException("The body must be a PeriodicBackupConfiguration: {\"Name\":\"nightly\",\"BackupType\":\"Snapshot\",\"FullBackupFrequency\":\"0 2 * * *\",\"IncrementalBackupFrequency\":\"*/15 * * * *\",\"LocalSettings\":{\"FolderPath\":\"/var/backups/jackdaw\"}}.");
        }
        var (backupType, folder, minimal) = ParseDestination(json);
        var full = String(json, "FullBackupFrequency");
        var incremental = String(json, "IncrementalBackupFrequency");
        full = string.IsNullOrWhiteSpace(full) ? null : full.Trim();
        incremental = string.IsNullOrWhiteSpace(incremental) ? null : incremental.Trim();
        if (full is null && incremental is null)
        {
            throw new BadRequestException("FullBackupFrequency and IncrementalBackupFrequency are both empty: give at least one cron expression, e.g. \"FullBackupFrequency\":\"0 2 * * *\" (every day at 02:00 UTC).");
        }
        TimeSpan? keep = null;
        if (json.TryGetProperty("RetentionPolicy", out var retention) && retention.ValueKind == JsonValueKind.Object
            && !Boolean(retention, "Disabled", "RetentionPolicy.Disabled")
            && String(retention, "MinimumBackupAgeToKeep", "RetentionPolicy.MinimumBackupAgeToKeep") is { Length: > 0 } age)
        {
            if (!TimeSpan.TryParse(age, CultureInfo.InvariantCulture, out var parsed) || parsed <= TimeSpan.Zero)
            {
                throw new BadRequestException($"RetentionPolicy.MinimumBackupAgeToKeep '{age}' is not a positive time span such as \"7.00:00:00\" (seven days).");
            }
            keep = parsed;
        }
        var name = String(json, "Name");
        var mentor = String(json, "MentorNode");
        if (!string.IsNullOrWhiteSpace(mentor) && !mentor.Trim().All(char.IsAsciiLetterUpper))
        {
            throw new BadRequestException($"MentorNode '{mentor}' is not a node tag (A, B, C...).");
        }
        return new PeriodicBackupConfiguration
        {
            TaskId = taskId,
            Name = string.IsNullOrWhiteSpace(name) ? $"Backup #{taskId.ToString(CultureInfo.InvariantCulture)}" : name.Trim(),
            Disabled = Boolean(json, "Disabled", "Disabled"),
            BackupType = backupType,
            FullBackupFrequency = full,
            IncrementalBackupFrequency = incremental,
            FullSchedule = full is null ? null : Cron(full, "FullBackupFrequency"),
            IncrementalSchedule = incremental is null ? null : Cron(incremental, "IncrementalBackupFrequency"),
            FolderPath = folder,
            MinimalIncremental = minimal,
            MinimumBackupAgeToKeep = keep,
            MentorNode = string.IsNullOrWhiteSpace(mentor) ? null : mentor.Trim(),
            PinToMentorNode = Boolean(json, "PinToMentorNode", "PinToMentorNode"),
            CreatedAt = json.TryGetProperty("CreatedAt", out var created) && created.ValueKind == JsonValueKind.String && created.TryGetDateTime(out var at)
                ? at.ToUniversalTime()
                : createdAt,
        };
    }

    /// <summary>
    /// The fields a one-time backup (RavenDB's <c>BackupConfiguration</c>) shares with a periodic
    /// one: <c>BackupType</c>, <c>LocalSettings.FolderPath</c> (absolute; no remote destination) and
    /// Jackdaw's <c>MinimalIncremental</c>.
    /// </summary>
    /// <exception cref="BadRequestException">A field is missing or wrong; the message names it.</exception>
    public static (string BackupType, string FolderPath, bool MinimalIncremental) ParseDestination(JsonElement json)
    {
        if (json.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException("The body must be a BackupConfiguration: {\"BackupType\":\"Snapshot\",\"LocalSettings\":{\"FolderPath\":\"/var/backups/jackdaw/orders\"}}.");
        }
        var backupType = String(json, "BackupType") ?? "Backup";
        backupType = backupType.Equals("Snapshot", StringComparison.OrdinalIgnoreCase) ? "Snapshot"
            : backupType.Equals("Backup", StringComparison.OrdinalIgnoreCase) ? "Backup"
            : throw new BadRequestException($"BackupType '{backupType}' is not Backup or Snapshot.");
        foreach (var remote in RemoteDestinations)
        {
            if (json.TryGetProperty(remote, out var settings) && settings.ValueKind == JsonValueKind.Object && !Boolean(settings, "Disabled", remote + ".Disabled"))
            {
                throw new BadRequestException($"{remote} is set: Jackdaw backs up to a local folder only (LocalSettings.FolderPath); copy the chain folders elsewhere yourself.");
            }
        }
        var folder = json.TryGetProperty("LocalSettings", out var local) && local.ValueKind == JsonValueKind.Object && !Boolean(local, "Disabled", "LocalSettings.Disabled")
            ? String(local, "FolderPath", "LocalSettings.FolderPath")
            : null;
        if (string.IsNullOrWhiteSpace(folder))
        {
            throw new BadRequestException("LocalSettings.FolderPath is required: the absolute folder the backups go to, e.g. {\"LocalSettings\":{\"FolderPath\":\"/var/backups/jackdaw\"}}.");
        }
        if (folder.AsSpan().IndexOfAny(Path.GetInvalidPathChars()) >= 0)
        {
            throw new BadRequestException("LocalSettings.FolderPath has a character no path may hold (a control character such as NUL).");
        }
        if (!Path.IsPathFullyQualified(folder))
        {
            throw new BadRequestException($"LocalSettings.FolderPath '{folder}' is not an absolute path; give the full path of the folder, e.g. /var/backups/jackdaw.");
        }
        return (backupType, Path.TrimEndingDirectorySeparator(folder), Boolean(json, "MinimalIncremental", "MinimalIncremental"));
    }

    /// <summary>The configuration in RavenDB's shape (plus <c>MinimalIncremental</c>): what is stored and what <c>GET /periodic-backup</c> answers.</summary>
    public byte[] ToJson() => JsonSerializer.SerializeToUtf8Bytes(ToNode());

    public JsonObject ToNode() => new()
    {
        ["TaskId"] = TaskId,
        ["Name"] = Name,
        ["Disabled"] = Disabled,
        ["BackupType"] = BackupType,
        ["FullBackupFrequency"] = FullBackupFrequency,
        ["IncrementalBackupFrequency"] = IncrementalBackupFrequency,
        ["LocalSettings"] = new JsonObject { ["Disabled"] = false, ["FolderPath"] = FolderPath },
        ["RetentionPolicy"] = new JsonObject
        {
            ["Disabled"] = MinimumBackupAgeToKeep is null,
            ["MinimumBackupAgeToKeep"] = MinimumBackupAgeToKeep?.ToString("c", CultureInfo.InvariantCulture),
        },
        ["MinimalIncremental"] = MinimalIncremental,
        ["CreatedAt"] = CreatedAt.ToString("o", CultureInfo.InvariantCulture),
        ["MentorNode"] = MentorNode,
        ["PinToMentorNode"] = PinToMentorNode,
    };

    private static readonly string[] RemoteDestinations = ["S3Settings", "GlacierSettings", "AzureSettings", "FtpSettings", "GoogleCloudSettings"];

    private static CronExpression Cron(string expression, string field)
    {
        try
        {
            return CronExpression.Parse(expression, CronFormat.Standard);
        }
        catch (CronFormatException e)
        {
            throw new BadRequestException($"{field} '{expression}' is not a cron expression of five fields (minute hour day-of-month month day-of-week, UTC), e.g. \"0 2 * * *\": {e.Message}");
        }
    }

    private static string? String(JsonElement json, string property, string? field = null) =>
        !json.TryGetProperty(property, out var value) || value.ValueKind == JsonValueKind.Null ? null
        : value.ValueKind == JsonValueKind.String ? value.GetString()
        : throw new BadRequestException($"{field ?? property} must be a string.");

    private static bool Boolean(JsonElement json, string property, string field) =>
        json.TryGetProperty(property, out var value) && value.ValueKind switch
        {
            JsonValueKind.True => true,
            JsonValueKind.False or JsonValueKind.Null => false,
            _ => throw new BadRequestException($"{field} must be true or false."),
        };
}
