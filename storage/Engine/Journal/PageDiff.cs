using System.Buffers.Binary;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>
/// The bytes a transaction changed in a page, as runs of <c>[int Offset][int Length][Length bytes]</c>
/// relative to the page's previous committed version. A run starts at the first differing byte and
/// ends at the first whole <see cref="Block"/> of equal bytes after it, so an unchanged stretch
/// shorter than a block (cheaper to copy than a new run header) stays inside the run.
/// Applying the runs of every transaction in order to any page whose bytes each hold the value of
/// some version at or after the first diff's base gives the newest version (see <see cref="Recovery"/>).
/// </summary>
internal static class PageDiff
{
    public const int RunHeader = 8;
    private const int Block = 32;

    /// <summary>
    /// Writes the runs that turn <paramref name="before"/> into <paramref name="after"/> (same length) into
    /// <paramref name="destination"/>; returns the bytes written, or -1 when they would not be fewer than
    /// the page itself (the caller stores the whole page). An unchanged page gives 0.
    /// </summary>
    public static int Write(ReadOnlySpan<byte> before, ReadOnlySpan<byte> after, Span<byte> destination)
    {
        var limit = Math.Min(after.Length, destination.Length);
        var written = 0;
        var pos = 0;
        while (pos < after.Length)
        {
            pos += before[pos..].CommonPrefixLength(after[pos..]);
            if (pos >= after.Length)
            {
                break;
            }

            var start = pos;
            pos = Math.Min(pos + Block, after.Length);
            while (pos < after.Length)
            {
                var n = Math.Min(Block, after.Length - pos);
                if (before.Slice(pos, n).SequenceEqual(after.Slice(pos, n)))
                {
                    break;
                }

                pos += n;
            }

            var length = pos - start;
            if (written + RunHeader + length >= limit)
            {
                return -1;
            }

            BinaryPrimitives.WriteInt32LittleEndian(destination[written..], start);
            BinaryPrimitives.WriteInt32LittleEndian(destination[(written + 4)..], length);
            after.Slice(start, length).CopyTo(destination[(written + RunHeader)..]);
            written += RunHeader + length;
        }

        return written;
    }

    /// <summary>
    /// Calls <paramref name="apply"/> with (offset in the page, bytes) for each run; false when the runs
    /// are malformed (a run outside a page of <paramref name="pageLength"/> bytes, or a cut-off header).
    /// </summary>
    public static bool ForEachRun<TState>(ReadOnlySpan<byte> runs, int pageLength, TState state, RunAction<TState> apply)
    {
        var pos = 0;
        while (pos < runs.Length)
        {
            if (runs.Length - pos < RunHeader)
            {
                return false;
            }

            var offset = BinaryPrimitives.ReadInt32LittleEndian(runs[pos..]);
            var length = BinaryPrimitives.ReadInt32LittleEndian(runs[(pos + 4)..]);
            if (offset < 0 || length <= 0 || length > pageLength - offset || length > runs.Length - pos - RunHeader)
            {
                return false;
            }

            apply(state, offset, runs.Slice(pos + RunHeader, length));
            pos += RunHeader + length;
        }

        return true;
    }

    public delegate void RunAction<in TState>(TState state, int offset, ReadOnlySpan<byte> bytes);
}
