using System.Text.Json;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.MapReduce;

/// <summary>
/// A reduce result row (a JSON object) as the fields of its Lucene entry: each top-level property
/// one field, valued as a JavaScript map's are (null, booleans, numbers as doubles, strings, arrays
/// one value per element, objects as their JSON text).
/// </summary>
internal static class ReduceResults
{
    /// <summary>The fields of <paramref name="row"/>; none when it is not an object.</summary>
    public static IndexField[] ToFields(byte[] row)
    {
        using var document = JsonDocument.Parse(row);
        if (document.RootElement.ValueKind != JsonValueKind.Object)
        {
            return [];
        }
        var fields = new List<IndexField>();
        foreach (var property in document.RootElement.EnumerateObject())
        {
            fields.Add(new IndexField(property.Name, ValueOf(property.Value, top: true)));
        }
        return fields.ToArray();
    }

    private static object? ValueOf(JsonElement value, bool top) => value.ValueKind switch
    {
        JsonValueKind.String => value.GetString(),
        JsonValueKind.Number => value.GetDouble(),
        JsonValueKind.True => true,
        JsonValueKind.False => false,
        JsonValueKind.Array when top => value.EnumerateArray().Select(v => ValueOf(v, top: false)).ToList(),
        JsonValueKind.Array or JsonValueKind.Object => new IndexJson(value.GetRawText()),
        _ => null,
    };

    /// <summary>The rows of an encoded result list.</summary>
    public static List<byte[]> Rows(byte[] encoded)
    {
        var rows = new List<byte[]>();
        ReduceEncoding.DecodeList(encoded, rows);
        return rows;
    }
}
