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
    public static void WriteDocument(Utf8JsonWriter writer, ArrayBufferWriter<byte> scratch, ReadOnlySpan<byte> entityJson, EntityTypeInfo type, ReadOnlySpan<byte> loadedMetadata, MetadataDictionary? metadata, JsonSerializerOptions options)
    {
        scratch.ResetWrittenCount();
        var (headLength, tailStart) = SplitAroundId(entityJson, type.IdJsonName);
        var head = entityJson[..headLength];
        var tail = entityJson[tailStart..];
        scratch.Write(head);
        scratch.Write(tail[..^1]);
        var hasProperties = head.Length + tail.Length > 2;
        scratch.Write(hasProperties ? ",\"@metadata\":"u8 : "\"@metadata\":"u8);
        if (metadata is null && loadedMetadata.IsEmpty)
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
        {
            throw new InvalidOperationException("An entity must serialize as a JSON object.");
        }
        return idJsonName is not null && TryFindProperty(entityJson, idJsonName, null, out var start, out var end, out _)
            ? (start, end)
            : (1, 1);
    }

    /// <summary>
    /// Finds the top-level property <paramref name="name"/> of a compact JSON object: it spans
    /// <paramref name="start"/>..<paramref name="end"/> with one adjoining comma.
    /// <paramref name="valueEquals"/> says whether its value is the string <paramref name="expected"/>.
    /// </summary>
    private static bool TryFindProperty(ReadOnlySpan<byte> json, ReadOnlySpan<byte> name, string? expected, out int start, out int end, out bool valueEquals)
    {
        var reader = new Utf8JsonReader(json);
        reader.Read();
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var isMatch = reader.ValueTextEquals(name);
            start = (int)reader.TokenStartIndex;
            reader.Read();
            valueEquals = isMatch && expected is not null && reader.TokenType == JsonTokenType.String && reader.ValueTextEquals(expected);
            if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
            {
                reader.Skip();
            }
            if (!isMatch)
            {
                continue;
            }

            end = (int)reader.BytesConsumed;
            if (json[start - 1] == (byte)',')
            {
                start--;
            }
            else if (json[end] == (byte)',')
            {
                end++;
            }
            return true;
        }

        (start, end, valueEquals) = (0, 0, false);
        return false;
    }

    /// <summary>
    /// Where the <c>"@metadata":</c> property whose value lies at <paramref name="valueOffset"/>
    /// (<paramref name="valueLength"/> bytes) starts and ends in <paramref name="document"/>, with
    /// one adjoining comma; an empty range unless the property is written compactly.
    /// </summary>
    public static Range FindMetadataProperty(ReadOnlySpan<byte> document, int valueOffset, int valueLength)
    {
        var name = "\"@metadata\":"u8;
        if (valueOffset <= name.Length || !document[..valueOffset].EndsWith(name))
        {
            return default;
        }
        var start = valueOffset - name.Length;
        var end = valueOffset + valueLength;
        if (end >= document.Length)
        {
            return default;
        }
        if (document[start - 1] == (byte)',')
        {
            start--;
        }
        else if (document[start - 1] != (byte)'{')
        {
            return default;
        }
        else if (document[end] == (byte)',')
        {
            end++;
        }
        else if (document[end] != (byte)'}')
        {
            return default;
        }
        return start..end;
    }

    /// <summary>
    /// True when the entity's JSON is byte for byte the stored document it was loaded from, both
    /// taken without the properties the server keeps apart: the entity's id property (which must
    /// still hold <paramref name="id"/>, as the session set it) and the document's <c>@metadata</c>.
    /// Then the entity is unchanged. False says nothing: the stored JSON may differ only in form
    /// (another writer's property order or number text, properties the type lacks).
    /// </summary>
    public static bool MatchesStored(ReadOnlySpan<byte> entityJson, EntityTypeInfo type, string? id, ReadOnlySpan<byte> document, Range metadataProperty)
    {
        var (metadataStart, metadataLength) = metadataProperty.GetOffsetAndLength(document.Length);
        if (metadataLength == 0)
        {
            return false;
        }
        var storedHead = document[..metadataStart];
        var storedTail = document[(metadataStart + metadataLength)..];
        if (type.IdJsonName is null)
        {
            return ConcatenationsEqual(entityJson, default, storedHead, storedTail);
        }

        // Without a setter the id property holds whatever deserializing gave, which the stored body cannot show.
        if (type.SetId is null || !TryFindProperty(entityJson, type.IdJsonName, id, out var idStart, out var idEnd, out var idMatches) || !idMatches)
        {
            return false;
        }
        return ConcatenationsEqual(entityJson[..idStart], entityJson[idEnd..], storedHead, storedTail);
    }

    /// <summary>Whether <paramref name="a1"/> followed by <paramref name="a2"/> equals <paramref name="b1"/> followed by <paramref name="b2"/>.</summary>
    internal static bool ConcatenationsEqual(ReadOnlySpan<byte> a1, ReadOnlySpan<byte> a2, ReadOnlySpan<byte> b1, ReadOnlySpan<byte> b2)
    {
        if (a1.Length + a2.Length != b1.Length + b2.Length)
        {
            return false;
        }
        if (a1.Length > b1.Length)
        {
            return ConcatenationsEqual(b1, b2, a1, a2);
        }

        // b1 = a1 + middle, and a2 = middle + b2.
        var middle = b1[a1.Length..];
        return b1.StartsWith(a1) && a2.StartsWith(middle) && a2[middle.Length..].SequenceEqual(b2);
    }

    /// <summary>
    /// Metadata sent with a write: what the session's dictionary holds if the user touched it,
    /// else what was loaded (so metadata other clients set is kept), else the type's defaults.
    /// Server-managed keys (<c>@id</c>, <c>@change-vector</c>, <c>@last-modified</c>) are never sent.
    /// <paramref name="loadedMetadata"/> is the loaded <c>@metadata</c> object's JSON, or empty.
    /// </summary>
    public static void WriteMetadata(Utf8JsonWriter writer, EntityTypeInfo type, ReadOnlySpan<byte> loadedMetadata, MetadataDictionary? metadata, JsonSerializerOptions options)
    {
        writer.WriteStartObject();
        if (metadata is not null)
        {
            foreach (var (key, value) in metadata)
            {
                if (MetadataKeys.IsServerManaged(key))
                {
                    continue;
                }
                writer.WritePropertyName(key);
                if (value is null)
                {
                    writer.WriteNullValue();
                }
                else
                {
                    JsonSerializer.Serialize(writer, value, value.GetType(), options);
                }
            }
        }
        else if (!loadedMetadata.IsEmpty)
        {
            // Values are copied as the server sent them; names go through the writer, which escapes them again.
            bool hasCollection = false, hasClrType = false;
            var reader = new Utf8JsonReader(loadedMetadata);
            reader.Read();
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var serverManaged = reader.ValueTextEquals("@id"u8) || reader.ValueTextEquals("@change-vector"u8) || reader.ValueTextEquals("@last-modified"u8);
                hasCollection |= reader.ValueTextEquals("@collection"u8);
                hasClrType |= reader.ValueTextEquals("Jackdaw-Clr-Type"u8);
                if (!serverManaged)
                {
                    if (reader.ValueIsEscaped)
                    {
                        writer.WritePropertyName(reader.GetString()!);
                    }
                    else
                    {
                        writer.WritePropertyName(reader.ValueSpan);
                    }
                }

                reader.Read();
                var valueStart = (int)reader.TokenStartIndex;
                reader.Skip();
                if (!serverManaged)
                {
                    writer.WriteRawValue(loadedMetadata[valueStart..(int)reader.BytesConsumed], skipInputValidation: true);
                }
            }

            if (!hasCollection)
            {
                writer.WriteString(MetadataKeys.Collection, type.Collection);
            }
            if (!hasClrType)
            {
                writer.WriteString(MetadataKeys.ClrType, type.ClrTypeName);
            }
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
