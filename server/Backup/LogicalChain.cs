using System.IO.Compression;
using System.Text.Json;
using Jackdaw.Server.Backup.Smuggler;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Backup;

/// <summary>
/// The files of a logical backup chain (RavenDB's <c>BackupType</c> <c>Backup</c>): a full backup
/// <c>{yyyy-MM-dd-HH-mm-ss-fff}.ravendb-full-backup</c> and the incremental ones after it
/// <c>….ravendb-incremental-backup</c>, each a <c>.ravendbdump</c> (gzipped JSON, RavenDB's
/// extensions and layout), written and renamed as <see cref="BackupChain"/> says. Names sort in
/// chain order. A file Jackdaw writes starts with a header, the property
/// <c>"JackdawBackup":{"Kind","Database","DatabaseId","StartEtag","LastEtag","StartRevisionEtag","LastRevisionEtag"}</c> right after
/// <c>BuildVersion</c> (RavenDB skips a property it does not know): the next incremental and a
/// restore read it from the first bytes of the file, without reading the rest. A file RavenDB wrote
/// has no header: it restores all the same, without the chain's continuity check.
/// </summary>
public static class LogicalChain
{
    public const string FullExtension = ".ravendb-full-backup";
    public const string IncrementalExtension = ".ravendb-incremental-backup";

    /// <summary>How far into the uncompressed file the header is looked for (it is in the first hundred bytes of a file Jackdaw writes).</summary>
    private const int HeaderWindow = 16 * 1024;

    /// <summary>True for a full backup file, false for an incremental one, null for any other name.</summary>
    public static bool? IsFull(string fileName) =>
        fileName.EndsWith(FullExtension, StringComparison.Ordinal) ? true
        : fileName.EndsWith(IncrementalExtension, StringComparison.Ordinal) ? false
        : null;

    /// <summary>The logical backup files in the folder, in chain order (by name); empty when the folder does not exist.</summary>
    public static List<string> Files(string folder)
    {
        if (!Directory.Exists(folder))
        {
            return [];
        }
        var files = Directory.EnumerateFiles(folder).Where(f => IsFull(Path.GetFileName(f)) is not null).ToList();
        files.Sort(StringComparer.Ordinal);
        return files;
    }

    /// <summary>
    /// The files a restore imports: the last full backup at or before <paramref name="lastFileName"/>
    /// (or the folder's last file), then every incremental after it, in order.
    /// </summary>
    /// <exception cref="BackupException">No such file, or no full backup to start from.</exception>
    public static List<string> FilesToRestore(string folder, string? lastFileName)
    {
        var files = Files(folder);
        if (files.Count == 0)
        {
            throw new BackupException($"The backup folder '{folder}' holds no logical backup file (*{FullExtension}, *{IncrementalExtension}).");
        }
        var (start, end) = BackupChain.RangeToRestore(folder, files, lastFileName, f => IsFull(f) == true, $"full backup (*{FullExtension})");
        return files.GetRange(start, end - start + 1);
    }

    /// <summary>Writes the header (inside the dump's top-level object).</summary>
    internal static void WriteHeader(Utf8JsonWriter json, LogicalBackupHeader header)
    {
        json.WriteStartObject(SmugglerImporter.LogicalBackupHeader);
        json.WriteString("Kind", header.Full ? "Full" : "Incremental");
        json.WriteString("Database", header.Database);
        json.WriteString("DatabaseId", header.DatabaseId);
        json.WriteNumber("StartEtag", header.StartEtag);
        json.WriteNumber("LastEtag", header.LastEtag);
        if (header.StartRevisionEtag is { } startRevision && header.LastRevisionEtag is { } lastRevision)
        {
            json.WriteNumber("StartRevisionEtag", startRevision);
            json.WriteNumber("LastRevisionEtag", lastRevision);
        }
        json.WriteEndObject();
    }

    /// <summary>The file's header; null when it has none (a file RavenDB wrote).</summary>
    /// <exception cref="BackupException">The file cannot be read, is not gzip, or its header is damaged (the file is named).</exception>
    public static LogicalBackupHeader? ReadHeader(string path)
    {
        var name = Path.GetFileName(path);
        var buffer = new byte[HeaderWindow];
        var length = 0;
        try
        {
            using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 4096);
            using var gzip = new GZipStream(file, CompressionMode.Decompress);
            while (length < buffer.Length)
            {
                var read = gzip.Read(buffer, length, buffer.Length - length);
                if (read == 0)
                {
                    break;
                }
                length += read;
            }
        }
        catch (InvalidDataException e)
        {
            throw new BackupException($"The backup file '{name}' is damaged (not valid gzip): {e.Message}", e);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new BackupException($"The backup file '{name}' cannot be read: {e.Message}", e);
        }
        try
        {
            return ParseHeader(buffer.AsSpan(0, length), isFinalBlock: length < buffer.Length);
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or FormatException or KeyNotFoundException)
        {
            throw new BackupException($"The backup file '{name}' is damaged: its header cannot be read ({e.Message}).", e);
        }
    }

    private static LogicalBackupHeader? ParseHeader(ReadOnlySpan<byte> json, bool isFinalBlock)
    {
        var reader = new Utf8JsonReader(json, isFinalBlock, default);
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            throw new JsonException("the dump is not a JSON object");
        }
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("BuildVersion"u8))
            {
                reader.Read();
                continue;
            }
            if (!reader.ValueTextEquals(SmugglerImporter.LogicalBackupHeader))
            {
                return null;
            }
            reader.Read();
            if (reader.TokenType != JsonTokenType.StartObject)
            {
                throw new JsonException($"'{SmugglerImporter.LogicalBackupHeader}' is not an object");
            }
            var header = JsonElement.ParseValue(ref reader);
            return new LogicalBackupHeader(
                header.GetProperty("Kind").GetString() == "Full",
                header.GetProperty("Database").GetString() ?? "",
                header.GetProperty("DatabaseId").GetString() ?? "",
                header.GetProperty("StartEtag").GetInt64(),
                header.GetProperty("LastEtag").GetInt64(),
                header.TryGetProperty("StartRevisionEtag", out var startRevision) ? startRevision.GetInt64() : null,
                header.TryGetProperty("LastRevisionEtag", out var lastRevision) ? lastRevision.GetInt64() : null);
        }
        return null;
    }
}
