using System.Buffers;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Changes;

/// <summary>
/// The changes feed's JSON, in the shapes RavenDB's clients read:
/// <code>
/// {"Type":"DocumentChange","Value":{"Type":"Put"|"Delete","Id":"orders/1","CollectionName":"Orders","ChangeVector":"A:7-…"}}
/// {"Type":"AttachmentChange","Value":{"Type":"Put"|"Delete","DocumentId":"orders/1","Name":"invoice.pdf","CollectionName":"Orders","ChangeVector":"A:8-…"}}
/// {"Type":"IndexChange","Value":{"Name":"Orders/Totals","Type":"BatchCompleted"|"IndexAdded"|"IndexRemoved"|"SideBySideReplace"}}
/// {"Type":"OperationStatusChange","Value":{"OperationId":7,"State":{…}}}    (State: OperationStateJson)
/// {"CommandId":1,"Type":"Confirm"}
/// {"Type":"Error","Exception":"…"[,"Error":"TooSlow"|"MessageTooBig"|…][,"CommandId":1]}
/// </code>
/// A WebSocket frame carries a JSON array of such messages (RavenDB's server batches so too).
/// </summary>
public static class ChangesJson
{
    // Relaxed escaping: ids and names stay readable (non-ASCII as UTF-8); still valid JSON.
    private static readonly JsonWriterOptions Options = new() { SkipValidation = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public static byte[] DocumentChangeValue(in DocumentChange change, string databaseId)
    {
        var buffer = new ArrayBufferWriter<byte>(128 + change.Id.Length);
        using (var writer = new Utf8JsonWriter(buffer, Options))
        {
            writer.WriteStartObject();
            writer.WriteString("Type"u8, change.Kind == DocumentChangeKind.Put ? "Put"u8 : "Delete"u8);
            writer.WriteString("Id"u8, change.Id);
            if (change.Collection is null)
            {
                writer.WriteNull("CollectionName"u8);
            }
            else
            {
                writer.WriteString("CollectionName"u8, change.Collection);
            }
            writer.WriteString("ChangeVector"u8, change.ChangeVector ?? ChangeVectors.Format(ChangeVectors.DefaultTag, change.Etag, databaseId));
            writer.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    public static byte[] IndexChangeValue(string name, IndexChangeType type) =>
        Build(writer =>
        {
            writer.WriteStartObject();
            writer.WriteString("Name"u8, name);
            writer.WriteString("Type"u8, type.ToString());
            writer.WriteEndObject();
        });

    /// <summary>The <c>Value</c> of an <c>OperationStatusChange</c>: the operation's id and its state.</summary>
    public static byte[] OperationStatusChangeValue(DatabaseOperationState state) =>
        Build(writer =>
        {
            writer.WriteStartObject();
            writer.WriteNumber("OperationId"u8, state.OperationId);
            writer.WritePropertyName("State"u8);
            OperationStateJson.WriteState(writer, state);
            writer.WriteEndObject();
        });

    public static byte[] Confirm(long commandId) =>
        Build(writer =>
        {
            writer.WriteStartObject();
            writer.WriteNumber("CommandId"u8, commandId);
            writer.WriteString("Type"u8, "Confirm"u8);
            writer.WriteEndObject();
        });

    /// <summary>
    /// An error message: <paramref name="exception"/> is what RavenDB's clients read (they raise it
    /// to the application), <paramref name="error"/> a stable code for programs, and the command
    /// it answers when there is one.
    /// </summary>
    public static byte[] Error(string exception, string? error = null, long? commandId = null) =>
        Build(writer =>
        {
            writer.WriteStartObject();
            writer.WriteString("Type"u8, "Error"u8);
            if (error is not null)
            {
                writer.WriteString("Error"u8, error);
            }
            writer.WriteString("Exception"u8, exception);
            if (commandId is { } id)
            {
                writer.WriteNumber("CommandId"u8, id);
            }
            writer.WriteEndObject();
        });

    /// <summary>Writes <c>{"Type":"DocumentChange","Value":…}</c> around a change's payload.</summary>
    public static void WriteDocumentChange(Utf8JsonWriter writer, byte[] payload)
    {
        writer.WriteStartObject();
        writer.WriteString("Type"u8, "DocumentChange"u8);
        writer.WritePropertyName("Value"u8);
        writer.WriteRawValue(payload, skipInputValidation: true);
        writer.WriteEndObject();
    }

    /// <summary>
    /// Writes <c>{"Type":"AttachmentChange","Value":…}</c> for a change that stored a document again
    /// because one of its attachments was put or deleted; the change vector is the document's new
    /// one (an attachment's change vector is the etag its document took).
    /// </summary>
    public static void WriteAttachmentChange(Utf8JsonWriter writer, in DocumentChange change, string databaseId)
    {
        writer.WriteStartObject();
        writer.WriteString("Type"u8, "AttachmentChange"u8);
        writer.WritePropertyName("Value"u8);
        writer.WriteStartObject();
        writer.WriteString("Type"u8, change.AttachmentKind == DocumentChangeKind.Put ? "Put"u8 : "Delete"u8);
        writer.WriteString("DocumentId"u8, change.Id);
        writer.WriteString("Name"u8, change.AttachmentName);
        if (change.Collection is null)
        {
            writer.WriteNull("CollectionName"u8);
        }
        else
        {
            writer.WriteString("CollectionName"u8, change.Collection);
        }
        writer.WriteString("ChangeVector"u8, change.ChangeVector ?? ChangeVectors.Format(ChangeVectors.DefaultTag, change.Etag, databaseId));
        writer.WriteEndObject();
        writer.WriteEndObject();
    }

    /// <summary>Writes a queued index or operation change, or a whole message (commits are expanded by the sender).</summary>
    public static void WriteMessage(Utf8JsonWriter writer, in ChangesMessage message)
    {
        if (message.Kind is ChangesMessageKind.Index or ChangesMessageKind.Operation)
        {
            writer.WriteStartObject();
            writer.WriteString("Type"u8, message.Kind == ChangesMessageKind.Index ? "IndexChange"u8 : "OperationStatusChange"u8);
            writer.WritePropertyName("Value"u8);
            writer.WriteRawValue(message.Payload!, skipInputValidation: true);
            writer.WriteEndObject();
        }
        else
        {
            writer.WriteRawValue(message.Payload!, skipInputValidation: true);
        }
    }

    private static byte[] Build(Action<Utf8JsonWriter> write)
    {
        var buffer = new ArrayBufferWriter<byte>(64);
        using (var writer = new Utf8JsonWriter(buffer, Options))
        {
            write(writer);
        }
        return buffer.WrittenSpan.ToArray();
    }
}
