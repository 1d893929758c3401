using System.Text;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// Where a LINQ member access points in a document: <c>id()</c>, or a path of JSON property names
/// (<c>ShipTo.City</c>, <c>Lines[].Product</c>, a segment marked as walking an array).
/// <see cref="Root"/> is the document itself.
/// </summary>
internal sealed class FieldPath
{
    public static readonly FieldPath Root = new([], isId: false);

    public static readonly FieldPath Id = new([], isId: true);

    private FieldPath(IReadOnlyList<(string Name, bool Array)> segments, bool isId)
    {
        Segments = segments;
        IsId = isId;
    }

    public IReadOnlyList<(string Name, bool Array)> Segments { get; }

    public bool IsId { get; }

    public bool IsRoot => !IsId && Segments.Count == 0;

    /// <summary>The JSON name of the last segment, the name a projection gives the field by default.</summary>
    public string LastName => Segments.Count > 0 ? Segments[^1].Name : "id";

    public FieldPath Append(string name) => new([.. Segments, (name, false)], isId: false);

    /// <summary>The same path walking into the array it ends on: <c>Lines</c> → <c>Lines[]</c>.</summary>
    public FieldPath AsArray() => Segments.Count == 0 ? this : new([.. Segments.Take(Segments.Count - 1), (Segments[^1].Name, true)], isId: false);

    /// <summary>
    /// The path in RQL. A trailing <c>[]</c> is dropped: a field that holds an array already matches
    /// when any element does (<c>Tags = $p0</c>), as RavenDB writes it.
    /// </summary>
    public string ToRql()
    {
        if (IsId)
        {
            return "id()";
        }

        var builder = new StringBuilder();
        for (var i = 0; i < Segments.Count; i++)
        {
            if (i > 0)
            {
                builder.Append('.');
            }

            Rql.AppendName(builder, Segments[i].Name);
            if (Segments[i].Array && i < Segments.Count - 1)
            {
                builder.Append("[]");
            }
        }

        return builder.ToString();
    }

    public override string ToString() => ToRql();
}
