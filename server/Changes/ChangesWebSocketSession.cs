using System.Buffers;
using System.Net.WebSockets;
using System.Text.Json;
using Jackdaw.Server.WebSockets;

namespace Jackdaw.Server.Changes;

/// <summary>
/// Runs one changes connection over an accepted WebSocket: a receive loop that applies the
/// client's commands, and a send loop that writes the queue as JSON arrays of messages (up to
/// <see cref="MaxMessagesPerFrame"/> or about <see cref="FrameBytes"/> per frame). Bad input (not
/// JSON, an unknown command, a binary frame) is answered with an <c>Error</c> and the connection
/// goes on; a message over <see cref="ChangesOptions.MaxCommandBytes"/> is answered with an
/// <c>Error</c> and the connection closed (1009). The send loop alone writes to the socket, close
/// frames included; it closes with a status per <see cref="ChangesCloseReason"/>.
/// </summary>
public static class ChangesWebSocketSession
{
    public const int MaxMessagesPerFrame = 1024;
    public const int FrameBytes = 64 * 1024;

    /// <summary>Runs until the client or the server closes the connection (or the socket fails).</summary>
    public static async Task RunAsync(ChangesConnection connection, WebSocket socket, CancellationToken serverStopping)
    {
        using var stopping = serverStopping.Register(static c => ((ChangesConnection)c!).Close(ChangesCloseReason.ServerStopping), connection);
        var sending = SendLoopAsync(connection, socket);
        await ReceiveLoopAsync(connection, socket).ConfigureAwait(false);
        // However the receive loop ended, nothing more comes from this client.
        connection.Close(ChangesCloseReason.ClientClosed);
        await sending.ConfigureAwait(false);
    }

    private static async Task ReceiveLoopAsync(ChangesConnection connection, WebSocket socket)
    {
        using var reader = new WebSocketMessageReader(socket, connection.Options.MaxCommandBytes);
        try
        {
            while (true)
            {
                var read = await reader.ReadAsync(connection.Aborted).ConfigureAwait(false);
                if (read == WebSocketRead.Closed)
                {
                    return;
                }
                if (read == WebSocketRead.TooBig)
                {
                    // Refused at once (a message that never ends must not keep the connection);
                    // what follows is read and dropped until the client closes or the grace runs out.
                    if (connection.CloseReason == ChangesCloseReason.None)
                    {
                        connection.SendError($"The message is larger than {reader.MaxBytes:N0} bytes, the most a changes command may be; the connection is closed.", "MessageTooBig");
                        connection.Close(ChangesCloseReason.MessageTooBig);
                    }
                    await WebSocketClosing.DrainAsync(socket, connection.Aborted).ConfigureAwait(false);
                    return;
                }

                if (connection.CloseReason != ChangesCloseReason.None)
                {
                    continue; // closing: wait for the client's close frame, ignore the rest
                }
                if (reader.MessageType == WebSocketMessageType.Binary)
                {
                    connection.SendError("Binary messages are not commands: send each command as a text message holding JSON, e.g. {\"CommandId\":1,\"Command\":\"watch-doc\",\"Param\":\"orders/1\"}.", "BinaryMessage");
                }
                else
                {
                    connection.HandleCommand(reader.Message.Span);
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException or ObjectDisposedException)
        {
            // The client went away, or the connection was aborted after its grace.
        }
    }

    private static async Task SendLoopAsync(ChangesConnection connection, WebSocket socket)
    {
        var buffer = new ArrayBufferWriter<byte>(FrameBytes + 4096);
        var writer = new Utf8JsonWriter(buffer, new JsonWriterOptions { SkipValidation = true });
        var messages = connection.Messages;
        // The entry being sent and, for a commit, the next of its changes: a large commit spans frames.
        ChangesMessage current = default;
        var hasCurrent = false;
        var next = 0;
        try
        {
            while (hasCurrent || await messages.WaitToReadAsync(connection.Aborted).ConfigureAwait(false))
            {
                // A client too slow loses what is queued (the notice goes out now); one that closed needs none of it.
                if (connection.CloseReason is ChangesCloseReason.TooSlow or ChangesCloseReason.ClientClosed)
                {
                    break;
                }
                buffer.ResetWrittenCount();
                writer.Reset(buffer);
                writer.WriteStartArray();
                var count = 0;
                while (count < MaxMessagesPerFrame && writer.BytesPending + writer.BytesCommitted < FrameBytes)
                {
                    if (!hasCurrent)
                    {
                        if (!messages.TryRead(out current))
                        {
                            break;
                        }
                        hasCurrent = true;
                        next = 0;
                    }
                    if (current.Kind == ChangesMessageKind.Commit)
                    {
                        var commit = current.Commit!;
                        var changes = commit.Changes;
                        var watches = connection.Watches;
                        while (next < changes.Count && count < MaxMessagesPerFrame && writer.BytesPending + writer.BytesCommitted < FrameBytes)
                        {
                            if (watches.Matches(changes[next]))
                            {
                                ChangesJson.WriteDocumentChange(writer, commit.PayloadOf(next));
                                count++;
                            }
                            if (watches.MatchesAttachment(changes[next]))
                            {
                                ChangesJson.WriteAttachmentChange(writer, changes[next], commit.DatabaseId);
                                count++;
                            }
                            next++;
                        }
                        if (next < changes.Count)
                        {
                            break; // the frame is full; the rest of the commit goes in the next
                        }
                    }
                    else
                    {
                        ChangesJson.WriteMessage(writer, current);
                        count++;
                    }
                    connection.Release(current);
                    hasCurrent = false;
                }
                if (count == 0)
                {
                    continue; // nothing of these commits is watched
                }
                writer.WriteEndArray();
                writer.Flush();
                await socket.SendAsync(buffer.WrittenMemory, WebSocketMessageType.Text, true, connection.Aborted).ConfigureAwait(false);
                connection.CountSent(count);
            }

            var reason = connection.CloseReason;
            if (reason == ChangesCloseReason.TooSlow)
            {
                var notice = ChangesJson.Error(
                    $"TooSlow: more than {connection.Capacity:N0} changes waited for this client, which did not read them fast enough; the connection is closed and the changes after the last one received are not sent. Reconnect and watch again (GET /databases/{{db}}/changes/events with Last-Event-ID resumes without a gap).",
                    "TooSlow");
                await socket.SendAsync(Frame(notice), WebSocketMessageType.Text, true, connection.Aborted).ConfigureAwait(false);
            }
            var (status, description) = CloseStatusOf(reason);
            await WebSocketClosing.SendCloseAsync(socket, status, description, connection.Aborted).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or WebSocketException or ObjectDisposedException)
        {
            // The client went away, or did not take our last messages within the grace.
            socket.Abort();
        }
        finally
        {
            writer.Dispose();
        }
    }

    private static byte[] Frame(byte[] message)
    {
        var frame = new byte[message.Length + 2];
        frame[0] = (byte)'[';
        message.CopyTo(frame, 1);
        frame[^1] = (byte)']';
        return frame;
    }

    private static (WebSocketCloseStatus Status, string Description) CloseStatusOf(ChangesCloseReason reason) => reason switch
    {
        ChangesCloseReason.TooSlow => (WebSocketCloseStatus.PolicyViolation, "TooSlow"),
        ChangesCloseReason.MessageTooBig => (WebSocketCloseStatus.MessageTooBig, "MessageTooBig"),
        ChangesCloseReason.DatabaseClosed => (WebSocketCloseStatus.EndpointUnavailable, "DatabaseClosed"),
        ChangesCloseReason.ServerStopping => (WebSocketCloseStatus.EndpointUnavailable, "ServerStopping"),
        ChangesCloseReason.Dropped => (WebSocketCloseStatus.NormalClosure, "Dropped"),
        _ => (WebSocketCloseStatus.NormalClosure, "Bye"),
    };
}
