using System.Buffers;
using System.Net.WebSockets;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.WebSockets;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Replication;

/// <summary>
/// The receiving end of one source's push (<c>GET /databases/{db}/replication/push</c>, a
/// WebSocket). The protocol, receiver first:
/// <code>
/// receiver: {"Type":"Hello","LastEtag":n,"LastRevisionEtag":r,"ChangeVector":"B:70-...","DatabaseId":"...","NodeTag":"B"}  (text; n, r: this source's stored positions)
/// sender:   a batch (binary, ReplicationBatch) of the source's feed after n, without the items the change vector covers,
///           and of its revisions after r, then the bytes of each attachment content the batch lists, one binary message each
/// receiver: {"Type":"Ack","LastEtag":m,"ChangeVector":"B:75-..."}              (text, once the batch is durable)
/// ... one batch in flight at a time; an empty batch is a heartbeat (or moves past a gap).
/// receiver: {"Type":"Error","Message":"..."} instead of an Ack when a batch cannot be applied (then it closes);
///           with "MissingAttachments":true when a document lists a content neither stored here nor carried
/// </code>
/// <c>ChangeVector</c> is what this node vouches it holds (<see cref="DatabaseReplication.KnownChangeVector"/>):
/// the sender leaves out what it covers and still moves the position past it.
/// </summary>
public static class IncomingReplication
{
    /// <summary>The largest batch message accepted (the sender's batches stay far below).</summary>
    public const int MaxMessageBytes = 256 * 1024 * 1024;

    /// <summary>
    /// How long the receiver waits for the sender's next message (a batch, or a heartbeat every
    /// <see cref="OutgoingReplication.Heartbeat"/>) before it gives the connection up.
    /// </summary>
    public static readonly TimeSpan ReceiveTimeout = 3 * OutgoingReplication.Heartbeat;

    public static async Task RunAsync(WebSocket socket, DocumentDatabase database, string sourceDatabaseId, string? sourceTag, ILogger logger, CancellationToken cancellationToken)
    {
        var replication = DatabaseReplication.Of(database);
        long position;
        long revisionPosition;
        using (var reader = database.BeginRead())
        {
            position = ReplicationPositions.Read(reader, sourceDatabaseId);
            revisionPosition = ReplicationPositions.ReadRevisions(reader, sourceDatabaseId);
        }
        await SendAsync(socket, "Hello", position, database, hello: true, revisionPosition, cancellationToken).ConfigureAwait(false);
        logger.LogInformation("Database {Database}: replication from {Source} ({SourceId}) connected at etag {Position}", database.Name, sourceTag, sourceDatabaseId, position);

        using var messages = new WebSocketMessageReader(socket, MaxMessageBytes);
        while (true)
        {
            WebSocketRead read;
            using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
            {
                timeout.CancelAfter(ReceiveTimeout);
                try
                {
                    read = await messages.ReadAsync(timeout.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
                {
                    logger.LogInformation("Database {Database}: replication from {Source} sent nothing for {Timeout}; closing", database.Name, sourceTag, ReceiveTimeout);
                    socket.Abort();
                    return;
                }
            }
            if (read == WebSocketRead.Closed)
            {
                await WebSocketClosing.SendCloseAsync(socket, WebSocketCloseStatus.NormalClosure, "", cancellationToken).ConfigureAwait(false);
                return;
            }
            if (read == WebSocketRead.TooBig)
            {
                await WebSocketClosing.SendCloseAsync(socket, WebSocketCloseStatus.MessageTooBig, $"A replication batch over {MaxMessageBytes} bytes.", cancellationToken).ConfigureAwait(false);
                return;
            }
            try
            {
                var batch = ReplicationBatch.Deserialize(messages.Message);
                if (batch.Items.Count > 0 && batch.Items.Max(i => i.Etag) > batch.LastEtag)
                {
                    throw new InvalidDataException($"A replication batch whose last etag {batch.LastEtag} is below its own items' (up to {batch.Items.Max(i => i.Etag)}).");
                }
                if (batch.Revisions.Any(r => r.Etag > batch.LastRevisionEtag) || batch.RevisionTombstones.Any(t => t.Etag > batch.LastRevisionEtag))
                {
                    throw new InvalidDataException($"A replication batch whose last revision etag {batch.LastRevisionEtag} is below its own revisions' or revision tombstones'.");
                }
                // The contents follow the batch: read (staged) before it is applied, in its transaction's stead.
                var contents = await ReplicationContents.ReceiveAsync(socket, database, batch.Contents, ReceiveTimeout, cancellationToken).ConfigureAwait(false);
                if (batch.Items.Count > 0 || batch.LastEtag > position || batch.Revisions.Count > 0 || batch.RevisionTombstones.Count > 0 || batch.LastRevisionEtag > revisionPosition)
                {
                    using var context = new JsonOperationContext();
                    var command = new ApplyReplicationBatchCommand(sourceDatabaseId, batch, replication.Policy, context, contents);
                    try
                    {
                        await database.EnqueueAsync(command).ConfigureAwait(false);
                    }
                    catch
                    {
                        await ReplicationContents.AbandonAsync(database, contents).ConfigureAwait(false);
                        throw;
                    }
                    replication.Stats.Add(command.Applied, command.AlreadyMerged, command.Repeated, command.Conflicts);
                    position = command.Position;
                    revisionPosition = command.RevisionPosition;
                }
                else
                {
                    await ReplicationContents.AbandonAsync(database, contents).ConfigureAwait(false);
                }
            }
            catch (Exception e) when (e is not (OperationCanceledException or Errors.DatabaseUnavailableException or WebSocketException))
            {
                // A batch this node cannot apply (bad data, a full disk, a content it lacks): said to
                // the sender, which logs it and tries again from the stored position after its back-off.
                logger.LogWarning(e, "Database {Database}: a replication batch from {Source} could not be applied", database.Name, sourceTag);
                await SendErrorAsync(socket, $"Node {database.NodeTag} could not apply the batch: {e.Message}", e is MissingAttachmentsException, cancellationToken).ConfigureAwait(false);
                return;
            }
            await SendAsync(socket, "Ack", position, database, hello: false, revisionPosition: 0, cancellationToken).ConfigureAwait(false);
        }
    }

    private static Task SendErrorAsync(WebSocket socket, string message, bool missingAttachments, CancellationToken cancellationToken)
    {
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("Type", "Error");
            json.WriteString("Message", message);
            if (missingAttachments)
            {
                json.WriteBoolean("MissingAttachments", true);
            }
            json.WriteEndObject();
        }
        return socket.SendAsync(buffer.WrittenMemory, WebSocketMessageType.Text, endOfMessage: true, cancellationToken).AsTask();
    }

    private static Task SendAsync(WebSocket socket, string type, long position, DocumentDatabase database, bool hello, long revisionPosition, CancellationToken cancellationToken)
    {
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("Type", type);
            json.WriteNumber("LastEtag", position);
            json.WriteString("ChangeVector", DatabaseReplication.Of(database).KnownChangeVector());
            if (hello)
            {
                json.WriteNumber("LastRevisionEtag", revisionPosition);
                json.WriteString("DatabaseId", database.DatabaseId);
                json.WriteString("NodeTag", database.NodeTag);
            }
            json.WriteEndObject();
        }
        return socket.SendAsync(buffer.WrittenMemory, WebSocketMessageType.Text, endOfMessage: true, cancellationToken).AsTask();
    }
}
