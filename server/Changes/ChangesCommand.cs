using Jackdaw.Storage.Blittable;
using System.Globalization;
using System.Text.Json;

namespace Jackdaw.Server.Changes;

/// <summary>
/// A command a client sends on the changes WebSocket, as RavenDB's clients send it:
/// <c>{"CommandId":1,"Command":"watch-doc","Param":"orders/1"}</c> (<c>Params</c>, an array, is
/// read past: only the counter and time-series commands use it).
/// </summary>
/// <param name="CommandId">The id to confirm with; null when the client sent none (nothing is confirmed).</param>
/// <param name="Name">The command, e.g. <c>watch-prefix</c>.</param>
/// <param name="Param">Its parameter (an id, prefix, collection or index name); null when absent.</param>
public sealed record ChangesCommand(long? CommandId, string Name, string? Param)
{
    /// <summary>
    /// Parses one text message. On failure <paramref name="error"/> says what was wrong, and
    /// <paramref name="commandId"/> is the id if the message got that far (so the error can name it).
    /// </summary>
    public static bool TryParse(ReadOnlySpan<byte> json, out ChangesCommand? command, out long? commandId, out string? error)
    {
        command = null;
        commandId = null;
        string? name = null;
        string? param = null;
        try
        {
            var reader = new Utf8JsonReader(json, new JsonReaderOptions { MaxDepth = 8 });
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                error = "A command is a JSON object such as {\"CommandId\":1,\"Command\":\"watch-doc\",\"Param\":\"orders/1\"}.";
                return false;
            }
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                if (reader.ValueTextEquals("CommandId"u8))
                {
                    reader.Read();
                    if (reader.TokenType == JsonTokenType.Number && reader.TryGetInt64(out var id))
                    {
                        commandId = id;
                    }
                    else if (reader.TokenType != JsonTokenType.Null)
                    {
                        error = "CommandId must be an integer.";
                        return false;
                    }
                }
                else if (reader.ValueTextEquals("Command"u8))
                {
                    reader.Read();
                    name = reader.TokenType == JsonTokenType.String ? reader.GetString() : null;
                }
                else if (reader.ValueTextEquals("Param"u8))
                {
                    reader.Read();
                    param = reader.TokenType switch
                    {
                        JsonTokenType.String => reader.GetString(),
                        // The operation commands send the operation id; keep it as text.
                        JsonTokenType.Number => reader.TryGetInt64(out var n) ? n.ToString(CultureInfo.InvariantCulture) : reader.GetDouble().ToString(CultureInfo.InvariantCulture),
                        _ => null,
                    };
                    if (param is null)
                    {
                        reader.Skip();
                    }
                }
                else
                {
                    reader.Read();
                    reader.Skip();
                }
            }
            if (reader.TokenType != JsonTokenType.EndObject || reader.Read())
            {
                error = "The message holds more than one JSON object; send one command per message.";
                return false;
            }
        }
        catch (JsonException e)
        {
            error = "The message is not JSON: " + JsonSyntaxErrors.Describe(e);
            return false;
        }
        catch (InvalidOperationException e)
        {
            // A string the reader cannot decode (an unpaired surrogate escape such as \ud800).
            error = "The message has a string that is not valid text: " + e.Message;
            return false;
        }
        if (string.IsNullOrEmpty(name))
        {
            error = "The command has no \"Command\" (a string such as \"watch-doc\").";
            return false;
        }
        command = new ChangesCommand(commandId, name, param);
        error = null;
        return true;
    }
}
