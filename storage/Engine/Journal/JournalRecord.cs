using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Paging;
using K4os.Compression.LZ4;

namespace Jackdaw.Storage.Engine.Journal;

/// <summary>
/// A committed transaction as it sits in a journal file: this 48-byte header, then the payload.
/// <code>
/// offset size field
///  0      4   Magic             "JRNL"
///  4      4   Flags             1 = payload is LZ4-compressed, 2 = entries in the page-diff layout
///  8      8   TransactionId     strictly consecutive within and across journal files
/// 16      4   PageCount         entries in the payload
/// 20      4   PayloadSize       stored payload bytes (compressed size when Flags has LZ4)
/// 24      8   UncompressedSize
/// 32      8   PayloadHash       XxHash64 of the stored payload
/// 40      8   HeaderHash        XxHash64 of bytes [0, 40)
/// </code>
/// The uncompressed payload is, per page entry (Length is 8 KiB, or a multiple of it for an overflow run):
/// <list type="bullet">
/// <item>with flag 2 (every record this build writes): [long PageNumber][int Length][int Stored][Stored bytes],
/// the whole page when Stored equals Length, otherwise the <see cref="PageDiff"/> runs against the page's
/// previous committed version;</item>
/// <item>without it (records of earlier builds, still replayed): [long PageNumber][int Length][Length bytes].</item>
/// </list>
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = Size)]
internal struct JournalRecordHeader
{
    public const int Size = 48;
    public const uint MagicValue = 0x4C4E524A; // "JRNL"
    public const uint Lz4Flag = 1;
    public const uint DiffFlag = 2;

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
    /// <summary>[long PageNumber][int Length][int Stored] before each entry's bytes (DiffFlag layout).</summary>
    public const int EntryHeader = 16;

    /// <summary>[long PageNumber][int Length] before each page of a record without DiffFlag (earlier builds).</summary>
    public const int WholePageEntryHeader = 12;

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

    /// <summary>
    /// Serializes the pages (as diffs against <paramref name="bases"/>, the committed versions the
    /// transaction copied them from, where that is smaller; whole pages otherwise and for new pages),
    /// compresses (when asked to and that saves at least an eighth) and checksums them.
    /// </summary>
    public static JournalRecord Build(long transactionId, Dictionary<long, byte[]> pages, Dictionary<long, PageHandle> bases, bool tryCompress)
    {
        long bound = 0;
        foreach (var (_, data) in pages)
        {
            bound += EntryHeader + data.Length;
        }

        if (bound > int.MaxValue - JournalRecordHeader.Size - 1024)
        {
            throw new StorageLimitException($"A transaction of {bound} bytes of pages exceeds the journal record limit of 2 GiB; commit in smaller transactions.");
        }

        var payload = ArrayPool<byte>.Shared.Rent((int)bound);
        try
        {
            var raw = 0;
            foreach (var (number, data) in pages)
            {
                var entry = payload.AsSpan(raw);
                BinaryPrimitives.WriteInt64LittleEndian(entry, number);
                BinaryPrimitives.WriteInt32LittleEndian(entry[8..], data.Length);
                var body = entry[EntryHeader..];
                var stored = bases.TryGetValue(number, out var before) && before.Length == data.Length ? PageDiff.Write(before.Span, data, body[..data.Length]) : -1;
                if (stored < 0)
                {
                    data.CopyTo(body);
                    stored = data.Length;
                }

                BinaryPrimitives.WriteInt32LittleEndian(entry[12..], stored);
                raw += EntryHeader + stored;
            }

            var maxCompressed = tryCompress ? LZ4Codec.MaximumOutputSize(raw) : 0;
            var buffer = ArrayPool<byte>.Shared.Rent(JournalRecordHeader.Size + Math.Max(maxCompressed, raw));
            var size = tryCompress ? LZ4Codec.Encode(payload.AsSpan(0, raw), buffer.AsSpan(JournalRecordHeader.Size), LZ4Level.L00_FAST) : -1;
            var flags = JournalRecordHeader.DiffFlag | JournalRecordHeader.Lz4Flag;
            if (size <= 0 || size > raw - (raw / 8))
            {
                payload.AsSpan(0, raw).CopyTo(buffer.AsSpan(JournalRecordHeader.Size));
                size = raw;
                flags = JournalRecordHeader.DiffFlag;
            }

            ref var h = ref MemoryMarshal.AsRef<JournalRecordHeader>(buffer.AsSpan());
            h.Magic = JournalRecordHeader.MagicValue;
            h.Flags = flags;
            h.TransactionId = transactionId;
            h.PageCount = pages.Count;
            h.PayloadSize = size;
            h.UncompressedSize = raw;
            h.PayloadHash = XxHash64.HashToUInt64(buffer.AsSpan(JournalRecordHeader.Size, size));
            h.HeaderHash = JournalRecordHeader.ComputeHeaderHash(buffer);
            return new JournalRecord(transactionId, buffer, JournalRecordHeader.Size + size, (flags & JournalRecordHeader.Lz4Flag) != 0);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(payload);
        }
    }
}
