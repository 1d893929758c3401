using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Rql;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Queries;

/// <summary>
/// A query's result as JSON: the document from its blittable form, or its projection when the
/// query selects (stored fields from the index where it keeps them, other paths from the document,
/// with <c>@metadata</c> <c>{"@id","@projection":true}</c>). Also a subscription's batch items.
/// </summary>
public static class QueryProjection
{
    /// <summary>A document, or its projection when the query selects, as JSON (also a subscription's batch items).</summary>
    public static void WriteResult(IBufferWriter<byte> output, RqlQuery query, string id, ReadOnlySpan<byte> document, Lucene.Net.Documents.Document? stored, Indexing.Index? index)
    {
        if (query.Select.Count == 0)
        {
            BlittableJsonWriter.WriteTo(document, output);
            return;
        }
        using var writer = new Utf8JsonWriter(output, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true });
        writer.WriteStartObject();
        var root = BlittableReader.Open(document);
        foreach (var projection in query.Select)
        {
            var name = projection.Alias ?? projection.Path.ToString();
            writer.WritePropertyName(name);
            var storedJson = stored is not null && index is not null && index.PlanOf(projection.Path.ToString()).Stored
                ? stored.Get(projection.Path.ToString() + LuceneFields.StoredSuffix)
                : null;
            if (storedJson is not null)
            {
                writer.WriteRawValue(storedJson, skipInputValidation: true);
                continue;
            }
            var value = new ArrayBufferWriter<byte>(64);
            WritePath(value, root, projection.Path);
            writer.WriteRawValue(value.WrittenSpan, skipInputValidation: true);
        }
        writer.WritePropertyName("@metadata");
        writer.WriteStartObject();
        writer.WriteString("@id", id);
        writer.WriteBoolean("@projection", true);
        writer.WriteEndObject();
        writer.WriteEndObject();
    }

    /// <summary>The value a path reaches in a document (arrays walked: several values become an array; none is null).</summary>
    private static void WritePath(ArrayBufferWriter<byte> output, BlittableObject root, RqlPath path)
    {
        var segments = path.Segments.Select(s => s.Name).ToArray();
        var values = new ArrayBufferWriter<byte>();
        var count = 0;
        Walk(root, segments, 0, values, ref count, path.Segments.Any(s => s.Array));
        if (count == 0)
        {
            output.Write("null"u8);
            return;
        }
        output.Write(values.WrittenSpan);
    }

    private static void Walk(BlittableObject current, string[] path, int depth, ArrayBufferWriter<byte> values, ref int count, bool asArray)
    {
        if (!current.TryGet(path[depth], out var value))
            return;
        if (depth == path.Length - 1)
        {
            Append(values, value, ref count);
            return;
        }
        Visit(value, path, depth + 1, values, ref count);
    }

    private static void Visit(BlittableValue value, string[] path, int depth, ArrayBufferWriter<byte> values, ref int count)
    {
        switch (value.Type)
        {
            case BlittableToken.Object:
                var obj = value.GetObject();
                if (obj.TryGet(path[depth], out var next))
                {
                    if (depth == path.Length - 1)
                        Append(values, next, ref count);
                    else
                        Visit(next, path, depth + 1, values, ref count);
                }
                return;
            case BlittableToken.Array:
                // A path through an array projects every element's value, as an array.
                var array = value.GetArray();
                var inner = new ArrayBufferWriter<byte>();
                var innerCount = 0;
                for (var i = 0; i < array.Length; i++)
                    Visit(array[i], path, depth, inner, ref innerCount);
                var wrapped = new ArrayBufferWriter<byte>();
                wrapped.Write("["u8);
                wrapped.Write(inner.WrittenSpan);
                wrapped.Write("]"u8);
                AppendRaw(values, wrapped.WrittenSpan, ref count);
                return;
        }
    }

    private static void Append(ArrayBufferWriter<byte> values, BlittableValue value, ref int count)
    {
        if (count++ > 0)
            values.Write(","u8);
        BlittableJsonWriter.WriteValue(value, values);
    }

    private static void AppendRaw(ArrayBufferWriter<byte> values, ReadOnlySpan<byte> json, ref int count)
    {
        if (count++ > 0)
            values.Write(","u8);
        values.Write(json);
    }
}
