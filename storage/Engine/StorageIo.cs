using Jackdaw.Storage.Engine.Native;
using Microsoft.Win32.SafeHandles;

namespace Jackdaw.Storage.Engine;

/// <summary>
/// Every write, size change and sync the engine makes to its files goes through this layer (reads
/// of the mapped data file and of journals do not). The default writes to the real files; tests
/// derive from it to inject failures (a full disk at any chosen write). A failure the operating
/// system reports as "no space left" (ENOSPC) leaves here as a <see cref="DiskFullException"/>
/// naming the file.
/// </summary>
public class StorageIo
{
    /// <summary>The real files.</summary>
    public static StorageIo Default { get; } = new();

    // errno ENOSPC on Linux; ERROR_DISK_FULL and ERROR_HANDLE_DISK_FULL on Windows.
    private const int ENOSPC = 28;
    private const int WindowsDiskFull = unchecked((int)0x80070070);
    private const int WindowsHandleDiskFull = unchecked((int)0x80070027);

    /// <summary>Whether <paramref name="e"/> (or what it wraps) means the file system is full.</summary>
    public static bool IsDiskFull(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is DiskFullException || (e is IOException && e.HResult is ENOSPC or WindowsDiskFull or WindowsHandleDiskFull))
            {
                return true;
            }
        }

        return false;
    }

    internal void Write(SafeFileHandle file, ReadOnlySpan<byte> data, long offset, string path)
    {
        try
        {
            WriteCore(file, data, offset, path);
        }
        catch (IOException e) when (IsDiskFull(e))
        {
            throw new DiskFullException(path, e);
        }
    }

    internal void Write(SafeFileHandle file, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, string path)
    {
        try
        {
            WriteCore(file, buffers, offset, path);
        }
        catch (IOException e) when (IsDiskFull(e))
        {
            throw new DiskFullException(path, e);
        }
    }

    internal void DataSync(FileStream file)
    {
        try
        {
            DataSyncCore(file);
        }
        catch (IOException e) when (IsDiskFull(e))
        {
            throw new DiskFullException(file.Name, e);
        }
    }

    internal void SetLength(FileStream file, long length)
    {
        try
        {
            SetLengthCore(file, length);
        }
        catch (IOException e) when (IsDiskFull(e))
        {
            throw new DiskFullException(file.Name, e);
        }
    }

    internal void Preallocate(FileStream file, long length)
    {
        try
        {
            PreallocateCore(file, length);
        }
        catch (IOException e) when (IsDiskFull(e))
        {
            throw new DiskFullException(file.Name, e);
        }
    }

    internal void SyncFolder(string folder) => SyncFolderCore(folder);

    /// <summary>Writes <paramref name="data"/> at <paramref name="offset"/> (pwrite).</summary>
    protected virtual void WriteCore(SafeFileHandle file, ReadOnlySpan<byte> data, long offset, string path) =>
        RandomAccess.Write(file, data, offset);

    /// <summary>Writes the buffers one after another from <paramref name="offset"/> (pwritev).</summary>
    protected virtual void WriteCore(SafeFileHandle file, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, string path) =>
        RandomAccess.Write(file, buffers, offset);

    /// <summary>Makes the file's writes durable (fdatasync).</summary>
    protected virtual void DataSyncCore(FileStream file) => Posix.DataSync(file);

    /// <summary>Changes the file's length (ftruncate); the new part may be sparse.</summary>
    protected virtual void SetLengthCore(FileStream file, long length) => file.SetLength(length);

    /// <summary>Reserves blocks for [0, length) (posix_fallocate), so later writes inside never need space.</summary>
    protected virtual void PreallocateCore(FileStream file, long length) => Posix.Preallocate(file, length);

    /// <summary>Makes the folder's entries durable (fsync of the directory).</summary>
    protected virtual void SyncFolderCore(string folder) => Posix.SyncFolder(folder);
}
