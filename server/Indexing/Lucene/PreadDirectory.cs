using Lucene.Net.Store;
using Microsoft.Win32.SafeHandles;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// The index's directory: <see cref="FSDirectory"/>'s writing, fsync and locking, with reads that
/// are one positional read (<see cref="RandomAccess.Read(SafeFileHandle, Span{byte}, long)"/>, a
/// <c>pread</c>) per buffer refill: no seek, no <c>fstat</c> (a file's length is taken once when it
/// is opened: Lucene's files never change once written) and no lock shared by an input's clones,
/// which <c>NIOFSDirectory</c> takes around every read. Queries read the same segments from many
/// threads at once; with <c>NIOFSDirectory</c> they queued on those locks.
/// <para>
/// A small file that searchers open (not a merge's or a flush's read, nor a read-once) is read whole,
/// once, into an array, and read from there (<see cref="ArrayIndexInput"/>): an equality query looks
/// its term up in every segment, and with pread each lookup cost a few system calls and a buffer per
/// input clone (12% of a query's server samples on the 100,000 orders' index, 3 MB in 4 segments).
/// Files over <see cref="MaxHeldFileBytes"/>, or past <see cref="MaxHeldBytes"/> held in the process,
/// are read with pread as before; the page cache holds them either way.
/// </para>
/// </summary>
public sealed class PreadDirectory(DirectoryInfo path) : FSDirectory(path, null)
{
    /// <summary>The largest file read into memory: a segment of about 500,000 small entries.</summary>
    public const long MaxHeldFileBytes = 16L << 20;

    /// <summary>
    /// What all indexes of the process hold in memory at most: 256 MiB, or an eighth of the memory
    /// the GC may use (a container's limit), whichever is less. Unlike the page cache, held arrays
    /// are not given back under memory pressure.
    /// </summary>
    public static readonly long MaxHeldBytes = Math.Min(256L << 20, Math.Max(16L << 20, GC.GetGCMemoryInfo().TotalAvailableMemoryBytes / 8));

    private static long s_heldBytes;

    /// <summary>The bytes index files now hold in memory, across the process.</summary>
    public static long HeldBytes => Interlocked.Read(ref s_heldBytes);

    public override IndexInput OpenInput(string name, IOContext context)
    {
        EnsureOpen();
        var file = Path.Combine(Directory.FullName, name);
        var handle = File.OpenHandle(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        try
        {
            var length = RandomAccess.GetLength(handle);
            if (TryReadWhole(handle, length, context) is { } bytes)
            {
                handle.Dispose();
                return new ArrayIndexInput($"ArrayIndexInput(path=\"{file}\")", bytes, 0, bytes.Length, heldBytes: length);
            }

            return new Input($"PreadIndexInput(path=\"{file}\")", handle, 0, length, BufferedIndexInput.GetBufferSize(context), owner: true);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <summary>Compound files: one handle (or one array), shared by the slices' inputs and closed with the slicer.</summary>
    public override IndexInputSlicer CreateSlicer(string name, IOContext context)
    {
        EnsureOpen();
        var file = Path.Combine(Directory.FullName, name);
        var handle = File.OpenHandle(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        try
        {
            if (TryReadWhole(handle, RandomAccess.GetLength(handle), context) is { } bytes)
            {
                handle.Dispose();
                return new ArraySlicer(file, bytes);
            }

            return new Slicer(file, handle, context);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    internal static void Release(long bytes) => Interlocked.Add(ref s_heldBytes, -bytes);

    /// <summary>The whole file, when it is small, read for searching, and the budget has room for it; else null.</summary>
    private static byte[]? TryReadWhole(SafeFileHandle handle, long length, IOContext context)
    {
        if (length > MaxHeldFileBytes || context.ReadOnce || context.Context is IOContext.UsageContext.MERGE or IOContext.UsageContext.FLUSH)
        {
            return null;
        }

        if (Interlocked.Add(ref s_heldBytes, length) > MaxHeldBytes)
        {
            Release(length);
            return null;
        }

        try
        {
            var bytes = GC.AllocateUninitializedArray<byte>((int)length);
            var span = bytes.AsSpan();
            var at = 0L;
            while (!span.IsEmpty)
            {
                var read = RandomAccess.Read(handle, span, at);
                if (read <= 0)
                {
                    throw new EndOfStreamException($"read past EOF: {handle} at {at} of {length}");
                }

                span = span[read..];
                at += read;
            }

            return bytes;
        }
        catch
        {
            Release(length);
            throw;
        }
    }

    /// <summary>A compound file held in memory: its slices read the one array; disposing the slicer gives it back to the budget.</summary>
    private sealed class ArraySlicer(string file, byte[] bytes) : IndexInputSlicer
    {
        private bool _held = true;

        public override IndexInput OpenSlice(string sliceDescription, long offset, long length)
        {
            if (offset < 0 || length < 0 || offset + length > bytes.Length)
            {
                throw new ArgumentException($"slice {offset}:{offset + length} is out of \"{file}\" ({bytes.Length} bytes)");
            }

            return new ArrayIndexInput($"ArrayIndexInput({sliceDescription} in path=\"{file}\" slice={offset}:{offset + length})", bytes, (int)offset, (int)length, heldBytes: 0);
        }

        [Obsolete("Only for reading CFS files from 3.x indexes.")]
        public override IndexInput OpenFullSlice() => OpenSlice("full-slice", 0, bytes.Length);

        protected override void Dispose(bool disposing)
        {
            if (disposing && _held)
            {
                _held = false;
                Release(bytes.Length);
            }
        }
    }

    private sealed class Slicer(string file, SafeFileHandle handle, IOContext context) : IndexInputSlicer
    {
        public override IndexInput OpenSlice(string sliceDescription, long offset, long length) =>
            new Input($"PreadIndexInput({sliceDescription} in path=\"{file}\" slice={offset}:{offset + length})", handle, offset, length, BufferedIndexInput.GetBufferSize(context), owner: false);

        // Marked obsolete by Lucene.Net, but CompoundFileDirectory calls it whenever it opens a .cfs: it must work.
        [Obsolete("Only for reading CFS files from 3.x indexes.")]
        public override IndexInput OpenFullSlice() => OpenSlice("full-slice", 0, RandomAccess.GetLength(handle));

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                handle.Dispose();
            }
        }
    }

    /// <summary>A file, or a slice of one: clones share the handle (only the original closes it).</summary>
    private sealed class Input(string description, SafeFileHandle handle, long offset, long length, int bufferSize, bool owner) : BufferedIndexInput(description, bufferSize)
    {
        private bool _owner = owner;

        public override long Length => length;

        public override object Clone()
        {
            var clone = (Input)base.Clone();
            clone._owner = false;
            return clone;
        }

        protected override void ReadInternal(byte[] b, int offset1, int count)
        {
            var position = Position;
            if (position + count > length)
            {
                throw new EndOfStreamException($"read past EOF: {this}");
            }
            var span = b.AsSpan(offset1, count);
            var at = offset + position;
            while (!span.IsEmpty)
            {
                var read = RandomAccess.Read(handle, span, at);
                if (read <= 0)
                {
                    throw new EndOfStreamException($"read past EOF: {this} at {at}");
                }
                span = span[read..];
                at += read;
            }
        }

        protected override void SeekInternal(long pos)
        {
            // Every read says where it reads: nothing to move.
        }

        protected override void Dispose(bool disposing)
        {
            if (disposing && _owner)
            {
                _owner = false;
                handle.Dispose();
            }
        }
    }
}
