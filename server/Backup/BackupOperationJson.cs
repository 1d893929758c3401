using System.Buffers;
using System.Globalization;
using System.Text.Json;

namespace Jackdaw.Server.Backup;

/// <summary>
/// The <c>Progress</c> and <c>Result</c> of backup, restore and verify operations in
/// <c>operations/state</c>, with RavenDB's <c>$type</c>s (its C# client picks classes by them) and
/// RavenDB's fields where they have a meaning here, plus Jackdaw's:
/// <code>
/// Progress: {"$type":"…Backups.BackupProgress, Raven.Client"|"…RestoreProgress…","Stage","Pages","Entries","Bytes"}
/// Backup result:  {"$type":"…Backups.BackupResult, Raven.Client","Messages":[…],"LocalBackup":{"BackupDirectory","FileName","TempFolderUsed":false},
///                  "Kind","Logical","FileName","FilePath","SizeInBytes","Etag","ChangeVector","TransactionId","DurationInMs","Pages","Entries","Note"}
/// Restore result: {"$type":"…Backups.RestoreResult, Raven.Client","Messages":[…],"DatabaseName","Files":[…],"Etag","TransactionId",
///                  "Indexes","SizeInBytes","DurationInMs","Verified"}
/// </code>
/// </summary>
public static class BackupOperationJson
{
    private const string RavenTypes = "Raven.Client.Documents.Operations.Backups.";

    public static byte[] Progress(BackupRun run, bool restore) => Write(writer =>
    {
        writer.WriteStartObject();
        writer.WriteString("$type", RavenTypes + (restore ? "RestoreProgress" : "BackupProgress") + ", Raven.Client");
        writer.WriteString("Stage", run.Stage);
        writer.WriteNumber("Pages", run.Pages);
        writer.WriteNumber("Entries", run.Entries);
        writer.WriteNumber("Bytes", run.Bytes);
        writer.WriteEndObject();
    });

    public static byte[] Result(BackupResult result) => Write(writer =>
    {
        writer.WriteStartObject();
        writer.WriteString("$type", RavenTypes + "BackupResult, Raven.Client");
        writer.WriteStartArray("Messages");
        writer.WriteStringValue($"Wrote {result.Kind} file '{result.FileName}' ({result.SizeInBytes.ToString("N0", CultureInfo.InvariantCulture)} bytes) up to etag {result.Etag}.");
        if (result.Note is { } note)
        {
            writer.WriteStringValue(note);
        }
        writer.WriteEndArray();
        writer.WriteStartObject("LocalBackup");
        writer.WriteString("BackupDirectory", Path.GetDirectoryName(result.FilePath));
        writer.WriteString("FileName", result.FileName);
        writer.WriteBoolean("TempFolderUsed", false);
        writer.WriteEndObject();
        writer.WriteString("Kind", result.Kind.ToString());
        writer.WriteBoolean("Logical", result.Logical);
        writer.WriteString("FileName", result.FileName);
        writer.WriteString("FilePath", result.FilePath);
        writer.WriteNumber("SizeInBytes", result.SizeInBytes);
        writer.WriteNumber("Etag", result.Etag);
        writer.WriteString("ChangeVector", result.ChangeVector);
        writer.WriteNumber("TransactionId", result.TransactionId);
        writer.WriteNumber("DurationInMs", (long)result.Duration.TotalMilliseconds);
        writer.WriteNumber("Pages", result.Pages);
        writer.WriteNumber("Entries", result.Entries);
        writer.WriteString("Note", result.Note);
        writer.WriteEndObject();
    });

    /// <summary>A restore's (or, <paramref name="verified"/>, a verification's) result.</summary>
    public static byte[] Result(RestoreResult result, bool verified) => Write(writer =>
    {
        writer.WriteStartObject();
        writer.WriteString("$type", RavenTypes + "RestoreResult, Raven.Client");
        writer.WriteStartArray("Messages");
        writer.WriteStringValue(verified
            ? $"Verified {result.Files.Count} file(s): every checksum matches and the chain restores, up to etag {result.Etag}."
            : $"Restored {result.Files.Count} file(s) into database '{result.DatabaseName}', up to etag {result.Etag}.");
        writer.WriteEndArray();
        writer.WriteString("DatabaseName", verified ? null : result.DatabaseName);
        writer.WriteStartArray("Files");
        foreach (var file in result.Files)
        {
            writer.WriteStringValue(file);
        }
        writer.WriteEndArray();
        writer.WriteNumber("Etag", result.Etag);
        writer.WriteNumber("TransactionId", result.TransactionId);
        writer.WriteNumber("Indexes", result.Indexes);
        writer.WriteNumber("SizeInBytes", result.SizeInBytes);
        writer.WriteNumber("DurationInMs", (long)result.Duration.TotalMilliseconds);
        writer.WriteBoolean("Verified", verified);
        writer.WriteEndObject();
    });

    private static byte[] Write(Action<Utf8JsonWriter> write)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            write(writer);
        }
        return buffer.WrittenSpan.ToArray();
    }
}
