using System.IO.Hashing;
using System.Runtime.InteropServices;
using K4os.Compression.LZ4;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>
/// Walks the records of one journal file in order, checking each as recovery does: it stops at the
/// first header whose magic, header hash or size does not hold (<see cref="Torn"/> unless the header
/// is all zeros, the normal end of a preallocated file), and <see cref="ReadPayload"/> reports a
/// payload whose hash fails. Recovery and backups both read journals through it, so a record one of
/// them accepts the other accepts too. Opened with every sharing mode: the journal writer may be
/// appending to the file, and the flusher may rename or delete it (an open handle keeps reading).
/// </summary>
internal sealed class JournalScanner : IDisposable
{
    private readonly FileStream _stream;
    private readonly long _length;
    private readonly byte[] _headerBytes = new byte[JournalRecordHeader.Size];
    private long _next;

    public JournalScanner(string path)
        : this(path, new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 1, FileOptions.None))
    {
    }

    private JournalScanner(string path, FileStream stream)
    {
        Path = path;
        _stream = stream;
        _length = stream.Length;
    }

    /// <summary>Opens the first of <paramref name="paths"/> that exists (the flusher may have renamed a file meanwhile); null when none does.</summary>
    public static JournalScanner? OpenFirstExisting(params string[] paths)
    {
        foreach (var path in paths)
        {
            try
            {
                return new JournalScanner(path);
            }
            catch (FileNotFoundException)
            {
            }
        }

        return null;
    }

    public string Path { get; }

    /// <summary>The current record's header (after <see cref="Next"/> returned true).</summary>
    public JournalRecordHeader Header { get; private set; }

    /// <summary>Where the current record starts.</summary>
    public long Position { get; private set; }

    /// <summary>Where the current record ends (the next one starts).</summary>
    public long End => Position + JournalRecordHeader.Size + Header.PayloadSize;

    /// <summary>The walk stopped at bytes that are neither a valid record nor the zeroed end of the file.</summary>
    public bool Torn { get; private set; }

    /// <summary>
    /// Moves to the next record; false at the end of the records (the end of the file, zeros, or an
    /// invalid header: then <see cref="Torn"/>). A valid header with flags this build does not know
    /// is a <see cref="StorageCorruptedException"/>: replaying it or calling it a torn tail would both
    /// lose acknowledged transactions.
    /// </summary>
    public bool Next()
    {
        Position = _next;
        if (Torn || Position + JournalRecordHeader.Size > _length)
        {
            return false;
        }

        if (RandomAccess.Read(_stream.SafeFileHandle, _headerBytes, Position) < _headerBytes.Length)
        {
            // The file is shorter than when the walk began (the flusher cut a kept file down to its records).
            return false;
        }

        var h = MemoryMarshal.Read<JournalRecordHeader>(_headerBytes);
        if (h.Magic != JournalRecordHeader.MagicValue)
        {
            Torn = _headerBytes.AsSpan().ContainsAnyExcept((byte)0);
            return false;
        }

        if (h.HeaderHash != JournalRecordHeader.ComputeHeaderHash(_headerBytes) || h.PayloadSize < 0 ||
            Position + JournalRecordHeader.Size + h.PayloadSize > _length || h.UncompressedSize < 0 || h.UncompressedSize > int.MaxValue)
        {
            Torn = true;
            return false;
        }

        if ((h.Flags & ~(JournalRecordHeader.Lz4Flag | JournalRecordHeader.DiffFlag)) != 0)
        {
            throw new StorageCorruptedException(Path, $"The journal record of transaction {h.TransactionId} has flags {h.Flags:X}, which this build does not know: a newer build wrote it. Open the folder with that build.");
        }

        Header = h;
        _next = Position + JournalRecordHeader.Size + h.PayloadSize;
        return true;
    }

    /// <summary>Ends the walk at the current record (a torn record found by its payload or its transaction id).</summary>
    public void StopHere()
    {
        Torn = true;
        _next = Position;
    }

    /// <summary>
    /// Reads the current record's stored payload into <paramref name="buffer"/> (grown as needed) and
    /// checks its hash; false (and the walk ends there, <see cref="Torn"/>) when it fails.
    /// </summary>
    public bool ReadPayload(ref byte[] buffer)
    {
        var size = Header.PayloadSize;
        if (buffer.Length < size)
        {
            buffer = new byte[size];
        }

        if (RandomAccess.Read(_stream.SafeFileHandle, buffer.AsSpan(0, size), Position + JournalRecordHeader.Size) < size)
        {
            StopHere();
            return false;
        }

        if (XxHash64.HashToUInt64(buffer.AsSpan(0, size)) != Header.PayloadHash)
        {
            StopHere();
            return false;
        }

        return true;
    }

    /// <summary>
    /// Reads the whole current record as stored (header, then payload) into <paramref name="buffer"/>;
    /// its length, or -1 (the walk ends there) when the payload hash fails.
    /// </summary>
    public int ReadRecord(ref byte[] buffer)
    {
        var length = JournalRecordHeader.Size + Header.PayloadSize;
        if (buffer.Length < length)
        {
            buffer = new byte[length];
        }

        if (RandomAccess.Read(_stream.SafeFileHandle, buffer.AsSpan(0, length), Position) < length)
        {
            StopHere();
            return -1;
        }

        if (XxHash64.HashToUInt64(buffer.AsSpan(JournalRecordHeader.Size, Header.PayloadSize)) != Header.PayloadHash)
        {
            StopHere();
            return -1;
        }

        return length;
    }

    /// <summary>
    /// The uncompressed payload of a record whose stored payload passed its hash: <paramref name="stored"/>
    /// itself, or decoded into <paramref name="raw"/>; false when LZ4 decodes to the wrong size.
    /// </summary>
    public static bool TryDecode(in JournalRecordHeader h, ReadOnlySpan<byte> stored, ref byte[] raw, out ReadOnlySpan<byte> payload)
    {
        if ((h.Flags & JournalRecordHeader.Lz4Flag) == 0)
        {
            payload = stored;
            return true;
        }

        if (raw.Length < h.UncompressedSize)
        {
            raw = new byte[h.UncompressedSize];
        }

        var decoded = LZ4Codec.Decode(stored, raw.AsSpan(0, (int)h.UncompressedSize));
        payload = raw.AsSpan(0, Math.Max(decoded, 0));
        return decoded == h.UncompressedSize;
    }

    public void Dispose() => _stream.Dispose();
}
