namespace Jackdaw.Storage.Blittable;

// Verbatim copies of whole values from another document (used by Modify when source and target
// share a mode). A value's bytes never point outside it except to property names, and names are
// referred to by their offset in the names area: once this document's names area starts with the
// source's, byte for byte, any unchanged subtree can be copied as one block.
public sealed partial class BlittableBuilder
{
    /// <summary>
    /// Makes this document's names area start with <paramref name="source"/>'s, at the same offsets.
    /// Call right after <see cref="Start"/>. False if the source's names area is not what this
    /// builder would have written (then raw copies are not safe: restart and copy value by value).
    /// </summary>
    internal bool TrySeedNames(ReadOnlySpan<byte> source)
    {
        var header = BlittableHeader.Read(source);
        var namesOffset = BlittableFormat.NamesOffset(source);
        if (header.TotalLength > source.Length || header.TotalLength < namesOffset || _namePos != 0 || _depth != 0)
        {
            return false;
        }

        var area = source[namesOffset..header.TotalLength];
        var p = 0;
        while (p < area.Length)
        {
            var name = BlittableFormat.ReadStringBytes(area, ref p, out var escaped);
            if (escaped)
            {
                BlittableFormat.SkipEscapeList(area, ref p);
            }

            if (!System.Text.Unicode.Utf8.IsValid(name))
            {
                return false;   // a damaged document: the value-by-value path reports it
            }

            var found = FindName(name, mayNeedEscapes: escaped, 0, validateUtf8: false);
            ref var entry = ref _names[found];
            if (entry.DocumentStamp == _documentStamp)
            {
                return false;   // the same name twice: not a names area this builder writes
            }

            WriteName(found);
            if (_namePos != p)
            {
                return false;
            }
        }

        return _nameBuffer.AsSpan(0, _namePos).SequenceEqual(area);
    }

    /// <summary>
    /// Appends <paramref name="value"/> (of a document whose names were seeded with
    /// <see cref="TrySeedNames"/>) as the next value, copying its bytes and all it contains verbatim.
    /// The tables <see cref="Extent"/> looks into are charged to <paramref name="budget"/>, the
    /// caller's for the whole source document (see "Shared values" in BlittableFormat.cs): many
    /// properties pointing at one large array or object would otherwise have it scanned and copied
    /// once for each.
    /// </summary>
    internal void WriteRawValue(BlittableValue value, ref int budget)
    {
        var type = value.StoredType;
        if (type is BlittableType.Null or BlittableType.True or BlittableType.False)
        {
            AddEntry(type, -1);
            return;
        }

        var document = value.Document;
        var (start, end) = Extent(document, value.Position, type, BlittableFormat.NamesOffset(document), ref budget);
        var length = end - start;
        Ensure(length);
        var position = Relative + (value.Position - start);
        document[start..end].CopyTo(_buffer.AsSpan(_pos));
        _pos += length;
        AddEntry(type, position);
    }

    /// <summary>
    /// The byte range a value occupies with everything it contains: values are written depth-first
    /// before the table that holds them, so a container's range starts where its first child's does
    /// and ends with its own table.
    /// </summary>
    internal static (int Start, int End) Extent(ReadOnlySpan<byte> document, int position, BlittableType type, int namesOffset, ref int budget)
    {
        var start = position;
        var top = position;
        var topType = type;
        var depth = 0;
        while (type is BlittableType.Object or BlittableType.Array && FirstChildWithBytes(document, position, type, namesOffset, ref budget, out var child, out var childType))
        {
            if (++depth > BlittableFormat.MaxDepth || child >= start)
            {
                BlittableFormat.ThrowFormat("A value at {0} is not laid out depth-first.", position);
            }

            start = child;
            position = child;
            type = childType;
        }

        // Tables were checked by the walk above (the reader validates flags and bounds).
        var end = EndOf(document, top, topType);
        if (start < BlittableHeader.Size || end > namesOffset)
        {
            BlittableFormat.ThrowFormat("A value spans {0}..{1}, outside the values area.", start, end);
        }

        return (start, end);
    }

    private static bool FirstChildWithBytes(ReadOnlySpan<byte> document, int position, BlittableType type, int namesOffset, ref int budget, out int child, out BlittableType childType)
    {
        if (type == BlittableType.Object)
        {
            var obj = new BlittableObject(document, position, namesOffset);
            BlittableFormat.Charge(ref budget, obj.Count, position, document.Length);
            for (var i = 0; i < obj.Count; i++)
            {
                var value = obj.GetValueAt(i);
                if (value.StoredType is not (BlittableType.Null or BlittableType.True or BlittableType.False))
                {
                    child = value.Position;
                    childType = value.StoredType;
                    return true;
                }
            }
        }
        else
        {
            var array = new BlittableArray(document, position);
            BlittableFormat.Charge(ref budget, array.Length, position, document.Length);
            for (var i = 0; i < array.Length; i++)
            {
                var value = array[i];
                if (value.StoredType is not (BlittableType.Null or BlittableType.True or BlittableType.False))
                {
                    child = value.Position;
                    childType = value.StoredType;
                    return true;
                }
            }
        }

        child = 0;
        childType = default;
        return false;
    }

    /// <summary>The position just past a value's own bytes (for a container: past its table).</summary>
    private static int EndOf(ReadOnlySpan<byte> document, int position, BlittableType type)
    {
        var p = position;
        switch (type)
        {
            case BlittableType.Integer:
                BlittableFormat.ReadVarInt64(document, ref p);
                return p;
            case BlittableType.Double:
                BlittableFormat.ReadLengthPrefixed(document, ref p);
                return p;
            case BlittableType.String or BlittableType.StringDictionary or BlittableType.StringLz4:
                {
                    var str = StringValue.Read(document, position, type);
                    p = str.EscapesPosition;
                    if (str.HasEscapes)
                    {
                        BlittableFormat.SkipEscapeList(document, ref p);
                    }

                    return p;
                }

            case BlittableType.Object:
                return new BlittableObject(document, position, BlittableHeader.Read(document).NamesOffset).TableEnd;
            case BlittableType.Array:
                return new BlittableArray(document, position).TableEnd;

            default:
                BlittableFormat.ThrowFormat("Unknown value type {0} at {1}.", (int)type, position);
                return 0;
        }
    }
}
