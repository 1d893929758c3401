using System.Buffers;
using System.Runtime.CompilerServices;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// The builder's growable working arrays (entry stack, sort order, escape list, scratch, names
/// area) come from <see cref="ArrayPool{T}.Shared"/>: growing one for a large document costs no
/// allocation once the pool is warm, and at the end of a request (<see cref="JsonOperationContext.Reset"/>)
/// one grown past <see cref="KeepBytes"/> goes back to the pool. A context is pooled per request
/// and lives long: it keeps what a normal document needs, not what its largest document ever did.
/// </summary>
internal static class WorkingArray
{
    /// <summary>
    /// Bytes of one working array kept across requests. Ordinary documents stay far below (a
    /// 2,000-value array or object needs 48 KB of entries); a larger one rents again from the
    /// pool, which costs a copy per doubling but no allocation. Below the 85 KB large object heap
    /// threshold, and small enough that the few hundred pooled request contexts pin little.
    /// </summary>
    public const int KeepBytes = 64 * 1024;

    public static T[] Rent<T>(int length) => ArrayPool<T>.Shared.Rent(length);

    /// <summary>
    /// Replaces <paramref name="array"/> (rented) by a rented array of at least
    /// <paramref name="required"/> items and at least twice as long, copying the whole old array
    /// when <paramref name="keepContent"/>. The caller holds no span of the old array: it goes
    /// back to the pool.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Grow<T>(ref T[] array, long required, bool keepContent)
    {
        if (required > Array.MaxLength)
        {
            BlittableBuilder.ThrowParse(BlittableParseError.TooLarge, 0, $"A document needs a working array of {required} items, more than .NET can allocate.");
        }

        var next = ArrayPool<T>.Shared.Rent((int)Math.Min(Array.MaxLength, Math.Max(required, 2L * array.Length)));
        if (keepContent)
        {
            array.AsSpan().CopyTo(next);
        }

        Return(array);
        array = next;
    }

    /// <summary>
    /// End of a request: an array grown past <see cref="KeepBytes"/> goes back to the pool and
    /// <paramref name="initialLength"/> items are rented instead (content not kept). True if it did.
    /// </summary>
    public static bool Trim<T>(ref T[] array, int initialLength)
    {
        if (SizeOf(array) <= KeepBytes)
        {
            return false;
        }

        Return(array);
        array = ArrayPool<T>.Shared.Rent(initialLength);
        return true;
    }

    /// <summary>Hands the array back for good (the context is disposed).</summary>
    public static void Release<T>(ref T[] array)
    {
        Return(array);
        array = [];
    }

    public static long SizeOf<T>(T[] array) => (long)array.Length * Unsafe.SizeOf<T>();

    private static void Return<T>(T[] array)
    {
        // The empty array of a released builder was never rented (the pool rejects foreign lengths).
        if (array.Length > 0)
        {
            ArrayPool<T>.Shared.Return(array);
        }
    }
}
