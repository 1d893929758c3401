using System.Linq.Expressions;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Queries.Linq;

namespace Jackdaw.Client.Session;

/// <summary>
/// The include paths of a load (RavenDB's <c>include</c> parameter): <c>Company</c>,
/// <c>Address.Owner</c>, <c>Lines[].Product</c>. The server answers the documents whose ids the
/// loaded ones hold there; <see cref="CollectIds"/> finds the same ids on the client, so the session
/// can tell which of them it holds and which the server has no document for. Arrays are walked
/// wherever they are met, as the server walks them.
/// </summary>
internal sealed class IncludePaths
{
    // The server's limit; a longer string is not an id it would include.
    private const int MaxIdLength = 512;

    private readonly List<string> _paths = [];
    private readonly List<string[]> _segments = [];

    public int Count => _paths.Count;

    /// <summary>Adds a path written out; the same path twice is sent once.</summary>
    public void Add(string path)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        var segments = path
            .Split('.', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(segment => segment.EndsWith("[]", StringComparison.Ordinal) ? segment[..^2] : segment)
            .ToArray();
        if (segments.Length == 0 || Array.Exists(segments, segment => segment.Length == 0))
        {
            throw new ArgumentException($"'{path}' is not an include path: property names separated by '.', an array marked '[]' (Lines[].Product).", nameof(path));
        }

        if (!_paths.Contains(path))
        {
            _paths.Add(path);
            _segments.Add(segments);
        }
    }

    /// <summary>
    /// Adds the path of a member access (<c>x => x.Company</c>, <c>x => x.Lines.Select(l => l.Product)</c>),
    /// each member named as the conventions' serializer names it in the stored documents.
    /// </summary>
    public void Add(LambdaExpression path, DocumentConventions conventions)
    {
        ArgumentNullException.ThrowIfNull(path);
        var fields = new FieldPathResolver(conventions);
        fields.Bind(path.Parameters[0], FieldPath.Root);
        var field = fields.Resolve(path.Body, "Include");
        if (field.IsId)
        {
            throw new NotSupportedException($"Include: '{path}' is the document's own id; include a field that holds the id of another document.");
        }

        Add(string.Join('.', field.Segments.Select(segment => segment.Array ? segment.Name + "[]" : segment.Name)));
    }

    /// <summary>A copy with the same paths, which later additions to this one leave alone.</summary>
    public IncludePaths Copy()
    {
        var copy = new IncludePaths();
        copy._paths.AddRange(_paths);
        copy._segments.AddRange(_segments);
        return copy;
    }

    /// <summary>Appends <c>&amp;include=path</c> for each path.</summary>
    public void AppendQuery(StringBuilder query)
    {
        foreach (var path in _paths)
        {
            query.Append("&include=").Append(Uri.EscapeDataString(path));
        }
    }

    /// <summary>The length <see cref="AppendQuery"/> adds.</summary>
    public int QueryLength() => _paths.Sum(path => "&include=".Length + Uri.EscapeDataString(path).Length);

    /// <summary>Adds to <paramref name="ids"/> every id <paramref name="document"/> (JSON) holds at one of the paths.</summary>
    public void CollectIds(ReadOnlySpan<byte> document, HashSet<string> ids)
    {
        foreach (var segments in _segments)
        {
            var reader = new Utf8JsonReader(document);
            if (reader.Read())
            {
                Visit(ref reader, segments, 0, ids);
            }
        }
    }

    /// <summary>Walks the value <paramref name="reader"/> is on and leaves the reader on its last token.</summary>
    private static void Visit(ref Utf8JsonReader reader, string[] segments, int depth, HashSet<string> ids)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.String when depth == segments.Length:
                if (reader.GetString() is { Length: > 0 and <= MaxIdLength } id && !id.Any(c => c < '\u0020' || c == '\u007f'))
                {
                    ids.Add(id);
                }

                break;
            case JsonTokenType.StartArray:
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    Visit(ref reader, segments, depth, ids);
                }

                break;
            case JsonTokenType.StartObject when depth < segments.Length:
                // The first property of that name counts, as on the server.
                var found = false;
                while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
                {
                    var isNext = !found && reader.ValueTextEquals(segments[depth]);
                    reader.Read();
                    if (isNext)
                    {
                        found = true;
                        Visit(ref reader, segments, depth + 1, ids);
                    }
                    else
                    {
                        reader.Skip();
                    }
                }

                break;
            default:
                reader.Skip();
                break;
        }
    }
}
