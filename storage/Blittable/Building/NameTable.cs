using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Property names seen by one builder, kept across documents (documents of a collection share
/// their names): a name gets a stable id, its bytes are hashed and copied once, and per document
/// only a stamp says whether (and where) it was already written to that document's names area.
/// Open addressing over a power-of-two slot array. Cleared when it grows past its bounds, only
/// between documents; at the end of a request its arrays shrink back when they grew past what
/// <see cref="KeepNames"/> names need (<see cref="TrimIfLarge"/>).
/// </summary>
internal sealed class NameTable
{
    internal struct Name
    {
        public int DataPosition;   // of its UTF-8 bytes in _bytes
        public int Length;
        public int EncodedPosition; // of its encoded form (as written to a names area) in _bytes
        public int EncodedLength;
        public ulong SortKey;      // first 8 bytes, big-endian, zero padded: cheap first comparison
        public uint Hash;
        public int DocumentStamp;  // == the builder's document stamp when written in the current document
        public int DocumentOffset; // its offset in the current document's names area
    }

    private const int MaxNames = 1 << 15;
    private const int Padding = 32;   // bytes kept free after the last name, for MatchesChunk
    private const int MaxBytes = 1 << 20;

    /// <summary>
    /// Names kept across requests (with up to <see cref="KeepBytes"/> of their bytes): far more
    /// than the documents of a few collections use, so those keep their ids and the next request
    /// finds them. A table grown past it (a document keyed by ids, say) would pin megabytes in a
    /// pooled context (40 bytes per name, plus slots and bytes; one document may go past
    /// <see cref="MaxNames"/>), so it starts over instead.
    /// </summary>
    private const int KeepNames = 4096;
    private const int KeepBytes = 128 * 1024;

    private const int InitialSlots = 1024;
    private const int InitialNames = 256;
    private const int InitialBytes = 4096;

    private int[] _slots = new int[InitialSlots];       // name index + 1; 0 = empty
    private Name[] _names = new Name[InitialNames];
    private byte[] _bytes = new byte[InitialBytes];
    private int _byteCount;
    private int _count;

    /// <summary>Bumped whenever ids are reused, so caches keyed by ids know to drop their content.</summary>
    public int Epoch { get; private set; }

    public int Count => _count;

    public bool IsOverfull => _count > MaxNames || _byteCount > MaxBytes;

    public void Clear()
    {
        Array.Clear(_slots);
        _count = 0;
        _byteCount = 0;
        Epoch++;
    }

    /// <summary>
    /// End of a request: when the arrays grew past what <see cref="KeepNames"/> names need, starts
    /// over with the initial ones (ids are reused: <see cref="Epoch"/> moves on). True if it did.
    /// </summary>
    public bool TrimIfLarge()
    {
        // Clear keeps the arrays, so their lengths, not the count, tell what a past document grew.
        if (_names.Length <= KeepNames && _bytes.Length <= KeepBytes)
        {
            return false;
        }

        _slots = new int[InitialSlots];
        _names = new Name[InitialNames];
        _bytes = new byte[InitialBytes];
        _count = 0;
        _byteCount = 0;
        Epoch++;
        return true;
    }

    /// <summary>Bytes held by the table's arrays (diagnostics and tests).</summary>
    public long RetainedBytes =>
        ((long)_slots.Length * sizeof(int)) + ((long)_names.Length * Unsafe.SizeOf<Name>()) + _bytes.Length;

    public ref Name this[int index] => ref _names[index];

    public ReadOnlySpan<byte> BytesOf(in Name name) => _bytes.AsSpan(name.DataPosition, name.Length);

    public ReadOnlySpan<byte> EncodedOf(in Name name) => _bytes.AsSpan(name.EncodedPosition, name.EncodedLength);

    public byte[] Bytes => _bytes;

    /// <summary>Chosen at random per process, so names crafted to collide in one process do not in another.</summary>
    private static readonly long Seed = Random.Shared.NextInt64();

    /// <summary>
    /// A seeded hash of every byte of the name. A fixed hash let a small body of crafted names (for
    /// instance 16-byte names differing only in the top bits of their two halves) fill one run of
    /// slots, making each insertion a walk over all the names before it. Hashing runs only when the
    /// guessed name was wrong, so its cost is off the path of documents of a known shape.
    /// </summary>
    public static uint HashOf(ReadOnlySpan<byte> name) => (uint)XxHash3.HashToUInt64(name, Seed);

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

    /// <summary>Whether the name with id <paramref name="index"/> is <paramref name="name"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Matches(int index, ReadOnlySpan<byte> name)
    {
        ref var candidate = ref _names[index];
        return candidate.Length == name.Length && _bytes.AsSpan(candidate.DataPosition, name.Length).SequenceEqual(name);
    }

    /// <summary>
    /// Whether the name with id <paramref name="index"/> is the first <paramref name="length"/>
    /// bytes of <paramref name="chunk"/> (32 bytes; length at most 32): one vector compare, which
    /// reads past the stored name into the padding kept after the last one.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool MatchesChunk(int index, ReadOnlySpan<byte> chunk, int length)
    {
        ref var candidate = ref _names[index];
        if (candidate.Length != length)
        {
            return false;
        }

        var equal = Vector256.Equals(Vector256.Create(_bytes.AsSpan(candidate.DataPosition, Padding)), Vector256.Create(chunk));
        return (~equal.ExtractMostSignificantBits() & (uint)((1UL << length) - 1)) == 0;
    }

    /// <summary>Finds <paramref name="name"/>: its index, or the complement of the free slot for <see cref="Add"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int Find(ReadOnlySpan<byte> name, uint hash)
    {
        var slots = _slots;
        var mask = slots.Length - 1;
        var slot = (int)hash & mask;
        while (true)
        {
            var index = slots[slot] - 1;
            if (index < 0)
            {
                return ~slot;
            }

            ref var candidate = ref _names[index];
            if (candidate.Hash == hash && candidate.Length == name.Length
                && _bytes.AsSpan(candidate.DataPosition, candidate.Length).SequenceEqual(name))
            {
                return index;
            }

            slot = (slot + 1) & mask;
        }
    }

    /// <summary>
    /// Adds a name at the free slot returned (complemented) by <see cref="Find"/>, given its encoded
    /// form with the raw bytes at <paramref name="dataOffset"/> inside it.
    /// </summary>
    public int Add(int slot, ReadOnlySpan<byte> encoded, int dataOffset, int length, uint hash)
    {
        if (_count == _names.Length)
        {
            Array.Resize(ref _names, _names.Length * 2);
        }

        if (_bytes.Length - _byteCount < encoded.Length + Padding)
        {
            Array.Resize(ref _bytes, Math.Max(_bytes.Length * 2, _byteCount + encoded.Length + Padding));
        }

        encoded.CopyTo(_bytes.AsSpan(_byteCount));
        var index = _count++;
        _names[index] = new Name
        {
            DataPosition = _byteCount + dataOffset,
            Length = length,
            EncodedPosition = _byteCount,
            EncodedLength = encoded.Length,
            SortKey = SortKeyOf(encoded.Slice(dataOffset, length)),
            Hash = hash,
            DocumentStamp = 0,
        };
        _byteCount += encoded.Length;
        _slots[slot] = index + 1;
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
        var mask = size - 1;
        for (var i = 0; i < _count; i++)
        {
            var slot = (int)_names[i].Hash & mask;
            while (_slots[slot] != 0)
            {
                slot = (slot + 1) & mask;
            }

            _slots[slot] = i + 1;
        }
    }

    internal static readonly SearchValues<byte> CharsToEscape = SearchValues.Create(
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, (byte)'"', (byte)'\\']);
}

/// <summary>
/// Sorted orders of recently seen objects, keyed by their sequence of name ids: documents of one
/// collection repeat the same few shapes, so most objects skip sorting (and the duplicate check,
/// which the cached order has passed).
/// </summary>
internal sealed class ShapeCache
{
    private struct Shape
    {
        public uint Hash;
        public int Count;
        public int[] Ids;
        public byte[] OrderBytes;   // the sort order as bytes (counts up to MaxCount fit a byte)
    }

    internal const int MaxCount = 64;
    private readonly Shape[] _shapes = new Shape[256];
    private int _epoch = -1;

    /// <summary>The cached shape with this hash and count, if any: the caller compares its ids.</summary>
    public bool TryGet(int epoch, uint hash, int count, out ReadOnlySpan<int> ids, out ReadOnlySpan<byte> orderBytes)
    {
        ref var shape = ref _shapes[hash & 255];
        if (_epoch == epoch && shape.Hash == hash && shape.Count == count && shape.Ids is not null)
        {
            ids = shape.Ids.AsSpan(0, count);
            orderBytes = shape.OrderBytes.AsSpan(0, count);
            return true;
        }

        ids = default;
        orderBytes = default;
        return false;
    }

    public void Add(int epoch, uint hash, ReadOnlySpan<int> ids, ReadOnlySpan<int> order)
    {
        if (ids.Length > MaxCount)
        {
            return;
        }

        if (_epoch != epoch)
        {
            Array.Clear(_shapes);
            _epoch = epoch;
        }

        ref var shape = ref _shapes[hash & 255];
        if (shape.Ids is null || shape.Ids.Length < ids.Length)
        {
            shape.Ids = new int[MaxCount];
            shape.OrderBytes = new byte[MaxCount];
        }

        ids.CopyTo(shape.Ids);
        for (var i = 0; i < order.Length; i++)
        {
            shape.OrderBytes[i] = (byte)order[i];
        }
        shape.Hash = hash;
        shape.Count = ids.Length;
    }
}
