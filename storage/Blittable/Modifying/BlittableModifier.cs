using System.Buffers;
using System.Globalization;
using System.Text;

namespace Jackdaw.Storage.Blittable;

/// <summary>Builds a new document from an existing one plus a <see cref="BlittablePatch"/>, without JSON text.</summary>
[System.Runtime.CompilerServices.SkipLocalsInit]
internal static class BlittableModifier
{
    /// <param name="raw">
    /// The builder's names area was seeded with the root's document (<see cref="BlittableBuilder.TrySeedNames"/>):
    /// unchanged values are copied as whole blocks instead of value by value.
    /// </param>
    public static void Apply(BlittableBuilder builder, BlittableObject root, BlittablePatch patch, bool raw)
    {
        // One budget for the whole source document (see "Shared values" in BlittableFormat.cs): the
        // tables walked on the patch's path and those a block copy looks into are distinct ones.
        var budget = root.Document.Length;
        builder.BeginObject(0);
        CopyObject(builder, root, patch, 0, ref budget, raw);
        builder.EndObject();
    }

    private static void CopyObject(BlittableBuilder builder, BlittableObject obj, BlittablePatch? patch, int depth, ref int budget, bool raw = false)
    {
        if (depth > BlittableFormat.MaxDepth)
        {
            BlittableFormat.ThrowFormat("The document nests deeper than {0} levels.", BlittableFormat.MaxDepth);
        }

        var count = obj.Count;
        BlittableFormat.Charge(ref budget, count, obj.Position, obj.Document.Length);

        for (var i = 0; i < count; i++)
        {
            var name = obj.GetNameAt(i);
            var op = patch?.Find(name);
            if (op is null)
            {
                builder.PropertyName(name, mayNeedEscapes: true, 0);
                if (raw)
                {
                    builder.WriteRawValue(obj.GetValueAt(i), ref budget);
                }
                else
                {
                    CopyValue(builder, obj.GetValueAt(i), depth, ref budget);
                }

                continue;
            }

            if (op.Kind == BlittablePatch.OperationKind.Remove)
            {
                continue;
            }

            builder.PropertyName(name, mayNeedEscapes: true, 0);
            if (op.Kind == BlittablePatch.OperationKind.Object)
            {
                var value = obj.GetValueAt(i);
                builder.BeginObject(0);
                if (value.Type == BlittableToken.Object)
                {
                    CopyObject(builder, value.GetObject(), op.Nested, depth + 1, ref budget, raw);
                }
                else
                {
                    AppendNew(builder, op.Nested, default, hasOriginal: false, depth + 1);
                }

                builder.EndObject();
            }
            else
            {
                WriteOperation(builder, op, depth);
            }
        }

        if (patch is not null)
        {
            AppendNew(builder, patch, obj, hasOriginal: true, depth);
        }
    }

    /// <summary>Appends the patch's properties that the original object does not have.</summary>
    private static void AppendNew(BlittableBuilder builder, BlittablePatch? patch, BlittableObject original, bool hasOriginal, int depth)
    {
        if (patch is null)
        {
            return;
        }

        for (var i = 0; i < patch.Count; i++)
        {
            var op = patch[i];
            if (op.Kind == BlittablePatch.OperationKind.Remove || (hasOriginal && original.IndexOf(op.NameSpan) >= 0))
            {
                continue;
            }

            builder.PropertyName(op.NameSpan, mayNeedEscapes: true, 0);
            if (op.Kind == BlittablePatch.OperationKind.Object)
            {
                builder.BeginObject(0);
                AppendNew(builder, op.Nested, default, hasOriginal: false, depth + 1);
                builder.EndObject();
            }
            else
            {
                WriteOperation(builder, op, depth);
            }
        }
    }

    private static void WriteOperation(BlittableBuilder builder, BlittablePatch.Operation op, int depth)
    {
        switch (op.Kind)
        {
            case BlittablePatch.OperationKind.Null:
                builder.WriteNull();
                break;
            case BlittablePatch.OperationKind.Boolean:
                builder.WriteBoolean(op.Integer != 0);
                break;
            case BlittablePatch.OperationKind.Integer:
                builder.WriteInteger(op.Integer);
                break;
            case BlittablePatch.OperationKind.Double:
                {
                    Span<byte> text = stackalloc byte[32];
                    op.Double.TryFormat(text, out var written, "R", CultureInfo.InvariantCulture);
                    WriteNumber(builder, text.Slice(0, written));
                    break;
                }

            case BlittablePatch.OperationKind.Decimal:
                {
                    Span<byte> text = stackalloc byte[40];
                    op.Decimal.TryFormat(text, out var written, default, CultureInfo.InvariantCulture);
                    WriteNumber(builder, text.Slice(0, written));
                    break;
                }

            case BlittablePatch.OperationKind.String:
                builder.WriteString(op.Value, mayNeedEscapes: true);
                break;
            case BlittablePatch.OperationKind.RawJson:
                builder.WriteRawJsonValue(op.Value);
                break;
            case BlittablePatch.OperationKind.Document:
                {
                    // Another document: a budget of its own length.
                    var other = BlittableReader.Open(op.Value);
                    var budget = op.Value.Length;
                    builder.BeginObject(0);
                    CopyObject(builder, other, null, depth + 1, ref budget);
                    builder.EndObject();
                    break;
                }
        }
    }

    private static void WriteNumber(BlittableBuilder builder, ReadOnlySpan<byte> text)
    {
        if (BlittableBuilder.TryParseCanonicalInteger(text, out var integer))
        {
            builder.WriteInteger(integer);
        }
        else
        {
            builder.WriteNumberText(text);
        }
    }

    private static void CopyValue(BlittableBuilder builder, BlittableValue value, int depth, ref int budget)
    {
        switch (value.StoredType)
        {
            case BlittableType.Null:
                builder.WriteNull();
                break;
            case BlittableType.True:
                builder.WriteBoolean(true);
                break;
            case BlittableType.False:
                builder.WriteBoolean(false);
                break;
            case BlittableType.Integer:
                value.TryGetInt64(out var integer);
                builder.WriteInteger(integer);
                break;
            case BlittableType.Double:
                value.TryGetNumberText(out var text);
                BlittableFormat.ChargeLong(ref budget, text.Length, value.Position, value.Document.Length);
                if (builder.Mode == BlittableMode.Disk && !BlittableBuilder.IsFiniteNumber(text))
                {
                    BlittableBuilder.ThrowParse(BlittableParseError.NumberOutOfRange, 0, $"The number {Encoding.ASCII.GetString(text)} is not a finite double");
                }

                builder.WriteNumberText(text);
                break;
            case BlittableType.Object:
                {
                    var obj = value.GetObject();
                    builder.BeginObject(0);
                    CopyObject(builder, obj, null, depth + 1, ref budget);
                    builder.EndObject();
                    break;
                }

            case BlittableType.Array:
                {
                    if (depth > BlittableFormat.MaxDepth)
                    {
                        BlittableFormat.ThrowFormat("The document nests deeper than {0} levels.", BlittableFormat.MaxDepth);
                    }

                    var array = value.GetArray();
                    BlittableFormat.Charge(ref budget, array.Length, array.Position, array.Document.Length);

                    builder.BeginArray(0);
                    for (var i = 0; i < array.Length; i++)
                    {
                        CopyValue(builder, array[i], depth + 1, ref budget);
                    }

                    builder.EndArray();
                    break;
                }

            default:
                CopyString(builder, value, ref budget);
                break;
        }
    }

    private static void CopyString(BlittableBuilder builder, BlittableValue value, ref int budget)
    {
        var document = value.Document;
        var str = StringValue.Read(document, value.Position, value.StoredType);
        BlittableFormat.ChargeLong(ref budget, str.Payload.Length, value.Position, document.Length);
        if (!str.IsCompressed)
        {
            builder.WriteString(str.Payload, mayNeedEscapes: true);
            return;
        }

        if (builder.Mode == BlittableMode.Disk)
        {
            // Already compressed: copy the encoded bytes (header, payload, escape list) as they are.
            var p = str.EscapesPosition;
            if (str.HasEscapes)
            {
                BlittableFormat.SkipEscapeList(document, ref p);
            }

            builder.WriteEncodedString(value.StoredType, document.Slice(value.Position, p - value.Position));
            return;
        }

        var rented = ArrayPool<byte>.Shared.Rent(str.DecodedLength);
        try
        {
            var n = str.Decode(rented);
            builder.WriteString(rented.AsSpan(0, n), mayNeedEscapes: true);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }
}
