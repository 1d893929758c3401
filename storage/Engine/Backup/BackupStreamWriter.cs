using System.Buffers.Binary;
using System.IO.Hashing;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Paging;

namespace Jackdaw.Storage.Engine.Backup;

/// <summary>
/// Writes a backup stream: the <see cref="BackupStreamHeader"/>, then chunks, each a
/// <see cref="BackupChunkHeader"/>, its payload and the payload's XxHash64. Errors of the destination
/// (a full disk) leave here unchanged; cancellation is checked before each chunk.
/// </summary>
internal sealed class BackupStreamWriter(Stream destination, BackupProgress progress, CancellationToken cancel)
{
    private readonly byte[] _header = new byte[Math.Max(BackupStreamHeader.Size, BackupChunkHeader.Size)];
    private readonly byte[] _entryHeader = new byte[12];
    private readonly XxHash64 _mergedHash = new();
    private long _ordinal;
    private long _mergedLeft;
    private long _mergedEntriesLeft;

    public void WriteHeader(BackupKind kind, long after, long last)
    {
        var span = _header.AsSpan(0, BackupStreamHeader.Size);
        span.Clear();
        ref var h = ref MemoryMarshal.AsRef<BackupStreamHeader>(span);
        h.Magic = BackupStreamHeader.MagicValue;
        h.FormatVersion = BackupStreamHeader.CurrentFormatVersion;
        h.Kind = kind;
        h.PageSize = Constants.PageSize;
        h.AfterTransactionId = after;
        h.LastTransactionId = last;
        h.HeaderHash = BackupStreamHeader.ComputeHash(span);
        Write(span);
    }

    /// <summary>A run of consecutive data-file pages starting at <paramref name="firstPage"/>.</summary>
    public void WritePages(long firstPage, ReadOnlySpan<byte> pages)
    {
        WriteChunk(BackupChunkType.Pages, firstPage, pages);
        progress.AddPages(pages.Length / Constants.PageSize);
    }

    /// <summary>A journal record as stored (header and payload).</summary>
    public void WriteRecord(long transactionId, ReadOnlySpan<byte> record)
    {
        WriteChunk(BackupChunkType.JournalRecord, transactionId, record);
        progress.AddRecords(1);
    }

    /// <summary>Starts a merged-pages chunk of <paramref name="entries"/> entries and <paramref name="payloadLength"/> bytes, streamed by <see cref="WriteMergedEntry"/>.</summary>
    public void BeginMerged(long entries, long payloadLength)
    {
        cancel.ThrowIfCancellationRequested();
        WriteChunkHeader(BackupChunkType.MergedPages, entries, payloadLength);
        _mergedHash.Reset();
        _mergedLeft = payloadLength;
        _mergedEntriesLeft = entries;
    }

    public void WriteMergedEntry(long page, ReadOnlySpan<byte> bytes)
    {
        if (_mergedEntriesLeft <= 0 || _mergedLeft < _entryHeader.Length + bytes.Length)
        {
            throw new InvalidOperationException("A merged chunk received more than it was planned for.");
        }

        BinaryPrimitives.WriteInt64LittleEndian(_entryHeader, page);
        BinaryPrimitives.WriteInt32LittleEndian(_entryHeader.AsSpan(8), bytes.Length);
        _mergedHash.Append(_entryHeader);
        _mergedHash.Append(bytes);
        Write(_entryHeader);
        Write(bytes);
        _mergedLeft -= _entryHeader.Length + bytes.Length;
        _mergedEntriesLeft--;
        progress.AddPages(bytes.Length / Constants.PageSize);
    }

    public void EndMerged()
    {
        if (_mergedLeft != 0 || _mergedEntriesLeft != 0)
        {
            throw new InvalidOperationException("A merged chunk received less than it was planned for.");
        }

        Span<byte> hash = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(hash, _mergedHash.GetCurrentHashAsUInt64());
        Write(hash);
        progress.AddRecords(1);
    }

    public void WriteEnd(long lastTransactionId, long pages, long records)
    {
        Span<byte> payload = stackalloc byte[24];
        BinaryPrimitives.WriteInt64LittleEndian(payload, lastTransactionId);
        BinaryPrimitives.WriteInt64LittleEndian(payload[8..], pages);
        BinaryPrimitives.WriteInt64LittleEndian(payload[16..], records);
        WriteChunk(BackupChunkType.End, 0, payload);
        destination.Flush();
    }

    private void WriteChunk(BackupChunkType type, long number, ReadOnlySpan<byte> payload)
    {
        cancel.ThrowIfCancellationRequested();
        WriteChunkHeader(type, number, payload.Length);
        Write(payload);
        Span<byte> hash = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(hash, XxHash64.HashToUInt64(payload));
        Write(hash);
    }

    private void WriteChunkHeader(BackupChunkType type, long number, long payloadLength)
    {
        var span = _header.AsSpan(0, BackupChunkHeader.Size);
        span.Clear();
        ref var h = ref MemoryMarshal.AsRef<BackupChunkHeader>(span);
        h.Magic = BackupChunkHeader.MagicValue;
        h.Type = type;
        h.Ordinal = _ordinal++;
        h.Number = number;
        h.PayloadLength = payloadLength;
        h.HeaderHash = BackupChunkHeader.ComputeHash(span);
        Write(span);
    }

    private void Write(ReadOnlySpan<byte> bytes)
    {
        destination.Write(bytes);
        progress.AddBytes(bytes.Length);
    }
}
