using System.Buffers;

namespace Jackdaw.Storage.Blittable;

/// <summary>Equality of documents for change detection: walks properties in insertion order, stops at the first difference.</summary>
public static class BlittableComparer
{
    public static bool Equals(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        if (a.SequenceEqual(b))
        {
            return true;
        }

        return Equals(BlittableReader.Open(a), BlittableReader.Open(b));
    }

    public static bool Equals(BlittableObject a, BlittableObject b)
    {
        // The walk stops at the first difference, so it visits no more values than the smaller
        // document holds when both are well-formed (see "Shared values" in BlittableFormat.cs).
        var budget = Math.Min(a.Document.Length, b.Document.Length);
        return ObjectsEqual(a, b, 0, ref budget);
    }

    private static bool ObjectsEqual(BlittableObject a, BlittableObject b, int depth, ref int budget)
    {
        if (depth > BlittableFormat.MaxDepth)
        {
            BlittableFormat.ThrowFormat("The document nests deeper than {0} levels.", BlittableFormat.MaxDepth);
        }

        var count = a.Count;
        if (count != b.Count)
        {
            return false;
        }

        BlittableFormat.Charge(ref budget, count, a.Position, Math.Min(a.Document.Length, b.Document.Length));

        for (var i = 0; i < count; i++)
        {
            if (!a.GetNameAt(i).SequenceEqual(b.GetNameAt(i)) || !ValuesEqual(a.GetValueAt(i), b.GetValueAt(i), depth, ref budget))
            {
                return false;
            }
        }

        return true;
    }

    private static bool ValuesEqual(BlittableValue a, BlittableValue b, int depth, ref int budget)
    {
        var type = a.Type;
        if (type != b.Type)
        {
            return false;
        }

        switch (type)
        {
            case BlittableToken.Null:
            case BlittableToken.True:
            case BlittableToken.False:
                return true;
            case BlittableToken.Integer:
                a.TryGetInt64(out var x);
                b.TryGetInt64(out var y);
                return x == y;
            case BlittableToken.Double:
                a.TryGetNumberText(out var textA);
                b.TryGetNumberText(out var textB);
                BlittableFormat.ChargeLong(ref budget, Math.Min(textA.Length, textB.Length), a.Position, Math.Min(a.Document.Length, b.Document.Length));
                return textA.SequenceEqual(textB);
            case BlittableToken.Object:
                return ObjectsEqual(a.GetObject(), b.GetObject(), depth + 1, ref budget);
            case BlittableToken.Array:
                {
                    var arrayA = a.GetArray();
                    var arrayB = b.GetArray();
                    if (arrayA.Length != arrayB.Length)
                    {
                        return false;
                    }

                    BlittableFormat.Charge(ref budget, arrayA.Length, arrayA.Position, Math.Min(a.Document.Length, b.Document.Length));

                    for (var i = 0; i < arrayA.Length; i++)
                    {
                        if (!ValuesEqual(arrayA[i], arrayB[i], depth + 1, ref budget))
                        {
                            return false;
                        }
                    }

                    return true;
                }

            default:
                return StringsEqual(a, b, ref budget);
        }
    }

    private static bool StringsEqual(BlittableValue a, BlittableValue b, ref int budget)
    {
        var strA = StringValue.Read(a.Document, a.Position, a.StoredType);
        var strB = StringValue.Read(b.Document, b.Position, b.StoredType);
        // The shorter of the two stored forms: each side's bytes are its value's own in a well-formed
        // document, so a Memory-mode and a Disk-mode copy of one document stay in budget.
        BlittableFormat.ChargeLong(ref budget, Math.Min(strA.Payload.Length, strB.Payload.Length), a.Position, Math.Min(a.Document.Length, b.Document.Length));
        if (strA.DecodedLength != strB.DecodedLength)
        {
            return false;
        }

        if (strA.Type == strB.Type)
        {
            // Same coder, same input: the same bytes (both coders are deterministic).
            if (strA.Payload.SequenceEqual(strB.Payload))
            {
                return true;
            }

            if (!strA.IsCompressed)
            {
                return false;
            }

            // Different bytes may still be the same text, compressed by another version of the
            // coder (a payload of blittable format 1 and one of format 2, another LZ4 build):
            // compare the text, as for strings stored in different forms.
        }

        if (!strA.IsCompressed)
        {
            return b.ValueEquals(strA.Payload);
        }

        if (!strB.IsCompressed)
        {
            return a.ValueEquals(strB.Payload);
        }

        var rented = ArrayPool<byte>.Shared.Rent(strA.DecodedLength);
        try
        {
            var n = strA.Decode(rented);
            return b.ValueEquals(rented.AsSpan(0, n));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }
}
