using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
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
        ArrayBufferWriter<byte>? value = null;
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
            value ??= new ArrayBufferWriter<byte>(256);
            value.ResetWrittenCount();
            WritePath(value, document, projection.Path);
            writer.WriteRawValue(value.WrittenSpan, skipInputValidation: true);
        }
        writer.WritePropertyName("@metadata");
        writer.WriteStartObject();
        writer.WriteString("@id", id);
        writer.WriteBoolean("@projection", true);
        writer.WriteEndObject();
        writer.WriteEndObject();
    }

    /// <summary>
    /// A map-reduce result row (its JSON, and the same as blittable), or its projection when the query selects, with
    /// <c>@metadata</c> (no <c>@id</c>: a row is not a document; <c>@projection</c> for a projection).
    /// </summary>
    public static void WriteReduceRow(IBufferWriter<byte> output, RqlQuery query, ReadOnlySpan<byte> json, ReadOnlySpan<byte> row)
    {
        if (query.IsGroupBy && query.Select.Count > 0)
        {
            GroupByProjection.WriteRow(output, query, json);
            return;
        }
        if (query.Select.Count == 0)
        {
            // The row as the reduce wrote it (its properties in their order), and its metadata.
            var body = json.TrimEnd(" \t\r\n"u8);
            var last = body.Length - 1;
            var empty = body[1..last].Trim(" \t\r\n"u8).IsEmpty;
            output.Write(body[..last]);
            output.Write(empty ? "\"@metadata\":{}}"u8 : ",\"@metadata\":{}}"u8);
            return;
        }
        using var writer = new Utf8JsonWriter(output, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true });
        writer.WriteStartObject();
        var value = new ArrayBufferWriter<byte>(256);
        foreach (var projection in query.Select)
        {
            writer.WritePropertyName(projection.Alias ?? projection.Path.ToString());
            value.ResetWrittenCount();
            WritePath(value, row, projection.Path);
            writer.WriteRawValue(value.WrittenSpan, skipInputValidation: true);
        }
        writer.WritePropertyName("@metadata");
        writer.WriteStartObject();
        writer.WriteBoolean("@projection", true);
        writer.WriteEndObject();
        writer.WriteEndObject();
    }

    /// <summary>
    /// The value a path reaches in a document (<see cref="DocumentPath"/>'s walk): the value itself
    /// (an object or array whole), an array of values for each array the path goes through (nested
    /// as the arrays are, an element that does not reach a value left out), or null when it reaches none.
    /// </summary>
    private static void WritePath(ArrayBufferWriter<byte> output, ReadOnlySpan<byte> document, RqlPath path)
    {
        var writer = new ProjectedValue(output);
        path.DocumentPath.Walk(document, ref writer);
        if (!writer.Written)
        {
            output.Write("null"u8);
        }
    }

    /// <summary>Writes the values of a walk as JSON, arrays as the walk enters and leaves them.</summary>
    private struct ProjectedValue(ArrayBufferWriter<byte> output) : IDocumentPathVisitor
    {
        private bool _comma;

        public bool Written { get; private set; }

        public bool Leaf(PathLeaf leaf)
        {
            Separate();
            BlittableJsonWriter.WriteValue(leaf.Value, output);
            return true;
        }

        public void EnterArray()
        {
            Separate();
            output.Write("["u8);
            _comma = false;
        }

        public void LeaveArray()
        {
            output.Write("]"u8);
            _comma = true;
        }

        private void Separate()
        {
            if (_comma)
            {
                output.Write(","u8);
            }
            _comma = true;
            Written = true;
        }
    }
}
