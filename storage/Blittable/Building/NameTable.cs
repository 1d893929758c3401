using System.Buffers.Binary;
using System.IO.Hashing;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Per-document set of property names already written, so each name is stored once. Open
/// addressing over a power-of-two slot array; a generation stamp makes the per-document clear O(1).
/// </summary>
internal sealed class NameTable
{
    internal struct Name
    {
        public int Position;      // of the encoded name in the names area
        public int DataPosition;  // of its UTF-8 bytes in the names area
        public int Length;
        public ulong SortKey;     // first 8 bytes, big-endian, zero padded: cheap first comparison
        public uint Hash;
    }

    private int[] _slots = new int[256];      // index into _names + 1, valid when _stamps matches
    private int[] _stamps = new int[256];
    private Name[] _names = new Name[64];
    private int _count;
    private int _generation = 1;

    public void Clear()
    {
        _count = 0;
        _generation++;
        if (_generation == int.MaxValue)
        {
            Array.Clear(_stamps);
            _generation = 1;
        }
    }

    public ref Name this[int index] => ref _names[index];

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint HashOf(ReadOnlySpan<byte> name)
    {
        ulong h;
        var length = name.Length;
        if (length >= 8)
        {
            if (length > 16)
            {
                // Long names: hash every byte, so crafted names sharing their ends cannot collide en masse.
                return (uint)XxHash3.HashToUInt64(name);
            }

            var a = BinaryPrimitives.ReadUInt64LittleEndian(name);
            var b = BinaryPrimitives.ReadUInt64LittleEndian(name.Slice(length - 8));
            h = (a * 0x9E3779B97F4A7C15UL) ^ BitOperations.RotateLeft(b * 0xC2B2AE3D27D4EB4FUL, 31) ^ (ulong)length;
        }
        else
        {
            ulong a = 0;
            for (var i = 0; i < length; i++)
            {
                a = (a << 8) | name[i];
            }

            h = (a + (ulong)length) * 0x9E3779B97F4A7C15UL;
        }

        return (uint)(h >> 32) ^ (uint)h;
    }

    public static ulong SortKeyOf(ReadOnlySpan<byte> name)
    {
        if (name.Length >= 8)
        {
            return BinaryPrimitives.ReadUInt64BigEndian(name);
        }

        ulong key = 0;
        for (var i = 0; i < 8; i++)
        {
            key = (key << 8) | (i < name.Length ? name[i] : 0u);
        }

        return key;
    }

    /// <summary>Finds <paramref name="name"/>; the document bytes are in <paramref name="document"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int Find(ReadOnlySpan<byte> name, uint hash, ReadOnlySpan<byte> document)
    {
        var mask = _slots.Length - 1;
        var slot = (int)hash & mask;
        while (true)
        {
            if (_stamps[slot] != _generation)
            {
                return ~slot;
            }

            var index = _slots[slot];
            ref var candidate = ref _names[index];
            if (candidate.Hash == hash && candidate.Length == name.Length
                && document.Slice(candidate.DataPosition, candidate.Length).SequenceEqual(name))
            {
                return index;
            }

            slot = (slot + 1) & mask;
        }
    }

    /// <summary>Adds a name at the free slot <paramref name="slot"/> returned (complemented) by <see cref="Find"/>.</summary>
    public int Add(int slot, in Name name)
    {
        if (_count == _names.Length)
        {
            Array.Resize(ref _names, _names.Length * 2);
        }

        var index = _count++;
        _names[index] = name;
        _slots[slot] = index;
        _stamps[slot] = _generation;
        if (_count * 2 > _slots.Length)
        {
            Rehash();
        }

        return index;
    }

    private void Rehash()
    {
        var size = _slots.Length * 2;
        _slots = new int[size];
        _stamps = new int[size];
        _generation = 1;
        var mask = size - 1;
        for (var i = 0; i < _count; i++)
        {
            var slot = (int)_names[i].Hash & mask;
            while (_stamps[slot] == _generation)
            {
                slot = (slot + 1) & mask;
            }

            _slots[slot] = i;
            _stamps[slot] = _generation;
        }
    }
}
