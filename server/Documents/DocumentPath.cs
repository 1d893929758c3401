using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Runtime.CompilerServices;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A path into a document (<c>ShipTo.City</c>, <c>Lines[].Product</c>) and the one walk that reads
/// it. Auto-index fields, the where of a query or subscription without an index
/// (<c>RqlEvaluator</c>), projections (<c>select</c>) and includes all read paths through it, so
/// they agree on what a path reaches. The walk reads the blittable form in place and allocates
/// nothing: the visitor decides what to keep.
/// <para>The leaf rules: what a path reaches, and how a value there is classified
/// (<see cref="PathLeafKind"/>).</para>
/// <list type="bullet">
/// <item><b>Missing property</b>: nothing; the path reaches no value there. A path that reaches no
///   value at all is missing (not <c>null</c>: <c>exists()</c> is false and <c>= null</c> does not match).</item>
/// <item><b>Arrays</b> are walked wherever they are met, in the middle of the path or at its end,
///   whether or not the path marks the segment with <c>[]</c>: each element is walked on by the rest of
///   the path, and an element that is itself an array is walked the same way (nested arrays are
///   flattened). The visitor hears <see cref="IDocumentPathVisitor.EnterArray"/> and
///   <see cref="IDocumentPathVisitor.LeaveArray"/> around the elements. An empty array reaches no value.</item>
/// <item><b>Objects</b> in the middle of the path are walked into by the next name. An object at the
///   end is a leaf of kind <see cref="PathLeafKind.Object"/>: present (<c>exists()</c>), equal to nothing,
///   written whole by a projection.</item>
/// <item><b>Anything else in the middle</b> (a string, number, boolean or null where the path goes on):
///   nothing, as a missing property.</item>
/// <item><b>null</b> at the end: <see cref="PathLeafKind.Null"/>, present and equal to <c>null</c>.</item>
/// <item><b>Numbers</b>: an integer, and a number text that parses as a double (beyond a long, with an
///   exponent, <c>1.0</c>...), are <see cref="PathLeafKind.Number"/> with their double value (integers
///   beyond 2^53 at double precision, -0 as 0, a text too large for a double as infinity). A number
///   that does not read as a double (a NaN, or a text that does not parse: only a document written by
///   other means than JSON holds one) is <see cref="PathLeafKind.BadNumber"/>: present, equal to nothing,
///   as an index keeps it (no number term).</item>
/// <item><b>Strings</b> are <see cref="PathLeafKind.String"/>, as stored (case and all); how they
///   compare is the comparer's business (RQL lowercases).</item>
/// <item><b>true</b> and <b>false</b> are <see cref="PathLeafKind.True"/> and <see cref="PathLeafKind.False"/>.</item>
/// </list>
/// A walk is bounded as every walk over a document is (<c>storage/Blittable/README.md</c>, "Hostile
/// input"): the elements of the arrays it enters are charged against a budget of the document's
/// length, and arrays nest at most <see cref="MaxDepth"/> deep; a document beyond either is corrupt
/// (<see cref="BlittableFormatException"/>).
/// </summary>
public sealed class DocumentPath
{
    /// <summary>The deepest nesting a walk enters (a parsed document nests at most 256 levels).</summary>
    public const int MaxDepth = 256;

    private readonly string[] _names;

    // One per segment, with the position where the name was found last time: documents of a
    // collection share a shape. A path used by several threads at once races only on those hints.
    private readonly BlittablePropertyName[] _segments;

    /// <param name="names">The property names, in order (at least one).</param>
    public DocumentPath(params ReadOnlySpan<string> names)
    {
        if (names.Length == 0)
        {
            throw new ArgumentException("A document path names at least one property.", nameof(names));
        }

        _names = names.ToArray();
        _segments = new BlittablePropertyName[_names.Length];
        for (var i = 0; i < _names.Length; i++)
        {
            _segments[i] = new BlittablePropertyName(_names[i]);
        }
    }

    /// <summary>The property names, in order.</summary>
    public IReadOnlyList<string> Names => _names;

    /// <summary>
    /// A path in its string form, as auto-index fields and RQL write it: names separated by <c>.</c>,
    /// each optionally marked <c>[]</c> (dropped: arrays are walked wherever they are met). Every
    /// <c>.</c> separates, so a property whose name holds one cannot be reached.
    /// </summary>
    public static DocumentPath Parse(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var names = path.Split('.');
        for (var i = 0; i < names.Length; i++)
        {
            if (names[i].EndsWith("[]", StringComparison.Ordinal))
            {
                names[i] = names[i][..^2];
            }
        }

        return new DocumentPath(names);
    }

    public override string ToString() => string.Join('.', _names);

    /// <summary>
    /// Walks <paramref name="document"/> (a blittable document) along the path, calling
    /// <paramref name="visitor"/> for what it meets. Returns false when the visitor stopped it.
    /// </summary>
    /// <exception cref="BlittableFormatException">The document is corrupt.</exception>
    public bool Walk<TVisitor>(ReadOnlySpan<byte> document, ref TVisitor visitor)
        where TVisitor : IDocumentPathVisitor
    {
        var root = BlittableReader.Open(document);
        var budget = document.Length;
        return WalkObject(root, 0, 0, ref budget, ref visitor);
    }

    /// <summary>
    /// Walks from an object met inside a document (an array element an outer walk reached), charging
    /// the arrays it enters against <paramref name="budget"/> (the document's length).
    /// </summary>
    /// <exception cref="BlittableFormatException">The document is corrupt.</exception>
    public bool Walk<TVisitor>(BlittableObject root, int budget, ref TVisitor visitor)
        where TVisitor : IDocumentPathVisitor => WalkObject(root, 0, 0, ref budget, ref visitor);

    private bool WalkObject<TVisitor>(BlittableObject current, int segment, int depth, ref int budget, ref TVisitor visitor)
        where TVisitor : IDocumentPathVisitor
    {
        if (!current.TryGet(ref _segments[segment], out var value))
        {
            return true;
        }

        return Visit(value, segment + 1, depth, ref budget, ref visitor);
    }

    /// <summary>A value met with <paramref name="next"/> segments of the path read.</summary>
    private bool Visit<TVisitor>(BlittableValue value, int next, int depth, ref int budget, ref TVisitor visitor)
        where TVisitor : IDocumentPathVisitor
    {
        switch (value.Type)
        {
            case BlittableToken.Array:
                return VisitArray(value.GetArray(), next, depth + 1, ref budget, ref visitor);
            case BlittableToken.Object when next < _segments.Length:
                return WalkObject(value.GetObject(), next, depth + 1, ref budget, ref visitor);
        }

        if (next < _segments.Length)
        {
            return true;
        }

        return visitor.Leaf(PathLeaf.Of(value));
    }

    private bool VisitArray<TVisitor>(BlittableArray array, int next, int depth, ref int budget, ref TVisitor visitor)
        where TVisitor : IDocumentPathVisitor
    {
        if (depth > MaxDepth)
        {
            ThrowTooDeep();
        }

        budget -= array.Length;
        if (budget < 0)
        {
            ThrowOverBudget();
        }

        visitor.EnterArray();
        for (var i = 0; i < array.Length; i++)
        {
            if (!Visit(array[i], next, depth, ref budget, ref visitor))
            {
                return false;
            }
        }

        visitor.LeaveArray();
        return true;
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowTooDeep() =>
        throw new BlittableFormatException(string.Format(CultureInfo.InvariantCulture, "Walking the path {0} met arrays nested deeper than {1} levels, which only a corrupt document holds.", this, MaxDepth));

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowOverBudget() =>
        throw new BlittableFormatException($"Walking the path {this} reached more array elements than the document has bytes: its entries share values, which only a corrupt document's do.");
}
