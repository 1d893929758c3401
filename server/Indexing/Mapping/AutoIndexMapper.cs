using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>
/// The map of an auto-index: each field is a document path read straight from the blittable form
/// (no JavaScript) by <see cref="DocumentPath"/>, the walk <see cref="Rql.RqlEvaluator"/> uses too:
/// a path that meets arrays walks every element (one term per element); an object at its end, or a
/// number that does not read as a double, is present but equal to nothing (<see cref="Present"/>).
/// </summary>
public sealed class AutoIndexMapper : IIndexMapper
{
    /// <summary>The value of a field that is present but is an object or a bad number: it exists, and equals nothing.</summary>
    public static readonly object Present = new();

    private static readonly object BoxedTrue = true;
    private static readonly object BoxedFalse = false;

    private readonly AutoIndexField[] _fields;
    private readonly DocumentPath[] _paths;

    public AutoIndexMapper(IndexDefinition definition)
    {
        Collections = [definition.Collection!];
        _fields = definition.AutoFields.ToArray();
        _paths = _fields.Select(f => DocumentPath.Parse(f.Path)).ToArray();
    }

    public IReadOnlyList<string> Collections { get; }

    public bool UsesLoad => false;

    public void Map(MapInput document, IMapDocumentLoader? loader, MapOutput output)
    {
        var blittable = document.Blittable.Span;
        var entry = new List<IndexField>(_fields.Length);
        var values = new FieldValues([]);
        for (var i = 0; i < _fields.Length; i++)
        {
            values.Values.Clear();
            _paths[i].Walk(blittable, ref values);
            if (values.Values.Count == 0)
            {
                continue;
            }
            entry.Add(new IndexField(_fields[i].LuceneName, values.Values.Count == 1 ? values.Values[0] : values.Values.ToArray()));
        }
        output.Entries.Add(entry.ToArray());
    }

    /// <summary>The values a path reaches, as index fields hold them.</summary>
    private readonly struct FieldValues(List<object?> values) : IDocumentPathVisitor
    {
        public List<object?> Values => values;

        public bool Leaf(PathLeaf leaf)
        {
            values.Add(leaf.Kind switch
            {
                PathLeafKind.Null => null,
                PathLeafKind.True => BoxedTrue,
                PathLeafKind.False => BoxedFalse,
                PathLeafKind.Number => leaf.Number,
                PathLeafKind.String => leaf.GetString(),
                _ => Present,
            });
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
