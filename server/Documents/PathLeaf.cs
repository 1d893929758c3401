using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A value a <see cref="DocumentPath"/> reached, already classified by the leaf rules (see
/// <see cref="DocumentPath"/>): its <see cref="Kind"/>, its <see cref="Number"/> for a number, and the
/// blittable <see cref="Value"/> itself (to write it, or read its string). Valid during the callback only.
/// </summary>
public readonly ref struct PathLeaf
{
    private PathLeaf(PathLeafKind kind, double number, BlittableValue value)
    {
        Kind = kind;
        Number = number;
        Value = value;
    }

    public PathLeafKind Kind { get; }

    /// <summary>The value of a <see cref="PathLeafKind.Number"/> (never NaN; -0 reads as 0); 0 for other kinds.</summary>
    public double Number { get; }

    /// <summary>The value as stored (never an array: the walk enters arrays).</summary>
    public BlittableValue Value { get; }

    /// <summary>The text of a <see cref="PathLeafKind.String"/> (allocates; decompresses when stored compressed).</summary>
    public string GetString() => Value.GetString()!;

    internal static PathLeaf Of(BlittableValue value)
    {
        switch (value.Type)
        {
            case BlittableToken.Null:
                return new PathLeaf(PathLeafKind.Null, 0, value);
            case BlittableToken.True:
                return new PathLeaf(PathLeafKind.True, 0, value);
            case BlittableToken.False:
                return new PathLeaf(PathLeafKind.False, 0, value);
            case BlittableToken.String:
                return new PathLeaf(PathLeafKind.String, 0, value);
            case BlittableToken.Integer or BlittableToken.Double:
                // + 0.0 turns -0 into 0: JSON and the comparisons know one zero (an index term knows two).
                return value.TryGetDouble(out var number) && !double.IsNaN(number)
                    ? new PathLeaf(PathLeafKind.Number, number + 0.0, value)
                    : new PathLeaf(PathLeafKind.BadNumber, 0, value);
            default:
                return new PathLeaf(PathLeafKind.Object, 0, value);
        }
    }
}
