using System.Text.Json;

namespace Jackdaw.Client.Subscriptions;

/// <summary>
/// A <c>{"Type":"Batch","Items":[{"Id","Etag","ChangeVector","Data"}],"Includes":{id: document},"LastEtag":n}</c>
/// message taken apart with one reader: the documents stay slices of <see cref="Body"/> (no copies),
/// which the batch's items and sessions read from.
/// </summary>
internal sealed class BatchMessage
{
    private BatchMessage(byte[] body)
    {
        Body = body;
    }

    public byte[] Body { get; }

    public List<(string Id, long Etag, string? ChangeVector, Range Data)> Items { get; } = [];

    public List<(string Id, Range Document)> Includes { get; } = [];

    public long LastEtag { get; private set; } = -1;

    /// <exception cref="JsonException">Not such a message.</exception>
    public static BatchMessage Parse(byte[] body)
    {
        var message = new BatchMessage(body);
        var reader = new Utf8JsonReader(body);
        Expect(reader.Read() && reader.TokenType == JsonTokenType.StartObject, "an object");
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Items"u8))
            {
                reader.Read();
                Expect(reader.TokenType == JsonTokenType.StartArray, "\"Items\" to be an array");
                while (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
                {
                    message.Items.Add(ReadItem(ref reader));
                }
            }
            else if (reader.ValueTextEquals("Includes"u8))
            {
                reader.Read();
                Expect(reader.TokenType == JsonTokenType.StartObject, "\"Includes\" to be an object");
                while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
                {
                    var id = reader.GetString()!;
                    reader.Read();
                    var start = (int)reader.TokenStartIndex;
                    var isDocument = reader.TokenType == JsonTokenType.StartObject;
                    reader.Skip();
                    if (isDocument)
                    {
                        message.Includes.Add((id, start..(int)reader.BytesConsumed));
                    }
                }
            }
            else if (reader.ValueTextEquals("LastEtag"u8))
            {
                reader.Read();
                message.LastEtag = reader.GetInt64();
            }
            else
            {
                reader.Read();
                reader.Skip();
            }
        }

        Expect(message.LastEtag >= 0, "a \"LastEtag\"");
        return message;
    }

    private static (string Id, long Etag, string? ChangeVector, Range Data) ReadItem(ref Utf8JsonReader reader)
    {
        string? id = null, changeVector = null;
        long etag = 0;
        Range? data = null;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Id"u8))
            {
                reader.Read();
                id = reader.GetString();
            }
            else if (reader.ValueTextEquals("Etag"u8))
            {
                reader.Read();
                etag = reader.GetInt64();
            }
            else if (reader.ValueTextEquals("ChangeVector"u8))
            {
                reader.Read();
                changeVector = reader.TokenType == JsonTokenType.String ? reader.GetString() : null;
            }
            else if (reader.ValueTextEquals("Data"u8))
            {
                reader.Read();
                Expect(reader.TokenType == JsonTokenType.StartObject, "an item's \"Data\" to be an object");
                var start = (int)reader.TokenStartIndex;
                reader.Skip();
                data = start..(int)reader.BytesConsumed;
            }
            else
            {
                reader.Read();
                reader.Skip();
            }
        }

        Expect(id is not null && data is not null, "each item to have an \"Id\" and \"Data\"");
        return (id!, etag, changeVector, data!.Value);
    }

    private static void Expect(bool condition, string what)
    {
        if (!condition)
        {
            throw new JsonException($"A subscription batch message was expected to have {what}.");
        }
    }
}
