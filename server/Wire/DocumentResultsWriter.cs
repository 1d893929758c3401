using System.Buffers;
using System.IO.Pipelines;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Writes <c>{"Results":[…]</c> bodies of stored documents straight from their blittable form, for
/// every route that answers with documents (loads by id, pages by id or etag, collections; queries
/// next). The caller sets the status and content type first and writes nothing after.
/// </summary>
/// <remarks>
/// With a <see cref="ResponseByteCount"/>, what is written is counted before each flush (the
/// response metrics: these bodies have no Content-Length).
/// Never holds a snapshot across network back-pressure: the engine's flusher cannot pass the oldest
/// reader, so a slow client would make the store's scratch memory grow. When enough is buffered,
/// the snapshot is closed, the output flushed, and the rest read from a fresh snapshot.
/// </remarks>
public static class DocumentResultsWriter
{
    /// <summary>Flush the output once this much is buffered, so large results stream out.</summary>
    public const int FlushThreshold = 64 * 1024;

    private static ReadOnlySpan<byte> ResultsStart => "{\"Results\":["u8;

    /// <summary>
    /// A stored document as JSON: whole, or with <paramref name="metadataOnly"/> only its
    /// <c>{"@metadata":{…}}</c> (RavenDB's <c>metadataOnly=true</c>).
    /// </summary>
    public static void WriteDocument(ReadOnlySpan<byte> document, IBufferWriter<byte> output, bool metadataOnly)
    {
        if (!metadataOnly)
        {
            BlittableJsonWriter.WriteTo(document, output);
            return;
        }
        output.Write("{\"@metadata\":"u8);
        if (BlittableReader.Open(document).TryGet("@metadata"u8, out var metadata))
        {
            BlittableJsonWriter.WriteValue(metadata, output);
        }
        else
        {
            output.Write("{}"u8);
        }
        output.Write("}"u8);
    }

    /// <summary>
    /// <c>{"Results":[…],"Includes":{…}}</c>: one entry per id, in order (the document, or
    /// <c>null</c> when there is none or the id is null, as RavenDB answers a list with holes), and the
    /// documents the <paramref name="includes"/> paths of the found ones name; with
    /// <paramref name="revisions"/>, then <c>"RevisionIncludes":[…]</c> for the found ones.
    /// </summary>
    public static async ValueTask WriteByIdsAsync(PipeWriter output, DocumentDatabase database, IReadOnlyList<string?> ids, IReadOnlyList<DocumentPath>? includes, CancellationToken cancellationToken, bool metadataOnly = false, RevisionIncludes? revisions = null, ResponseByteCount? written = null)
    {
        var included = includes is null ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var reader = database.BeginRead();
        try
        {
            output.Write(ResultsStart);
            for (var i = 0; i < ids.Count; i++)
            {
                if (i > 0)
                {
                    output.Write(","u8);
                }
                if (ids[i] is { } id && reader.TryGet(id, out var record))
                {
                    WriteDocument(record.Document, output, metadataOnly);
                    if (included is not null)
                    {
                        DocumentIncludes.Collect(record.Document, includes!, included);
                    }
                    revisions?.Collect(id, record.Document);
                }
                else
                {
                    output.Write("null"u8);
                }
                if (output.UnflushedBytes >= FlushThreshold)
                {
                    reader = await FlushOutsideSnapshotAsync(output, database, reader, cancellationToken, written).ConfigureAwait(false);
                }
            }
            output.Write("],\"Includes\":"u8);
            if (included is null)
            {
                output.Write("{}"u8);
            }
            else
            {
                DocumentIncludes.Write(output, reader, included);
            }
            if (revisions is not null)
            {
                RevisionIncludesWriter.Write(output, reader, revisions);
            }
            output.Write("}"u8);
        }
        finally
        {
            reader.Dispose();
        }
        written?.AddUnflushed(output);
        await output.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// The documents whose storage keys <paramref name="keysOf"/> picks (in one snapshot), skipping
    /// any deleted since, then <paramref name="suffix"/>.
    /// </summary>
    public static async ValueTask WritePageAsync(PipeWriter output, DocumentDatabase database, Func<DocumentsReader, List<byte[]>> keysOf, ReadOnlyMemory<byte> suffix, CancellationToken cancellationToken, bool metadataOnly = false, ResponseByteCount? written = null)
    {
        var reader = database.BeginRead();
        try
        {
            var keys = keysOf(reader);
            output.Write(ResultsStart);
            var first = true;
            foreach (var key in keys)
            {
                if (!reader.TryGetByKey(key, out var record))
                {
                    continue;
                }
                if (!first)
                {
                    output.Write(","u8);
                }
                first = false;
                WriteDocument(record.Document, output, metadataOnly);
                if (output.UnflushedBytes >= FlushThreshold)
                {
                    reader = await FlushOutsideSnapshotAsync(output, database, reader, cancellationToken, written).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            reader.Dispose();
        }
        output.Write(suffix.Span);
        written?.AddUnflushed(output);
        await output.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Closes the snapshot, flushes (waiting for the client with none open), and opens a fresh one.</summary>
    public static async ValueTask<DatabaseReader> FlushOutsideSnapshotAsync(PipeWriter output, DocumentDatabase database, DatabaseReader reader, CancellationToken cancellationToken, ResponseByteCount? written = null)
    {
        reader.Dispose();
        written?.AddUnflushed(output);
        await output.FlushAsync(cancellationToken).ConfigureAwait(false);
        return database.BeginRead();
    }
}
