using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Queries;

/// <summary>
/// RavenDB's <c>include</c>: the documents whose ids the loaded documents name under a path
/// (<c>Company</c>, <c>Address.Owner</c>, <c>Lines[].Product</c>; read by <see cref="DocumentPath"/>,
/// so arrays are walked wherever they are met), answered under <c>"Includes":{id: document}</c> so a
/// client needs no second request. Only strings that are valid ids are included.
/// </summary>
public static class DocumentIncludes
{
    /// <summary>Adds to <paramref name="ids"/> every string that <paramref name="paths"/> reach in the document.</summary>
    public static void Collect(ReadOnlySpan<byte> document, IReadOnlyList<DocumentPath> paths, HashSet<string> ids)
    {
        var collector = new IdCollector(ids);
        foreach (var path in paths)
        {
            path.Walk(document, ref collector);
        }
    }

    /// <summary>The include paths of a query (null: it includes nothing).</summary>
    public static List<DocumentPath>? PathsOf(Rql.RqlQuery query) =>
        query.Include.Count == 0 ? null : query.Include.Select(p => p.DocumentPath).ToList();

    /// <summary>
    /// An include path as a URL gives it (<c>Lines[].Product</c>): names separated by <c>.</c>, blanks
    /// around them and empty ones dropped; null when no name is left.
    /// </summary>
    public static DocumentPath? Parse(string path)
    {
        var names = path.Split('.', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(segment => segment.EndsWith("[]", StringComparison.Ordinal) ? segment[..^2] : segment)
            .ToArray();
        return names.Length == 0 ? null : new DocumentPath(names);
    }

    /// <summary>Writes <c>{"id":document,...}</c> for the included ids that exist (missing ones are left out).</summary>
    public static void Write(IBufferWriter<byte> output, DocumentsReader reader, IEnumerable<string> ids)
    {
        output.Write("{"u8);
        var first = true;
        foreach (var id in ids)
        {
            if (!reader.TryGet(id, out var record))
            {
                continue;
            }
            if (!first)
            {
                output.Write(","u8);
            }
            first = false;
            output.Write("\""u8);
            output.Write(JsonEncodedText.Encode(record.Id, JavaScriptEncoder.UnsafeRelaxedJsonEscaping).EncodedUtf8Bytes);
            output.Write("\":"u8);
            BlittableJsonWriter.WriteTo(record.Document, output);
        }
        output.Write("}"u8);
    }

    private readonly struct IdCollector(HashSet<string> ids) : IDocumentPathVisitor
    {
        public bool Leaf(PathLeaf leaf)
        {
            if (leaf.Kind == PathLeafKind.String && leaf.GetString() is { Length: > 0 } id && DocumentIds.Validate(id) is null)
            {
                ids.Add(id);
            }

            return true;
        }

        public void EnterArray()
        {
        }

        public void LeaveArray()
        {
        }
    }
}
