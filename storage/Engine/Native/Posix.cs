using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Jackdaw.Storage.Engine.Native;

/// <summary>
/// Durability primitives. .NET offers only <c>FileStream.Flush(true)</c> (fsync, which also writes
/// inode metadata such as mtime); on Linux <c>fdatasync</c> skips that metadata and is what a
/// journal on a preallocated file needs.
/// </summary>
internal static partial class Posix
{
    private static readonly bool IsLinux = OperatingSystem.IsLinux();

    [LibraryImport("libc", SetLastError = true, EntryPoint = "fdatasync")]
    private static partial int FDataSync(SafeFileHandle fd);

    [LibraryImport("libc", SetLastError = true, EntryPoint = "posix_fallocate")]
    private static partial int PosixFAllocate(SafeFileHandle fd, long offset, long length);

    /// <summary>Makes every write to the file so far durable.</summary>
    public static void DataSync(FileStream file)
    {
        if (IsLinux)
        {
            if (FDataSync(file.SafeFileHandle) == 0)
            {
                return;
            }

            throw new IOException($"fdatasync failed on '{file.Name}' (errno {Marshal.GetLastPInvokeError()}).");
        }

        file.Flush(flushToDisk: true);
    }

    /// <summary>Makes a folder's entries (a created, renamed or deleted file) durable. No-op where a folder cannot be opened (Windows).</summary>
    public static void SyncFolder(string folder)
    {
        if (!IsLinux)
        {
            return;
        }

        // .NET will not open a directory as a FileStream: open(2) it read-only and fsync(2) it.
        var fd = Open(folder, ORdOnly);
        if (fd < 0)
        {
            throw new IOException($"Could not open the folder '{folder}' to sync it (errno {Marshal.GetLastPInvokeError()}).");
        }

        try
        {
            if (FSync(fd) != 0)
            {
                throw new IOException($"fsync failed on the folder '{folder}' (errno {Marshal.GetLastPInvokeError()}).");
            }
        }
        finally
        {
            Close(fd);
        }
    }

    private const int ORdOnly = 0;

    [LibraryImport("libc", SetLastError = true, EntryPoint = "open", StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", SetLastError = true, EntryPoint = "fsync")]
    private static partial int FSync(int fd);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int Close(int fd);

    private const int ENOSPC = 28;
    private const int EINTR = 4;
    private const int EINVAL = 22;
    private const int ENOSYS = 38;
    private const int EOPNOTSUPP = 95;

    /// <summary>
    /// Reserves disk blocks for [0, length) so later writes never change the file size. A full
    /// file system is an <see cref="IOException"/> with <c>HResult</c> ENOSPC; a file system that
    /// cannot preallocate gets a plain (possibly sparse) length instead.
    /// </summary>
    public static void Preallocate(FileStream file, long length)
    {
        if (IsLinux)
        {
            // posix_fallocate returns the error number instead of setting errno.
            int error;
            do
            {
                error = PosixFAllocate(file.SafeFileHandle, 0, length);
            }
            while (error == EINTR);

            if (error == 0)
            {
                return;
            }

            if (error == ENOSPC)
            {
                throw new IOException($"No space left to preallocate {length} bytes for '{file.Name}'.", ENOSPC);
            }

            // Only a file system that cannot preallocate falls back to a plain length; any other
            // error would leave a sparse journal whose later writes can run out of space.
            if (error is not (EOPNOTSUPP or ENOSYS or EINVAL))
            {
                throw new IOException($"posix_fallocate of {length} bytes for '{file.Name}' failed (errno {error}).", error);
            }
        }

        if (file.Length < length)
        {
            file.SetLength(length);
        }
    }
}
