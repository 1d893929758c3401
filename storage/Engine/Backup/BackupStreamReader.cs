using System.Buffers.Binary;
using System.IO.Hashing;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine.Backup;

/// <summary>
/// Reads a backup stream written by <see cref="BackupStreamWriter"/>, checking everything: the header's
/// magic, hash, version and page size, each chunk's header hash and ordinal, each payload's hash. What
/// fails is a <see cref="BackupStreamException"/> naming the part (the stream header, a chunk's header,
/// the pages, journal record, merged pages or end chunk) and the chunk's number.
/// </summary>
internal sealed class BackupStreamReader(Stream source)
{
    private readonly byte[] _header = new byte[Math.Max(BackupStreamHeader.Size, BackupChunkHeader.Size)];
    private readonly byte[] _entryHeader = new byte[12];
    private readonly XxHash64 _mergedHash = new();
    private long _ordinal;
    private long _position;
    private long _mergedLeft;
    private long _mergedEntriesLeft;
    private string _mergedPart = string.Empty;

    public string Name { get; } = source is FileStream file ? file.Name : "backup stream";

    public BackupStreamException Damaged(string message) => new(Name, message);

    public BackupStreamHeader ReadHeader()
    {
        var span = _header.AsSpan(0, BackupStreamHeader.Size);
        Read(span, "the stream header");
        var h = MemoryMarshal.Read<BackupStreamHeader>(span);
        if (h.Magic != BackupStreamHeader.MagicValue)
        {
            throw Damaged("This is not a Jackdaw backup stream: the stream header has no JDBACKUP magic.");
        }

        if (h.HeaderHash != BackupStreamHeader.ComputeHash(span))
        {
            throw Damaged("The stream header is damaged: its checksum does not match.");
        }

        if (h.FormatVersion > BackupStreamHeader.CurrentFormatVersion)
        {
            throw Damaged($"The stream header says backup format version {h.FormatVersion}; this build reads versions up to {BackupStreamHeader.CurrentFormatVersion}. Restore it with the newer build that wrote it.");
        }

        if (h.FormatVersion < 1 || h.Kind is < BackupKind.Full or > BackupKind.MinimalIncremental || h.PageSize != Constants.PageSize)
        {
            throw Damaged($"The stream header is damaged: format version {h.FormatVersion}, kind {(int)h.Kind}, page size {h.PageSize} (this build writes version 1, kinds 1 to 3, {Constants.PageSize}-byte pages).");
        }

        return h;
    }

    /// <summary>The next chunk's header, checked; its payload is to be read next.</summary>
    public BackupChunkHeader NextChunk()
    {
        var span = _header.AsSpan(0, BackupChunkHeader.Size);
        Read(span, $"the header of chunk {_ordinal}");
        var h = MemoryMarshal.Read<BackupChunkHeader>(span);
        if (h.Magic != BackupChunkHeader.MagicValue || h.HeaderHash != BackupChunkHeader.ComputeHash(span))
        {
            throw Damaged($"The header of chunk {_ordinal} (at byte {_position - BackupChunkHeader.Size}) is damaged: its magic or checksum does not match.");
        }

        if (h.Ordinal != _ordinal)
        {
            throw Damaged($"Chunk {_ordinal} is missing or out of place: chunk {h.Ordinal} follows chunk {_ordinal - 1}.");
        }

        if (h.Type is < BackupChunkType.Pages or > BackupChunkType.End || h.PayloadLength < 0 || h.PayloadLength > int.MaxValue - 64)
        {
            throw Damaged($"The header of chunk {_ordinal} says type {(int)h.Type} and {h.PayloadLength} bytes, which this build does not write.");
        }

        _ordinal++;
        return h;
    }

    /// <summary>What a chunk is, for messages.</summary>
    public static string Describe(in BackupChunkHeader h) => h.Type switch
    {
        BackupChunkType.Pages => $"the pages chunk {h.Ordinal} (pages {h.Number} to {h.Number + (h.PayloadLength / Constants.PageSize) - 1})",
        BackupChunkType.JournalRecord => $"the journal record chunk {h.Ordinal} (transaction {h.Number})",
        BackupChunkType.MergedPages => $"the merged pages chunk {h.Ordinal}",
        _ => $"the end chunk {h.Ordinal}",
    };

    /// <summary>Reads the chunk's whole payload into <paramref name="buffer"/> (grown as needed) and checks its hash.</summary>
    public ReadOnlySpan<byte> ReadPayload(in BackupChunkHeader h, ref byte[] buffer)
    {
        var part = Describe(h);
        var length = (int)h.PayloadLength;
        if (buffer.Length < length)
        {
            buffer = new byte[length];
        }

        var payload = buffer.AsSpan(0, length);
        Read(payload, part);
        CheckHash(XxHash64.HashToUInt64(payload), part);
        return payload;
    }

    /// <summary>Starts streaming a merged-pages chunk's entries (<see cref="NextMergedEntry"/>, then <see cref="EndMerged"/>).</summary>
    public void BeginMerged(in BackupChunkHeader h)
    {
        _mergedPart = Describe(h);
        _mergedLeft = h.PayloadLength;
        _mergedEntriesLeft = h.Number;
        _mergedHash.Reset();
    }

    /// <summary>
    /// The next entry of the merged chunk (its bytes in <paramref name="buffer"/>), or false after the
    /// last one. Entries are applied before the chunk's hash is checked at its end: a restore that then
    /// fails is abandoned whole, so what it wrote is never used.
    /// </summary>
    public bool NextMergedEntry(ref byte[] buffer, out long page, out ReadOnlySpan<byte> bytes)
    {
        if (_mergedEntriesLeft == 0)
        {
            page = 0;
            bytes = default;
            return false;
        }

        Read(_entryHeader, _mergedPart);
        page = BinaryPrimitives.ReadInt64LittleEndian(_entryHeader);
        var length = BinaryPrimitives.ReadInt32LittleEndian(_entryHeader.AsSpan(8));
        _mergedLeft -= _entryHeader.Length;
        if (page < Constants.StatePage || length <= 0 || length % Constants.PageSize != 0 || length > BackupChunkHeader.MaxRunBytes || length > _mergedLeft)
        {
            throw Damaged($"{Capital(_mergedPart)} is damaged: an entry says page {page} and {length} bytes.");
        }

        if (buffer.Length < length)
        {
            buffer = new byte[length];
        }

        bytes = buffer.AsSpan(0, length);
        Read(buffer.AsSpan(0, length), _mergedPart);
        _mergedHash.Append(_entryHeader);
        _mergedHash.Append(bytes);
        _mergedLeft -= length;
        _mergedEntriesLeft--;
        return true;
    }

    public void EndMerged()
    {
        if (_mergedLeft != 0)
        {
            throw Damaged($"{Capital(_mergedPart)} is damaged: its entries do not fill its length.");
        }

        CheckHash(_mergedHash.GetCurrentHashAsUInt64(), _mergedPart);
    }

    private void CheckHash(ulong actual, string part)
    {
        Span<byte> stored = stackalloc byte[8];
        Read(stored, part);
        if (BinaryPrimitives.ReadUInt64LittleEndian(stored) != actual)
        {
            throw Damaged($"{Capital(part)} is damaged: its checksum does not match.");
        }
    }

    private void Read(Span<byte> target, string part)
    {
        var read = source.ReadAtLeast(target, target.Length, throwOnEndOfStream: false);
        _position += read;
        if (read < target.Length)
        {
            throw Damaged($"The stream ends inside {part} (after {_position} bytes): it is truncated.");
        }
    }

    /// <summary>A part's description at the start of a sentence.</summary>
    public static string Capital(string part) => char.ToUpperInvariant(part[0]) + part[1..];
}
