using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Runtime.InteropServices;
using K4os.Compression.LZ4;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>
/// A committed transaction as it sits in a journal file: this 48-byte header, then the payload.
/// <code>
/// offset size field
///  0      4   Magic             "JRNL"
///  4      4   Flags             1 = payload is LZ4-compressed
///  8      8   TransactionId     strictly consecutive within and across journal files
/// 16      4   PageCount         entries in the payload
/// 20      4   PayloadSize       stored payload bytes (compressed size when Flags has LZ4)
/// 24      8   UncompressedSize
/// 32      8   PayloadHash       XxHash64 of the stored payload
/// 40      8   HeaderHash        XxHash64 of bytes [0, 40)
/// </code>
/// The uncompressed payload is, per page entry: [long PageNumber][int Length][Length bytes]
/// (Length is 8 KiB, or a multiple of it for an overflow run).
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct JournalRecordHeader
{
    public const int Size = 48;
    public const uint MagicValue = 0x4C4E524A; // "JRNL"
    public const uint Lz4Flag = 1;

    [FieldOffset(0)] public uint Magic;
    [FieldOffset(4)] public uint Flags;
    [FieldOffset(8)] public long TransactionId;
    [FieldOffset(16)] public int PageCount;
    [FieldOffset(20)] public int PayloadSize;
    [FieldOffset(24)] public long UncompressedSize;
    [FieldOffset(32)] public ulong PayloadHash;
    [FieldOffset(40)] public ulong HeaderHash;

    public static ulong ComputeHeaderHash(ReadOnlySpan<byte> header) => XxHash64.HashToUInt64(header[..40]);
}

/// <summary>A transaction's journal record, built by the committing thread and written by the journal writer.</summary>
internal sealed class JournalRecord
{
    private const int EntryHeader = 12;

    private JournalRecord(long transactionId, byte[] buffer, int length, bool compressed)
    {
        TransactionId = transactionId;
        Buffer = buffer;
        Length = length;
        Compressed = compressed;
    }

    public bool Compressed { get; }

    public long TransactionId { get; }

    /// <summary>Rented from <see cref="ArrayPool{T}.Shared"/>; returned by <see cref="Release"/>.</summary>
    public byte[] Buffer { get; private set; }

    public int Length { get; }

    public void Release()
    {
        var b = Buffer;
        Buffer = [];
        if (b.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(b);
        }
    }

    /// <summary>Serializes, compresses (when asked to and that saves at least an eighth) and checksums the pages.</summary>
    public static JournalRecord Build(long transactionId, Dictionary<long, byte[]> pages, bool tryCompress)
    {
        long raw = 0;
        foreach (var (_, data) in pages)
        {
            raw += EntryHeader + data.Length;
        }

        if (raw > int.MaxValue - JournalRecordHeader.Size - 1024)
        {
            throw new StorageLimitException($"A transaction of {raw} bytes of pages exceeds the journal record limit of 2 GiB; commit in smaller transactions.");
        }

        var payload = ArrayPool<byte>.Shared.Rent((int)raw);
        try
        {
            var pos = 0;
            foreach (var (number, data) in pages)
            {
                BinaryPrimitives.WriteInt64LittleEndian(payload.AsSpan(pos), number);
                BinaryPrimitives.WriteInt32LittleEndian(payload.AsSpan(pos + 8), data.Length);
                data.CopyTo(payload.AsSpan(pos + EntryHeader));
                pos += EntryHeader + data.Length;
            }

            var maxCompressed = tryCompress ? LZ4Codec.MaximumOutputSize((int)raw) : 0;
            var buffer = ArrayPool<byte>.Shared.Rent(JournalRecordHeader.Size + Math.Max(maxCompressed, (int)raw));
            var stored = tryCompress ? LZ4Codec.Encode(payload.AsSpan(0, (int)raw), buffer.AsSpan(JournalRecordHeader.Size), LZ4Level.L00_FAST) : -1;
            uint flags = JournalRecordHeader.Lz4Flag;
            if (stored <= 0 || stored > raw - (raw / 8))
            {
                payload.AsSpan(0, (int)raw).CopyTo(buffer.AsSpan(JournalRecordHeader.Size));
                stored = (int)raw;
                flags = 0;
            }

            ref var h = ref MemoryMarshal.AsRef<JournalRecordHeader>(buffer.AsSpan());
            h.Magic = JournalRecordHeader.MagicValue;
            h.Flags = flags;
            h.TransactionId = transactionId;
            h.PageCount = pages.Count;
            h.PayloadSize = stored;
            h.UncompressedSize = raw;
            h.PayloadHash = XxHash64.HashToUInt64(buffer.AsSpan(JournalRecordHeader.Size, stored));
            h.HeaderHash = JournalRecordHeader.ComputeHeaderHash(buffer);
            return new JournalRecord(transactionId, buffer, JournalRecordHeader.Size + stored, flags != 0);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(payload);
        }
    }

    /// <summary>Calls <paramref name="apply"/> for each page of a verified, decompressed payload.</summary>
    public static void ForEachPage(ReadOnlySpan<byte> payload, Action<long, ReadOnlyMemory<byte>> apply, byte[] owner, int start)
    {
        var pos = 0;
        while (pos < payload.Length)
        {
            var number = BinaryPrimitives.ReadInt64LittleEndian(payload.Slice(pos));
            var length = BinaryPrimitives.ReadInt32LittleEndian(payload.Slice(pos + 8));
            apply(number, owner.AsMemory(start + pos + EntryHeader, length));
            pos += EntryHeader + length;
        }
    }
}
