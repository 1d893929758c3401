using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Queries;

/// <summary>
/// RavenDB's <c>include</c>: the documents whose ids the loaded documents name under a path
/// (<c>Company</c>, <c>Address.Owner</c>, <c>Lines[].Product</c>; arrays are walked wherever they
/// are met), answered under <c>"Includes":{id: document}</c> so a client needs no second request.
/// </summary>
public static class DocumentIncludes
{
    /// <summary>Adds to <paramref name="ids"/> every string that <paramref name="paths"/> reach in the document.</summary>
    public static void Collect(ReadOnlySpan<byte> document, IReadOnlyList<string[]> paths, HashSet<string> ids)
    {
        var root = BlittableReader.Open(document);
        foreach (var path in paths)
            Walk(root, path, 0, ids);
    }

    /// <summary>The include paths of a query, split into property names (null: it includes nothing).</summary>
    public static List<string[]>? PathsOf(Rql.RqlQuery query) =>
        query.Include.Count == 0 ? null : query.Include.Select(p => p.Segments.Select(s => s.Name).ToArray()).ToList();

    /// <summary>An include path split into property names (<c>Lines[].Product</c> → Lines, Product).</summary>
    public static string[] Parse(string path) =>
        path.Split('.', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(segment => segment.EndsWith("[]", StringComparison.Ordinal) ? segment[..^2] : segment)
            .ToArray();

    /// <summary>Writes <c>{"id":document,...}</c> for the included ids that exist (missing ones are left out).</summary>
    public static void Write(IBufferWriter<byte> output, DocumentsReader reader, IEnumerable<string> ids)
    {
        output.Write("{"u8);
        var first = true;
        foreach (var id in ids)
        {
            if (!reader.TryGet(id, out var record))
                continue;
            if (!first)
                output.Write(","u8);
            first = false;
            output.Write("\""u8);
            output.Write(JsonEncodedText.Encode(record.Id, JavaScriptEncoder.UnsafeRelaxedJsonEscaping).EncodedUtf8Bytes);
            output.Write("\":"u8);
            BlittableJsonWriter.WriteTo(record.Document, output);
        }
        output.Write("}"u8);
    }

    private static void Walk(BlittableObject current, string[] path, int depth, HashSet<string> ids)
    {
        if (current.TryGet(path[depth], out var value))
            Visit(value, path, depth + 1, ids);
    }

    private static void Visit(BlittableValue value, string[] path, int depth, HashSet<string> ids)
    {
        switch (value.Type)
        {
            case BlittableToken.String when depth == path.Length:
                if (value.GetString() is { Length: > 0 } id && DocumentIds.Validate(id) is null)
                    ids.Add(id);
                break;
            case BlittableToken.Array:
                var array = value.GetArray();
                for (var i = 0; i < array.Length; i++)
                    Visit(array[i], path, depth, ids);
                break;
            case BlittableToken.Object when depth < path.Length:
                Walk(value.GetObject(), path, depth, ids);
                break;
        }
    }
}
