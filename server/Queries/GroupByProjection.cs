using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Queries;

/// <summary>
/// A result row of a group-by query, projected by its select list. The row's fields are flat,
/// named by path (<c>"ShipTo.City"</c>, <c>"Lines[].Product"</c>, <c>"Count"</c>, <c>"Freight"</c>),
/// so each item is read by its name, not walked as a path: a group-by field or sum as the row
/// holds it, <c>count()</c> as <c>Count</c>, <c>key()</c> as the group-by value (an object of the
/// group-by fields when there are several). A field the row lacks is null.
/// </summary>
public static class GroupByProjection
{
    private static readonly JsonWriterOptions Options = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true };

    /// <summary>Writes the projection of <paramref name="row"/> (the result's JSON) with <c>@metadata</c> <c>{"@projection":true}</c>.</summary>
    public static void WriteRow(IBufferWriter<byte> output, RqlQuery query, ReadOnlySpan<byte> row)
    {
        var fields = Fields(row);
        using var writer = new Utf8JsonWriter(output, Options);
        writer.WriteStartObject();
        foreach (var item in query.Select)
        {
            writer.WritePropertyName(item.Name);
            if (item.Aggregate == RqlAggregate.Key && query.GroupBy.Count > 1)
            {
                writer.WriteStartObject();
                foreach (var field in query.GroupBy)
                {
                    writer.WritePropertyName(field.ToString());
                    WriteField(writer, fields, field.ToString());
                }
                writer.WriteEndObject();
                continue;
            }
            WriteField(writer, fields, item.Path.ToString());
        }
        writer.WritePropertyName("@metadata");
        writer.WriteStartObject();
        writer.WriteBoolean("@projection", true);
        writer.WriteEndObject();
        writer.WriteEndObject();
    }

    private static void WriteField(Utf8JsonWriter writer, Dictionary<string, byte[]> fields, string name)
    {
        if (fields.TryGetValue(name, out var raw))
        {
            writer.WriteRawValue(raw, skipInputValidation: true);
        }
        else
        {
            writer.WriteNullValue();
        }
    }

    /// <summary>The row's top-level properties, each as its raw JSON.</summary>
    private static Dictionary<string, byte[]> Fields(ReadOnlySpan<byte> row)
    {
        var fields = new Dictionary<string, byte[]>(StringComparer.Ordinal);
        var reader = new Utf8JsonReader(row);
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            return fields;
        }
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var name = reader.GetString()!;
            reader.Read();
            var start = (int)reader.TokenStartIndex;
            reader.Skip();
            fields[name] = row[start..(int)reader.BytesConsumed].ToArray();
        }
        return fields;
    }
}
