using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>
/// The map of an auto-index: each field is a document path read straight from the blittable form
/// (no JavaScript), with the meaning <see cref="Rql.RqlEvaluator"/> gives paths: a path that
/// meets arrays walks every element (one term per element), an object or array where a value was
/// expected is present but equal to nothing.
/// </summary>
public sealed class AutoIndexMapper : IIndexMapper
{
    /// <summary>The value of a field that is present but is an object: it exists, and equals nothing.</summary>
    public static readonly object Present = new();

    private readonly AutoIndexField[] _fields;
    private readonly string[][] _paths;

    public AutoIndexMapper(IndexDefinition definition)
    {
        Collections = [definition.Collection!];
        _fields = definition.AutoFields.ToArray();
        _paths = _fields.Select(f => f.Path.Split('.').Select(s => s.EndsWith("[]", StringComparison.Ordinal) ? s[..^2] : s).ToArray()).ToArray();
    }

    public IReadOnlyList<string> Collections { get; }

    public bool UsesLoad => false;

    public void Map(MapInput document, IMapDocumentLoader? loader, MapOutput output)
    {
        var root = BlittableReader.Open(document.Blittable.Span);
        var entry = new List<IndexField>(_fields.Length);
        var values = new List<object?>();
        for (var i = 0; i < _fields.Length; i++)
        {
            values.Clear();
            Walk(root, _paths[i], 0, values);
            if (values.Count == 0)
                continue;
            entry.Add(new IndexField(_fields[i].LuceneName, values.Count == 1 ? values[0] : values.ToArray()));
        }
        output.Entries.Add(entry.ToArray());
    }

    private static void Walk(BlittableObject current, string[] path, int depth, List<object?> values)
    {
        if (current.TryGet(path[depth], out var value))
            Visit(value, path, depth + 1, values);
    }

    private static void Visit(BlittableValue value, string[] path, int depth, List<object?> values)
    {
        switch (value.Type)
        {
            case BlittableToken.Array:
                var array = value.GetArray();
                for (var i = 0; i < array.Length; i++)
                    Visit(array[i], path, depth, values);
                return;
            case BlittableToken.Object when depth < path.Length:
                Walk(value.GetObject(), path, depth, values);
                return;
        }
        if (depth < path.Length)
            return;
        values.Add(value.Type switch
        {
            BlittableToken.Null => null,
            BlittableToken.True => true,
            BlittableToken.False => false,
            BlittableToken.Integer or BlittableToken.Double => value.TryGetDouble(out var d) ? d : Present,
            BlittableToken.String => value.GetString(),
            _ => Present,
        });
    }
}
