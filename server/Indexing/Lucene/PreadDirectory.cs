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
/// </summary>
public sealed class PreadDirectory(DirectoryInfo path) : FSDirectory(path, null)
{
    public override IndexInput OpenInput(string name, IOContext context)
    {
        EnsureOpen();
        var file = Path.Combine(Directory.FullName, name);
        var handle = File.OpenHandle(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        try
        {
            return new Input($"PreadIndexInput(path=\"{file}\")", handle, 0, RandomAccess.GetLength(handle), BufferedIndexInput.GetBufferSize(context), owner: true);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <summary>Compound files: one handle, shared by the slices' inputs and closed with the slicer.</summary>
    public override IndexInputSlicer CreateSlicer(string name, IOContext context)
    {
        EnsureOpen();
        var file = Path.Combine(Directory.FullName, name);
        return new Slicer(file, File.OpenHandle(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete), context);
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
                handle.Dispose();
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
                throw new EndOfStreamException($"read past EOF: {this}");
            var span = b.AsSpan(offset1, count);
            var at = offset + position;
            while (!span.IsEmpty)
            {
                var read = RandomAccess.Read(handle, span, at);
                if (read <= 0)
                    throw new EndOfStreamException($"read past EOF: {this} at {at}");
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
