using System.IO.Hashing;
using System.IO.MemoryMappedFiles;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Native;

namespace Jackdaw.Storage.Engine.Paging;

/// <summary>
/// A read-only memory map of the data file. Readers take a pointer from the current mapping on
/// every data-file page access. A mapping is never unmapped before the environment closes, so a
/// pointer taken from an older (smaller) mapping stays valid: growth only ever adds mappings.
/// </summary>
internal sealed unsafe class Mapping : IDisposable
{
    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;

    public Mapping(FileStream stream, long length)
    {
        _file = MemoryMappedFile.CreateFromFile(stream, null, length, MemoryMappedFileAccess.Read, HandleInheritability.None, leaveOpen: true);
        _view = _file.CreateViewAccessor(0, length, MemoryMappedFileAccess.Read);
        byte* p = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref p);
        Base = p + _view.PointerOffset;
        Length = length;
    }

    public byte* Base { get; }

    public long Length { get; }

    public void Dispose()
    {
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _file.Dispose();
    }
}

/// <summary>
/// The data file: 8 KiB pages, pages 0/1 the alternating headers. Written only by recovery and
/// the flusher (pwrite + fdatasync), read through <see cref="Mapping"/>.
/// </summary>
internal sealed unsafe class DataFile : IDisposable
{
    public const string FileName = "data.jdb";
    private const long MaxGrowthStep = 64L * 1024 * 1024;

    private readonly FileStream _stream;
    private readonly List<Mapping> _mappings = [];
    private readonly long _growthStep;
    private Mapping _current;
    private long _lastHeaderSlotWritten;

    private readonly StorageIo _io;

    private DataFile(string path, FileStream stream, long growthStep, StorageIo io)
    {
        _io = io;
        FilePath = path;
        _stream = stream;
        _growthStep = growthStep;
        _current = new Mapping(stream, stream.Length);
        _mappings.Add(_current);
    }

    public string FilePath { get; }

    public long Length => Volatile.Read(ref _current).Length;

    /// <summary>The transaction ids in the two header slots (-1 for an invalid slot).</summary>
    public long HeaderA { get; private set; } = -1;

    public long HeaderB { get; private set; } = -1;

    public long FlushedTransactionId => Math.Max(HeaderA, HeaderB);

    /// <summary>A header slot read at open had an older format version (see <see cref="FileHeader.CurrentFormatVersion"/>).</summary>
    public bool HasOlderFormatHeader { get; private set; }

    /// <summary>Opens or creates the file. A new file gets both headers at transaction 0 and an initial state.</summary>
    public static DataFile Open(string folder, long initialSize, StorageIo io, out bool created)
    {
        var path = Path.Combine(folder, FileName);
        var size = Math.Max(initialSize, 16 * Constants.PageSize);
        size = (size + Constants.PageSize - 1) & ~(long)(Constants.PageSize - 1);
        created = !File.Exists(path);
        if (created)
        {
            CreateNew(path, size, io);
        }

        var stream = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.Read, 1, FileOptions.None);
        try
        {
            if (stream.Length < Constants.FirstFreePage * Constants.PageSize || stream.Length % Constants.PageSize != 0)
            {
                throw new StorageCorruptedException(path, $"The data file is {stream.Length} bytes long, which is not a whole number of {Constants.PageSize}-byte pages holding at least the headers.");
            }

            var file = new DataFile(path, stream, Math.Clamp(size, 2 * 1024 * 1024, MaxGrowthStep), io);
            file.ReadHeaders();
            return file;
        }
        catch
        {
            stream.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Builds the new file under a temporary name and renames it into place, so a crash during
    /// creation leaves no half-initialized data file (which would otherwise read as corrupt).
    /// </summary>
    private static void CreateNew(string path, long size, StorageIo io)
    {
        var temp = path + ".new";
        using (var stream = new FileStream(temp, FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1, FileOptions.None))
        {
            io.SetLength(stream, size);
            WriteInitialPages(stream, io);
        }

        File.Move(temp, path, overwrite: false);
        io.SyncFolder(Path.GetDirectoryName(path)!);
    }

    /// <summary>
    /// A new file at <paramref name="path"/> holding only the two headers (flushed transaction 0), for a
    /// restore to write every page into; it grows in 64 MiB steps.
    /// </summary>
    public static DataFile CreateEmpty(string path, StorageIo io)
    {
        var stream = new FileStream(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Read, 1, FileOptions.None);
        try
        {
            var buffer = new byte[Constants.FirstFreePage * Constants.PageSize];
            WriteHeader(buffer.AsSpan(0, Constants.PageSize), 0);
            WriteHeader(buffer.AsSpan(Constants.PageSize, Constants.PageSize), 0);
            io.Write(stream.SafeFileHandle, buffer, 0, path);
            var file = new DataFile(path, stream, MaxGrowthStep, io);
            file.ReadHeaders();
            return file;
        }
        catch
        {
            stream.Dispose();
            throw;
        }
    }

    private static void WriteInitialPages(FileStream stream, StorageIo io)
    {
        var buffer = new byte[Constants.FirstFreePage * Constants.PageSize + Constants.PageSize];
        for (var slot = 0; slot < 2; slot++)
        {
            WriteHeader(buffer.AsSpan(slot * Constants.PageSize, Constants.PageSize), 0);
        }

        var state = buffer.AsSpan((int)Constants.StatePage * Constants.PageSize, Constants.PageSize);
        ref var s = ref StateHeader.Of(state);
        s.Page.PageNumber = Constants.StatePage;
        s.Page.Flags = PageFlags.State;
        s.Magic = StateHeader.MagicValue;
        s.TransactionId = 0;
        s.NextPage = Constants.FirstFreePage + 1;
        s.FreePages = 0;
        s.RootTree = new TreeHeader { RootPage = Constants.FirstFreePage, Count = 0, Depth = 1, PageCount = 1 };
        s.BitmapCount = 1;
        StateHeader.BitmapPages(state)[0] = Constants.FirstBitmapPage;

        ref var bitmap = ref PageHeader.Of(buffer.AsSpan((int)Constants.FirstBitmapPage * Constants.PageSize, Constants.PageSize));
        bitmap.PageNumber = Constants.FirstBitmapPage;
        bitmap.Flags = PageFlags.FreeSpaceBitmap;

        Trees.TreePage.InitializeLeaf(buffer.AsSpan((int)Constants.FirstFreePage * Constants.PageSize, Constants.PageSize), Constants.FirstFreePage);

        io.Write(stream.SafeFileHandle, buffer, 0, stream.Name);
        io.DataSync(stream);
    }

    private static void WriteHeader(Span<byte> target, long flushedTransactionId)
    {
        ref var h = ref MemoryMarshal.AsRef<FileHeader>(target);
        h.Magic = FileHeader.MagicValue;
        h.FormatVersion = FileHeader.CurrentFormatVersion;
        h.PageSize = Constants.PageSize;
        h.FlushedTransactionId = flushedTransactionId;
        h.Checksum = XxHash64.HashToUInt64(target[..24]);
    }

    private void ReadHeaders()
    {
        HeaderA = ReadHeader(Constants.HeaderPageA);
        HeaderB = ReadHeader(Constants.HeaderPageB);
        if (HeaderA < 0 && HeaderB < 0)
        {
            throw new StorageCorruptedException(FilePath, "Both file headers (pages 0 and 1) are corrupt; the data file cannot be recovered automatically.");
        }

        _lastHeaderSlotWritten = HeaderA >= HeaderB ? Constants.HeaderPageA : Constants.HeaderPageB;
    }

    private long ReadHeader(long slot)
    {
        var page = new ReadOnlySpan<byte>(_current.Base + (slot * Constants.PageSize), FileHeader.Size);
        ref readonly var h = ref MemoryMarshal.AsRef<FileHeader>(page);
        if (h.Magic != FileHeader.MagicValue || h.Checksum != XxHash64.HashToUInt64(page[..24]))
        {
            return -1;
        }

        if (h.FormatVersion < FileHeader.OldestReadableFormatVersion || h.FormatVersion > FileHeader.CurrentFormatVersion || h.PageSize != Constants.PageSize)
        {
            throw new StorageCorruptedException(FilePath, $"The data file has format version {h.FormatVersion} and page size {h.PageSize}; this build reads versions {FileHeader.OldestReadableFormatVersion} to {FileHeader.CurrentFormatVersion} with {Constants.PageSize}-byte pages.");
        }

        if (h.FormatVersion < FileHeader.CurrentFormatVersion)
        {
            HasOlderFormatHeader = true;
        }

        return h.FlushedTransactionId;
    }

    /// <summary>The page as it is in the data file, and how many bytes of the map follow it.</summary>
    public byte* PagePointer(long pageNumber, out long available)
    {
        var mapping = Volatile.Read(ref _current);
        var offset = pageNumber << Constants.PageShift;
        if ((ulong)offset >= (ulong)mapping.Length)
        {
            ThrowOutOfRange(pageNumber, mapping.Length);
        }

        available = mapping.Length - offset;
        return mapping.Base + offset;
    }

    public void ThrowCorruptPage(long pageNumber, string what) =>
        throw new StorageCorruptedException(FilePath, $"Page {pageNumber} is corrupt: {what}.");

    private void ThrowOutOfRange(long pageNumber, long length) =>
        throw new StorageCorruptedException(FilePath, $"Page {pageNumber} is beyond the end of the data file ({length} bytes): a tree refers to a page that was never written.");

    /// <summary>Makes the file at least <paramref name="pages"/> pages long (in large steps) and maps the new length.</summary>
    public void EnsureSize(long pages)
    {
        var needed = pages * Constants.PageSize;
        var length = Length;
        if (needed <= length)
        {
            return;
        }

        // Steps of a quarter of the file (at least the initial size, at most 64 MiB): few remaps,
        // and a file at most ~25% larger than its pages.
        var step = Math.Clamp(length / 4, _growthStep, MaxGrowthStep);
        var newLength = Math.Max(needed, length + step);
        newLength = (newLength + Constants.PageSize - 1) & ~(long)(Constants.PageSize - 1);
        _io.SetLength(_stream, newLength);
        var mapping = new Mapping(_stream, newLength);
        _mappings.Add(mapping);
        Volatile.Write(ref _current, mapping);
    }

    public void Write(long pageNumber, ReadOnlySpan<byte> data) =>
        _io.Write(_stream.SafeFileHandle, data, pageNumber * Constants.PageSize, FilePath);

    /// <summary>Writes bytes at <paramref name="offset"/> inside the page (or overflow run) starting at <paramref name="pageNumber"/>.</summary>
    public void WriteAt(long pageNumber, int offset, ReadOnlySpan<byte> data) =>
        _io.Write(_stream.SafeFileHandle, data, (pageNumber * Constants.PageSize) + offset, FilePath);

    public void Sync() => _io.DataSync(_stream);

    /// <summary>Writes the older header slot (after the data is synced) and syncs it.</summary>
    public void WriteHeader(long flushedTransactionId)
    {
        var slot = _lastHeaderSlotWritten == Constants.HeaderPageA ? Constants.HeaderPageB : Constants.HeaderPageA;
        Span<byte> buffer = stackalloc byte[FileHeader.Size];
        WriteHeader(buffer, flushedTransactionId);
        _io.Write(_stream.SafeFileHandle, buffer, slot * Constants.PageSize, FilePath);
        _io.DataSync(_stream);
        _lastHeaderSlotWritten = slot;
        if (slot == Constants.HeaderPageA)
        {
            HeaderA = flushedTransactionId;
        }
        else
        {
            HeaderB = flushedTransactionId;
        }
    }

    /// <summary>
    /// Closes the file. With <paramref name="unmap"/> false (read transactions still open at
    /// close, a caller bug) the maps stay mapped so those readers' pointers do not fault.
    /// Otherwise a positive <paramref name="trimToPages"/> (the flushed high-water mark) cuts off
    /// the tail that growth steps left unused, so a closed file is no longer than its pages.
    /// Safe at any moment: no flushed state refers to a page at or beyond its high-water mark,
    /// and recovery grows the file again for journal pages beyond it.
    /// </summary>
    public void Dispose(bool unmap, long trimToPages = 0)
    {
        if (unmap)
        {
            foreach (var m in _mappings)
            {
                m.Dispose();
            }

            var length = trimToPages * Constants.PageSize;
            if (trimToPages > Constants.FirstFreePage && length < _stream.Length)
            {
                _stream.SetLength(length);
            }
        }

        _stream.Dispose();
    }

    /// <summary>Unmaps the file after a <see cref="Dispose(bool, long)"/> that kept the maps for open readers.</summary>
    public void ReleaseMappings()
    {
        foreach (var m in _mappings)
        {
            m.Dispose();
        }
    }

    public void Dispose() => Dispose(unmap: true);
}
