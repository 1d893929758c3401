using System.Buffers;
using System.Net;
using System.Net.WebSockets;
using System.Text.Json;

namespace Jackdaw.Client.Changes;

// The receiving side of the changes connection: frames, messages, confirmations, notifications.
internal sealed partial class DatabaseChanges
{
    private async Task ReceiveAsync(ClientWebSocket socket, CancellationToken token)
    {
        var frame = new ArrayBufferWriter<byte>(16 * 1024);
        while (true)
        {
            frame.ResetWrittenCount();
            ValueWebSocketReceiveResult result;
            do
            {
                result = await socket.ReceiveAsync(frame.GetMemory(16 * 1024), token).ConfigureAwait(false);
                frame.Advance(result.Count);
            }
            while (!result.EndOfMessage);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                if (socket.State == WebSocketState.CloseReceived)
                {
                    await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, token).ConfigureAwait(false);
                }
                return;
            }
            Dispatch(frame.WrittenMemory);
        }
    }

    /// <summary>Handles a frame: a JSON array of messages (or one message).</summary>
    private void Dispatch(ReadOnlyMemory<byte> frame)
    {
        using var json = JsonDocument.Parse(frame);
        var root = json.RootElement;
        if (root.ValueKind == JsonValueKind.Array)
        {
            foreach (var message in root.EnumerateArray())
            {
                Handle(message);
            }
        }
        else
        {
            Handle(root);
        }
    }

    private void Handle(JsonElement message)
    {
        if (message.ValueKind != JsonValueKind.Object || !message.TryGetProperty("Type", out var type))
        {
            return;
        }
        switch (type.GetString())
        {
            case "Confirm":
                Confirm(message, null);
                break;
            case "Error":
                var error = new ChangesException(
                    message.TryGetProperty("Exception", out var text) ? text.GetString() ?? "The server sent an error." : "The server sent an error.",
                    message.TryGetProperty("Error", out var code) ? code.GetString() : null);
                if (!message.TryGetProperty("CommandId", out _) || !Confirm(message, error))
                {
                    RaiseError(error);
                }
                break;
            case "DocumentChange":
                var value = message.GetProperty("Value");
                Notify(new DocumentChange
                {
                    Type = Enum.TryParse<DocumentChangeTypes>(value.GetProperty("Type").GetString(), out var kind) ? kind : DocumentChangeTypes.None,
                    Id = value.GetProperty("Id").GetString() ?? "",
                    CollectionName = value.TryGetProperty("CollectionName", out var collection) ? collection.GetString() : null,
                    ChangeVector = value.TryGetProperty("ChangeVector", out var changeVector) ? changeVector.GetString() : null,
                });
                break;
            case "AttachmentChange":
                var attachment = message.GetProperty("Value");
                Notify(new AttachmentChange
                {
                    Type = Enum.TryParse<DocumentChangeTypes>(attachment.GetProperty("Type").GetString(), out var attachmentKind) ? attachmentKind : DocumentChangeTypes.None,
                    DocumentId = attachment.GetProperty("DocumentId").GetString() ?? "",
                    Name = attachment.GetProperty("Name").GetString() ?? "",
                    CollectionName = attachment.TryGetProperty("CollectionName", out var attachmentCollection) ? attachmentCollection.GetString() : null,
                    ChangeVector = attachment.TryGetProperty("ChangeVector", out var attachmentVector) ? attachmentVector.GetString() : null,
                });
                break;
            case "IndexChange":
                var index = message.GetProperty("Value");
                Notify(new IndexChange
                {
                    Type = Enum.TryParse<IndexChangeTypes>(index.GetProperty("Type").GetString(), out var indexKind) ? indexKind : IndexChangeTypes.None,
                    Name = index.GetProperty("Name").GetString() ?? "",
                });
                break;
            case "OperationStatusChange":
                Notify(OperationStatusChange.Read(message.GetProperty("Value")));
                break;
        }
    }

    /// <summary>Completes (or fails) the command the message names; false when none waits for it.</summary>
    private bool Confirm(JsonElement message, Exception? error)
    {
        if (!message.TryGetProperty("CommandId", out var idElement) || !idElement.TryGetInt64(out var id))
        {
            return false;
        }
        TaskCompletionSource? confirmation;
        lock (_lock)
        {
            if (!_confirmations.Remove(id, out confirmation))
            {
                return false;
            }
        }
        if (error is null)
        {
            confirmation.TrySetResult();
        }
        else
        {
            confirmation.TrySetException(error);
        }
        return true;
    }

    private void Notify(object change)
    {
        var type = change.GetType();
        foreach (var registration in Volatile.Read(ref _registrations))
        {
            if (registration.Type != type)
            {
                continue;
            }
            try
            {
                if (registration.Filter(change))
                {
                    registration.OnNext(change);
                }
            }
            catch (Exception e)
            {
                RaiseError(e);
            }
        }
    }

    private void RaiseError(Exception error)
    {
        try
        {
            OnError?.Invoke(error);
        }
        catch (Exception)
        {
            // A failing error handler must not stop the connection.
        }
    }
}
