using System.Text.Json;
using Jackdaw.Client.Conventions;
using Jackdaw.Client.Session;

namespace Jackdaw.Client.Json;

/// <summary>Builds the stored form of a document: the entity's JSON without its id property, plus <c>@metadata</c>.</summary>
internal static class DocumentJson
{
    /// <summary>
    /// Writes <c>{...entity properties except the id..., "@metadata": {...}}</c>. The entity JSON is
    /// copied property by property (values verbatim), so this costs one reader pass, no re-serialization.
    /// </summary>
    public static void WriteDocument(Utf8JsonWriter writer, ReadOnlySpan<byte> entityJson, EntityTypeInfo type, JsonElement? loadedMetadata, MetadataDictionary? metadata, JsonSerializerOptions options)
    {
        writer.WriteStartObject();
        WriteEntityProperties(writer, entityJson, type.IdJsonName);
        writer.WritePropertyName(MetadataKeys.Metadata);
        WriteMetadata(writer, type, loadedMetadata, metadata, options);
        writer.WriteEndObject();
    }

    private static void WriteEntityProperties(Utf8JsonWriter writer, ReadOnlySpan<byte> entityJson, byte[]? idJsonName)
    {
        var reader = new Utf8JsonReader(entityJson);
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            throw new InvalidOperationException("An entity must serialize as a JSON object.");
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var skip = (idJsonName is not null && reader.ValueTextEquals(idJsonName)) || reader.ValueTextEquals("@metadata"u8);
            if (!skip)
            {
                if (reader.ValueIsEscaped)
                    writer.WritePropertyName(reader.GetString()!);
                else
                    writer.WritePropertyName(reader.ValueSpan);
            }

            reader.Read();
            var start = (int)reader.TokenStartIndex;
            if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
                reader.Skip();
            if (!skip)
                writer.WriteRawValue(entityJson[start..(int)reader.BytesConsumed], skipInputValidation: true);
        }
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
    }
}
