using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;

namespace Jackdaw.Storage.Blittable;

/// <summary>Opens stored documents.</summary>
public static class BlittableReader
{
    /// <summary>Checks the header (magic, version, length, root offset) and returns the root object.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static BlittableObject Open(ReadOnlySpan<byte> blittable)
    {
        // Fast path: one 16-byte read and three comparisons; details only when something is off.
        if (blittable.Length >= BlittableHeader.Size && BitConverter.IsLittleEndian)
        {
            var header = System.Runtime.InteropServices.MemoryMarshal.Read<BlittableHeader>(blittable);
            if (header.Magic == BlittableHeader.MagicValue && BlittableHeader.IsReadable(header.Version)
                && header.TotalLength == blittable.Length && header.RootOffset >= BlittableHeader.Size
                && header.RootOffset < header.NamesOffset && header.NamesOffset <= blittable.Length)
            {
                return new BlittableObject(blittable, header.RootOffset, header.NamesOffset);
            }
        }

        return OpenSlow(blittable);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static BlittableObject OpenSlow(ReadOnlySpan<byte> blittable)
    {
        var header = BlittableHeader.Read(blittable);
        if (header.Magic != BlittableHeader.MagicValue)
        {
            BlittableFormat.ThrowFormat("Not a blittable document: first byte is 0x{0:X2}, expected 0x{1:X2}.", header.Magic, BlittableHeader.MagicValue);
        }

        if (!BlittableHeader.IsReadable(header.Version))
        {
            BlittableFormat.ThrowFormat("Blittable format version {0} is not supported (this build reads versions {1} to {2}).", header.Version, BlittableHeader.OldestReadableVersion, BlittableHeader.CurrentVersion);
        }

        if (header.TotalLength != blittable.Length)
        {
            BlittableFormat.ThrowFormat("The header says {0} bytes but the document has {1}.", header.TotalLength, blittable.Length);
        }

        if (header.RootOffset < BlittableHeader.Size || header.RootOffset >= header.NamesOffset || header.NamesOffset > blittable.Length)
        {
            BlittableFormat.ThrowFormat("Root offset {0} or names offset {1} is outside the document ({2} bytes).", header.RootOffset, header.NamesOffset, blittable.Length);
        }

        return new BlittableObject(blittable, header.RootOffset);
    }

    /// <summary>True when the header says the document was built in Disk mode.</summary>
    public static bool IsDiskMode(ReadOnlySpan<byte> blittable) =>
        blittable.Length >= BlittableHeader.Size && (blittable[2] & BlittableHeader.DiskModeFlag) != 0;
}

/// <summary>A reusable property name with a per-reader position hint (documents of a collection share a shape).</summary>
public struct BlittablePropertyName
{
    private readonly byte[] _utf8;

    public BlittablePropertyName(string name)
    {
        _utf8 = Encoding.UTF8.GetBytes(name);
        Hint = -1;
    }

    public BlittablePropertyName(ReadOnlySpan<byte> utf8Name)
    {
        _utf8 = utf8Name.ToArray();
        Hint = -1;
    }

    public readonly ReadOnlySpan<byte> Utf8 => _utf8;

    /// <summary>Insertion index where the name was found last time (-1: none yet).</summary>
    public int Hint { readonly get; set; }

    public override readonly string ToString() => Encoding.UTF8.GetString(_utf8 ?? []);
}

/// <summary>An object inside a blittable document; lookups by name allocate nothing.</summary>
[SkipLocalsInit]
public readonly ref struct BlittableObject
{
    private readonly ReadOnlySpan<byte> _document;
    private readonly int _position;
    private readonly int _count;
    private readonly int _valueWidth;
    private readonly int _nameWidth;
    private readonly int _entrySize;
    private readonly int _entries;
    private readonly int _orderWidth;
    private readonly int _order;
    private readonly int _names;

    internal BlittableObject(ReadOnlySpan<byte> document, int position)
        : this(document, position, BlittableFormat.NamesOffset(document))
    {
    }

    internal BlittableObject(ReadOnlySpan<byte> document, int position, int namesOffset)
    {
        if ((uint)position >= (uint)document.Length || position < BlittableHeader.Size)
        {
            BlittableFormat.ThrowFormat("Object offset {0} is outside the document ({1} bytes).", position, document.Length);
        }

        var flags = document[position];
        if ((flags & BlittableFormat.TagMask) != BlittableFormat.ObjectTag || (flags & 3) == 3 || ((flags >> 2) & 3) == 3 || ((flags >> 4) & 3) == 3)
        {
            BlittableFormat.ThrowFormat("No object table at position {0} (flags 0x{1:X2}).", position, flags);
        }

        _document = document;
        _position = position;
        _names = namesOffset;
        _valueWidth = BlittableFormat.WidthOf(flags & 3);
        _nameWidth = BlittableFormat.WidthOf((flags >> 2) & 3);
        _orderWidth = BlittableFormat.WidthOf((flags >> 4) & 3);
        _entrySize = _valueWidth + _nameWidth + 1;
        var p = position + 1;
        _count = BlittableFormat.ReadVarInt32(document, ref p);
        _entries = p;
        var end = (long)p + ((long)_count * _entrySize) + ((long)_count * _orderWidth);
        if (end > document.Length)
        {
            BlittableFormat.ThrowFormat("The object table at {0} ({1} properties) runs past the end of the document.", position, _count);
        }

        _order = p + (_count * _entrySize);
    }

    /// <summary>Number of properties.</summary>
    public int Count => _count;

    /// <summary>The position just past this object's table (entries and sort order).</summary>
    internal int TableEnd => _order + (_count * _orderWidth);

    internal ReadOnlySpan<byte> Document => _document;

    internal int Position => _position;

    internal int NamesOffset => _names;

    internal int EntriesOffset => _entries;

    internal int NameWidth => _nameWidth;

    internal int ValueWidth => _valueWidth;

    public bool TryGet(scoped ReadOnlySpan<byte> utf8Name, out BlittableValue value)
    {
        var index = Find(utf8Name);
        if (index < 0)
        {
            value = default;
            return false;
        }

        value = GetValueAt(index);
        return true;
    }

    public bool TryGet(string name, out BlittableValue value)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (name.Length <= 128)
        {
            Span<byte> utf8 = stackalloc byte[name.Length * 3];
            var written = Encoding.UTF8.GetBytes(name, utf8);
            return TryGet(utf8.Slice(0, written), out value);
        }

        var rented = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(name.Length));
        try
        {
            var written = Encoding.UTF8.GetBytes(name, rented);
            return TryGet(rented.AsSpan(0, written), out value);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>Looks the name up at its hinted position first, then by binary search; updates the hint.</summary>
    public bool TryGet(ref BlittablePropertyName name, out BlittableValue value)
    {
        var hint = name.Hint;
        if ((uint)hint < (uint)_count)
        {
            // One entry read for both the name check and the value.
            var entry = _entries + (hint * _entrySize);
            var namePosition = _names + BlittableFormat.ReadWidth(_document, entry, _nameWidth);
            if (namePosition < _document.Length
                && BlittableFormat.ReadStringBytes(_document, ref namePosition, out _).SequenceEqual(name.Utf8))
            {
                var back = BlittableFormat.ReadWidth(_document, entry + _nameWidth, _valueWidth);
                value = BlittableValue.Create(_document, _position, back, _document[entry + _nameWidth + _valueWidth]);
                return true;
            }
        }

        return TryGetSlow(ref name, out value);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryGetSlow(ref BlittablePropertyName name, out BlittableValue value)
    {
        var index = Find(name.Utf8);
        if (index < 0)
        {
            value = default;
            return false;
        }

        name.Hint = index;
        value = GetValueAt(index);
        return true;
    }

    /// <summary>Insertion index of the property, or -1.</summary>
    public int IndexOf(scoped ReadOnlySpan<byte> utf8Name) => Find(utf8Name);

    private int Find(scoped ReadOnlySpan<byte> name)
    {
        var lo = 0;
        var hi = _count - 1;
        while (lo <= hi)
        {
            var mid = (int)((uint)(lo + hi) >> 1);
            var index = BlittableFormat.ReadWidth(_document, _order + (mid * _orderWidth), _orderWidth);
            if ((uint)index >= (uint)_count)
            {
                BlittableFormat.ThrowFormat("The sorted index {0} of the object at {1} is out of range ({2} properties).", index, _position, _count);
            }

            var namePosition = GetNamePositionChecked(index);
            var comparison = BlittableFormat.ReadStringBytes(_document, ref namePosition, out _).SequenceCompareTo(name);
            if (comparison == 0)
            {
                return index;
            }

            if (comparison < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }

        return -1;
    }

    /// <summary>UTF-8 name of the property at an insertion index.</summary>
    public ReadOnlySpan<byte> GetNameAt(int index)
    {
        if ((uint)index >= (uint)_count)
        {
            ThrowIndex(index);
        }

        var namePosition = GetNamePositionChecked(index);
        return BlittableFormat.ReadStringBytes(_document, ref namePosition, out _);
    }

    /// <summary>Position of the encoded name (for copying names with their escape list), checked.</summary>
    internal int GetNamePositionChecked(int index)
    {
        var entry = _entries + (index * _entrySize);
        var namePosition = _names + BlittableFormat.ReadWidth(_document, entry, _nameWidth);
        if (namePosition >= _document.Length)
        {
            BlittableFormat.ThrowFormat("Property {0} of the object at {1} has a name offset outside the names area.", index, _position);
        }

        return namePosition;
    }

    /// <summary>Value and name position of the entry at <paramref name="index"/> (0 &lt;= index &lt; Count, checked by the caller's loop).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal BlittableValue GetEntry(int index, out int namePosition)
    {
        var entry = _entries + (index * _entrySize);
        namePosition = _names + BlittableFormat.ReadWidth(_document, entry, _nameWidth);
        var back = BlittableFormat.ReadWidth(_document, entry + _nameWidth, _valueWidth);
        return BlittableValue.Create(_document, _position, back, _document[entry + _nameWidth + _valueWidth]);
    }

    /// <summary>Value of the property at an insertion index.</summary>
    public BlittableValue GetValueAt(int index)
    {
        if ((uint)index >= (uint)_count)
        {
            ThrowIndex(index);
        }

        var entry = _entries + (index * _entrySize) + _nameWidth;
        var back = BlittableFormat.ReadWidth(_document, entry, _valueWidth);
        var type = _document[entry + _valueWidth];
        return BlittableValue.Create(_document, _position, back, type);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowIndex(int index) =>
        throw new ArgumentOutOfRangeException(nameof(index), index, $"The object has {_count} properties.");

    public Enumerator GetEnumerator() => new(this);

    /// <summary>A property: its UTF-8 name and value.</summary>
    public readonly ref struct Property
    {
        internal Property(ReadOnlySpan<byte> name, BlittableValue value)
        {
            Name = name;
            Value = value;
        }

        public ReadOnlySpan<byte> Name { get; }

        public BlittableValue Value { get; }

        public void Deconstruct(out ReadOnlySpan<byte> name, out BlittableValue value)
        {
            name = Name;
            value = Value;
        }
    }

    /// <summary>Enumerates properties in insertion order.</summary>
    public ref struct Enumerator
    {
        private readonly BlittableObject _obj;
        private int _index;

        internal Enumerator(BlittableObject obj)
        {
            _obj = obj;
            _index = -1;
        }

        public readonly Property Current => new(_obj.GetNameAt(_index), _obj.GetValueAt(_index));

        public bool MoveNext() => ++_index < _obj._count;
    }
}

/// <summary>An array inside a blittable document.</summary>
public readonly ref struct BlittableArray
{
    private readonly ReadOnlySpan<byte> _document;
    private readonly int _position;
    private readonly int _count;
    private readonly int _width;
    private readonly int _entries;

    internal BlittableArray(ReadOnlySpan<byte> document, int position)
    {
        if ((uint)position >= (uint)document.Length || position < BlittableHeader.Size)
        {
            BlittableFormat.ThrowFormat("Array offset {0} is outside the document ({1} bytes).", position, document.Length);
        }

        var flags = document[position];
        if ((flags & BlittableFormat.TagMask) != BlittableFormat.ArrayTag || (flags & 0x3F) > 2)
        {
            BlittableFormat.ThrowFormat("No array table at position {0} (flags 0x{1:X2}).", position, flags);
        }

        _document = document;
        _position = position;
        _width = BlittableFormat.WidthOf(flags & 3);
        var p = position + 1;
        _count = BlittableFormat.ReadVarInt32(document, ref p);
        _entries = p;
        if (_entries + ((long)_count * (_width + 1)) > document.Length)
        {
            BlittableFormat.ThrowFormat("The array table at {0} ({1} items) runs past the end of the document.", position, _count);
        }
    }

    /// <summary>The position just past this array's table.</summary>
    internal int TableEnd => _entries + (_count * (_width + 1));

    public int Length => _count;

    internal ReadOnlySpan<byte> Document => _document;

    internal int Position => _position;

    internal int EntriesOffset => _entries;

    internal int ValueWidth => _width;

    public BlittableValue this[int index]
    {
        get
        {
            if ((uint)index >= (uint)_count)
            {
                ThrowIndex(index);
            }

            var entry = _entries + (index * (_width + 1));
            var back = BlittableFormat.ReadWidth(_document, entry, _width);
            return BlittableValue.Create(_document, _position, back, _document[entry + _width]);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowIndex(int index) =>
        throw new ArgumentOutOfRangeException(nameof(index), index, $"The array has {_count} items.");

    public Enumerator GetEnumerator() => new(this);

    public ref struct Enumerator
    {
        private readonly BlittableArray _array;
        private int _index;

        internal Enumerator(BlittableArray array)
        {
            _array = array;
            _index = -1;
        }

        public readonly BlittableValue Current => _array[_index];

        public bool MoveNext() => ++_index < _array._count;
    }
}
