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
/// The real files, with failures on demand, optionally only for the files <see cref="Affects"/>
/// selects: while <see cref="DiskFull"/> is set, writes, preallocation and growing a file fail as
/// the operating system reports a full disk (an <see cref="IOException"/> with ENOSPC), before
/// anything is written; syncs can fail with EIO (<see cref="FailNextSync"/>, <see cref="FailSyncs"/>)
/// after the data was written; and a write can stop part-way (<see cref="ShortenNextWriteTo"/>).
/// For tests and for trying out recovery by hand.
/// </summary>
public sealed class FaultInjectingStorageIo : StorageIo
{
    private const int ENOSPC = 28;
    private const int EIO = 5;
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

    /// <summary>The next sync of an affected file fails with EIO (once); the data written stays written.</summary>
    public bool FailNextSync { get; set; }

    /// <summary>Every sync of an affected file fails with EIO while set.</summary>
    public bool FailSyncs { get; set; }

    /// <summary>
    /// When set, the next write of an affected file stops after this many bytes, as a short write
    /// cut by an I/O error (EIO) would: the bytes before the cut are in the file.
    /// </summary>
    public int? ShortenNextWriteTo { get; set; }

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
        if (ShortenNextWriteTo is { } cut && IsAffected(path))
        {
            ShortenNextWriteTo = null;
            var written = 0;
            foreach (var buffer in buffers)
            {
                var part = buffer[..Math.Min(buffer.Length, cut - written)];
                base.WriteCore(file, part.Span, offset + written, path);
                written += part.Length;
                if (written >= cut)
                {
                    break;
                }
            }

            Interlocked.Increment(ref _injected);
            throw new IOException($"Input/output error (injected after {written} bytes of a write to '{path}').", EIO);
        }

        base.WriteCore(file, buffers, offset, path);
    }

    protected override void DataSyncCore(FileStream file)
    {
        if ((FailSyncs || FailNextSync) && IsAffected(file.Name))
        {
            FailNextSync = false;
            Interlocked.Increment(ref _injected);
            throw new IOException($"Input/output error (injected at the sync of '{file.Name}').", EIO);
        }

        base.DataSyncCore(file);
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

    private bool IsAffected(string path) => Affects is not { } affects || affects(path);

    private void Fail(StorageIoOperation operation, string path)
    {
        if (!DiskFull || !IsAffected(path))
        {
            return;
        }

        Interlocked.Increment(ref _injected);
        throw new IOException($"No space left on device (injected at {operation} of '{path}').", ENOSPC);
    }
}
