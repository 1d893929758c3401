using System.Buffers;
using System.Text.Json;
using Jackdaw.Client.Conventions;
using Jackdaw.Client.Session;

namespace Jackdaw.Client.Json;

/// <summary>Builds the stored form of a document: the entity's JSON without its id property, plus <c>@metadata</c>.</summary>
internal static class DocumentJson
{
    /// <summary>
    /// Writes <c>{...entity properties except the id..., "@metadata": {...}}</c> as the next value of
    /// <paramref name="writer"/>. The entity's bytes are copied around the id property, not
    /// re-serialized; <paramref name="scratch"/> holds the composed document meanwhile.
    /// </summary>
    public static void WriteDocument(Utf8JsonWriter writer, ArrayBufferWriter<byte> scratch, ReadOnlySpan<byte> entityJson, EntityTypeInfo type, JsonElement? loadedMetadata, MetadataDictionary? metadata, JsonSerializerOptions options)
    {
        scratch.ResetWrittenCount();
        var (headLength, tailStart) = SplitAroundId(entityJson, type.IdJsonName);
        var head = entityJson[..headLength];
        var tail = entityJson[tailStart..];
        scratch.Write(head);
        scratch.Write(tail[..^1]);
        var hasProperties = head.Length + tail.Length > 2;
        scratch.Write(hasProperties ? ",\"@metadata\":"u8 : "\"@metadata\":"u8);
        if (metadata is null && loadedMetadata is null)
        {
            scratch.Write(type.DefaultMetadataJson);
        }
        else
        {
            using var metadataWriter = new Utf8JsonWriter(scratch, new JsonWriterOptions { Encoder = options.Encoder, SkipValidation = true });
            WriteMetadata(metadataWriter, type, loadedMetadata, metadata, options);
        }

        scratch.Write("}"u8);
        writer.WriteRawValue(scratch.WrittenSpan, skipInputValidation: true);
    }

    /// <summary>
    /// Where the entity's compact JSON stops before its top-level id property and resumes after it
    /// (one adjoining comma included). The serializer writes properties in declaration order and <c>Id</c> usually comes
    /// first, so the scan usually stops at the first property.
    /// </summary>
    private static (int HeadLength, int TailStart) SplitAroundId(ReadOnlySpan<byte> entityJson, byte[]? idJsonName)
    {
        if (entityJson.Length < 2 || entityJson[0] != (byte)'{' || entityJson[^1] != (byte)'}')
            throw new InvalidOperationException("An entity must serialize as a JSON object.");
        if (idJsonName is null)
            return (1, 1);

        var reader = new Utf8JsonReader(entityJson);
        reader.Read();
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var isId = reader.ValueTextEquals(idJsonName);
            var nameStart = (int)reader.TokenStartIndex;
            reader.Read();
            if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
                reader.Skip();
            if (!isId)
                continue;

            var end = (int)reader.BytesConsumed;
            if (entityJson[nameStart - 1] == (byte)',')
                nameStart--;
            else if (entityJson[end] == (byte)',')
                end++;
            return (nameStart, end);
        }

        return (1, 1);
    }

    /// <summary>
    /// Metadata sent with a write: what the session's dictionary holds if the user touched it,
    /// else what was loaded (so metadata other clients set is kept), else the type's defaults.
    /// Server-managed keys (<c>@id</c>, <c>@change-vector</c>, <c>@last-modified</c>) are never sent.
    /// </summary>
    public static void WriteMetadata(Utf8JsonWriter writer, EntityTypeInfo type, JsonElement? loadedMetadata, MetadataDictionary? metadata, JsonSerializerOptions options)
    {
        writer.WriteStartObject();
        if (metadata is not null)
        {
            foreach (var (key, value) in metadata)
            {
                if (MetadataKeys.IsServerManaged(key))
                    continue;
                writer.WritePropertyName(key);
                if (value is null)
                    writer.WriteNullValue();
                else
                    JsonSerializer.Serialize(writer, value, value.GetType(), options);
            }
        }
        else if (loadedMetadata is { ValueKind: JsonValueKind.Object } loaded)
        {
            bool hasCollection = false, hasClrType = false;
            foreach (var property in loaded.EnumerateObject())
            {
                if (MetadataKeys.IsServerManaged(property.Name))
                    continue;
                hasCollection |= property.NameEquals(MetadataKeys.Collection);
                hasClrType |= property.NameEquals(MetadataKeys.ClrType);
                property.WriteTo(writer);
            }

            if (!hasCollection)
                writer.WriteString(MetadataKeys.Collection, type.Collection);
            if (!hasClrType)
                writer.WriteString(MetadataKeys.ClrType, type.ClrTypeName);
        }
        else
        {
            writer.WriteString(MetadataKeys.Collection, type.Collection);
            writer.WriteString(MetadataKeys.ClrType, type.ClrTypeName);
        }

        writer.WriteEndObject();
        writer.Flush();
    }
}
