using System.IO.Hashing;
using System.Runtime.CompilerServices;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// The compressed form of recently written short strings, so that a value that repeats across
/// documents (a company id, a product name, a city, a date) is compressed once per builder rather
/// than once per occurrence: the dictionary coder was 8% of the server's CPU in a bulk insert of the
/// orders corpus. The coders are deterministic, so a hit writes exactly what compressing again would.
/// Direct-mapped: a string's slot is picked by its hash and a miss overwrites the slot.
/// <code>
///   slot s (SlotBytes bytes, in _data at s * SlotBytes)
///     0 .. MaxLength-1           the string (its length in _lengths[s], 0: the slot is empty)
///     MaxLength .. 2*MaxLength-1 its compressed payload (its length in _written[s])
///   _types[s]                    the coder's answer (String: not worth compressing, nothing stored)
/// </code>
/// </summary>
internal sealed class CompressedStringCache
{
    /// <summary>Longest string remembered; longer ones are rarely repeated values and cost more to compare.</summary>
    public const int MaxLength = 32;

    private const int Slots = 512;
    private const int SlotBytes = 2 * MaxLength;

    private readonly byte[] _data = new byte[Slots * SlotBytes];
    private readonly byte[] _lengths = new byte[Slots];
    private readonly byte[] _written = new byte[Slots];
    private readonly BlittableType[] _types = new BlittableType[Slots];

    /// <summary>The coder's answer for <paramref name="value"/> when it is remembered: its type and payload (empty for String).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryGet(ReadOnlySpan<byte> value, out BlittableType type, out ReadOnlySpan<byte> payload)
    {
        if (value.Length > MaxLength)
        {
            type = default;
            payload = default;
            return false;
        }

        var slot = SlotOf(value);
        var at = slot * SlotBytes;
        if (_lengths[slot] != value.Length || !value.SequenceEqual(_data.AsSpan(at, value.Length)))
        {
            type = default;
            payload = default;
            return false;
        }

        type = _types[slot];
        payload = _data.AsSpan(at + MaxLength, _written[slot]);
        return true;
    }

    /// <summary>Remembers the coder's answer for <paramref name="value"/> (a payload no longer than the value; empty for String).</summary>
    public void Add(ReadOnlySpan<byte> value, BlittableType type, ReadOnlySpan<byte> payload)
    {
        if (value.Length > MaxLength || value.Length == 0 || payload.Length > MaxLength)
        {
            return;
        }

        var slot = SlotOf(value);
        var at = slot * SlotBytes;
        value.CopyTo(_data.AsSpan(at));
        payload.CopyTo(_data.AsSpan(at + MaxLength));
        _lengths[slot] = (byte)value.Length;
        _written[slot] = (byte)payload.Length;
        _types[slot] = type;
    }

    internal static int SlotOf(ReadOnlySpan<byte> value) => (int)(XxHash3.HashToUInt64(value) & (Slots - 1));
}
