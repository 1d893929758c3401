using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine.Journal;
using K4os.Compression.LZ4;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>Reads and rewrites journal records in a journal file's bytes, for tests that inspect or tamper with them.</summary>
internal static class JournalFileReader
{
    /// <summary>The records of a journal file, in order, up to the first header without the magic.</summary>
    public static List<(JournalRecordHeader Header, int Offset)> Records(byte[] file)
    {
        var records = new List<(JournalRecordHeader, int)>();
        var pos = 0;
        while (pos + JournalRecordHeader.Size <= file.Length)
        {
            var h = MemoryMarshal.Read<JournalRecordHeader>(file.AsSpan(pos));
            if (h.Magic != JournalRecordHeader.MagicValue)
            {
                break;
            }

            records.Add((h, pos));
            pos += JournalRecordHeader.Size + h.PayloadSize;
        }

        return records;
    }

    /// <summary>A record's payload, decompressed when it is LZ4.</summary>
    public static byte[] Payload(byte[] file, int offset, JournalRecordHeader h)
    {
        var stored = file.AsSpan(offset + JournalRecordHeader.Size, h.PayloadSize);
        if ((h.Flags & JournalRecordHeader.Lz4Flag) == 0)
        {
            return stored.ToArray();
        }

        var payload = new byte[h.UncompressedSize];
        Assert.Equal(payload.Length, LZ4Codec.Decode(stored, payload));
        return payload;
    }

    /// <summary>
    /// Writes the file back with the record at <paramref name="offset"/> holding <paramref name="payload"/>
    /// uncompressed (its other flags as in <paramref name="h"/>) and checksummed again; what followed it is dropped.
    /// </summary>
    public static void Rewrite(string path, byte[] file, int offset, JournalRecordHeader h, byte[] payload)
    {
        h.Flags &= ~JournalRecordHeader.Lz4Flag;
        h.PayloadSize = payload.Length;
        h.UncompressedSize = payload.Length;
        h.PayloadHash = System.IO.Hashing.XxHash64.HashToUInt64(payload);
        var copy = new byte[Math.Max(file.Length, offset + JournalRecordHeader.Size + payload.Length)];
        file.AsSpan(0, offset).CopyTo(copy);
        MemoryMarshal.Write(copy.AsSpan(offset), in h);
        payload.CopyTo(copy, offset + JournalRecordHeader.Size);
        h.HeaderHash = JournalRecordHeader.ComputeHeaderHash(copy.AsSpan(offset));
        MemoryMarshal.Write(copy.AsSpan(offset), in h);
        File.WriteAllBytes(path, copy);
    }
}
