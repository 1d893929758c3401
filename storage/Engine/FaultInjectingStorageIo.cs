using Microsoft.Win32.SafeHandles;

namespace Jackdaw.Storage.Engine;

/// <summary>What the engine asked of its files when a fault was injected.</summary>
public enum StorageIoOperation
{
    Write,
    DataSync,
    SetLength,
    Preallocate,
}

/// <summary>
/// The real files, with failures on demand: while <see cref="DiskFull"/> is set, every operation
/// that needs new space (writes, preallocation, growing a file) fails as the operating system
/// reports a full disk (an <see cref="IOException"/> with ENOSPC), optionally only for the files
/// <see cref="Affects"/> selects. Syncs and shrinking still work, as on a real full disk. For
/// tests and for trying out recovery by hand.
/// </summary>
public sealed class FaultInjectingStorageIo : StorageIo
{
    private const int ENOSPC = 28;
    private int _diskFull;
    private int _injected;

    /// <summary>Whether operations that need space fail.</summary>
    public bool DiskFull
    {
        get => Volatile.Read(ref _diskFull) != 0;
        set => Volatile.Write(ref _diskFull, value ? 1 : 0);
    }

    /// <summary>Which files are full (by path); all when null.</summary>
    public Func<string, bool>? Affects { get; set; }

    /// <summary>How many failures were injected so far.</summary>
    public int Injected => Volatile.Read(ref _injected);

    protected override void WriteCore(SafeFileHandle file, ReadOnlySpan<byte> data, long offset, string path)
    {
        Fail(StorageIoOperation.Write, path);
        base.WriteCore(file, data, offset, path);
    }

    protected override void WriteCore(SafeFileHandle file, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, string path)
    {
        Fail(StorageIoOperation.Write, path);
        base.WriteCore(file, buffers, offset, path);
    }

    protected override void SetLengthCore(FileStream file, long length)
    {
        if (length > file.Length)
        {
            Fail(StorageIoOperation.SetLength, file.Name);
        }

        base.SetLengthCore(file, length);
    }

    protected override void PreallocateCore(FileStream file, long length)
    {
        Fail(StorageIoOperation.Preallocate, file.Name);
        base.PreallocateCore(file, length);
    }

    private void Fail(StorageIoOperation operation, string path)
    {
        if (!DiskFull || (Affects is { } affects && !affects(path)))
        {
            return;
        }

        Interlocked.Increment(ref _injected);
        throw new IOException($"No space left on device (injected at {operation} of '{path}').", ENOSPC);
    }
}
