using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// Logical export and import of a database in RavenDB's <c>.ravendbdump</c> format (gzipped
/// JSON; see <see cref="SmugglerExporter"/> for the layout), streaming both ways. The HTTP routes
/// (<c>smuggler/export</c>, <c>smuggler/import</c>) and logical backups call these.
/// </summary>
public static class DatabaseSmuggler
{
    /// <summary>
    /// Writes the database as a gzipped dump to <paramref name="destination"/> (left open, flushed).
    /// With <paramref name="operation"/>, its state shows the result's counts as they move
    /// (the caller completes or fails the operation). The result's
    /// <see cref="SmugglerResult.LastEtag"/> is the etag the dump covers.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancel"/> fired; the destination holds a partial dump.</exception>
    public static async Task<SmugglerResult> ExportAsync(DocumentDatabase database, Stream destination, SmugglerExportOptions options, DatabaseOperation? operation, CancellationToken cancel)
    {
        ArgumentNullException.ThrowIfNull(database);
        ArgumentNullException.ThrowIfNull(destination);
        ArgumentNullException.ThrowIfNull(options);
        var result = operation?.Details as SmugglerResult ?? new SmugglerResult();
        await new SmugglerExporter(database, options, result, cancel).RunAsync(destination).ConfigureAwait(false);
        return result;
    }

    /// <summary>
    /// Reads a gzipped dump from <paramref name="source"/> (left open) into the database. Items it
    /// must refuse are in the result (<see cref="SmugglerResult.Refused"/>), the rest imported.
    /// </summary>
    /// <exception cref="Errors.BadRequestException">The dump cannot be read on (not gzip, not JSON, cut short): what came before the fault is committed, and the message names the byte.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancel"/> fired; what was committed before stays.</exception>
    public static async Task<SmugglerResult> ImportAsync(DocumentDatabase database, Stream source, SmugglerImportOptions options, DatabaseOperation? operation, CancellationToken cancel)
    {
        ArgumentNullException.ThrowIfNull(database);
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(options);
        var result = operation?.Details as SmugglerResult ?? new SmugglerResult();
        await new SmugglerImporter(database, options, result, operation, cancel).RunAsync(source).ConfigureAwait(false);
        return result;
    }

    /// <summary>
    /// Looks at the first bytes of a dump before anything starts: a gzip stream goes on (the
    /// stream returned reads from its first byte); anything else is refused, naming what it looks
    /// like (a Zstandard dump, RavenDB 6's other compression; plain JSON; nothing at all).
    /// </summary>
    /// <exception cref="Errors.BadRequestException">Not a gzipped dump.</exception>
    public static async Task<Stream> OpenDumpAsync(Stream source, CancellationToken cancel)
    {
        ArgumentNullException.ThrowIfNull(source);
        var head = new byte[4];
        var length = 0;
        while (length < head.Length)
        {
            var read = await source.ReadAsync(head.AsMemory(length), cancel).ConfigureAwait(false);
            if (read == 0)
            {
                break;
            }
            length += read;
        }
        if (length >= 2 && head[0] == 0x1F && head[1] == 0x8B)
        {
            return new PrefixedStream(head.AsMemory(0, length), source);
        }
        var looks = length switch
        {
            0 => "it is empty",
            >= 4 when head[0] == 0x28 && head[1] == 0xB5 && head[2] == 0x2F && head[3] == 0xFD => "it is Zstandard-compressed (RavenDB 6's default): export it again with CompressionAlgorithm \"Gzip\"",
            _ when head[0] is (byte)'{' or (byte)'[' or (byte)' ' or (byte)'\n' => "it is plain JSON: gzip it first",
            _ => $"its first bytes are {Convert.ToHexString(head, 0, length)}, not gzip's 1F8B",
        };
        throw new Errors.BadRequestException($"The dump is not a .ravendbdump (gzipped JSON): {looks}.");
    }
}
