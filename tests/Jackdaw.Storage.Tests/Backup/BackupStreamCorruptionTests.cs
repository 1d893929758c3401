using System.Runtime.InteropServices;
using Jackdaw.Storage.Engine;
using Jackdaw.Storage.Engine.Backup;

namespace Jackdaw.Storage.Tests.Backup;

/// <summary>Every kind of backup stream, damaged in each of its parts, is refused with a message naming the part.</summary>
public sealed class BackupStreamCorruptionTests : BackupTestBase
{
    /// <summary>A full stream with pages and records, an incremental and a minimal one continuing it.</summary>
    private (byte[] Full, byte[] Incremental, byte[] Minimal) Chain()
    {
        // No flush: the full backup's pages are the data file's as created, its records all the rest.
        var env = Open(SourceOptions(flushInterval: TimeSpan.FromHours(1)));
        var random = new Random(31);
        Mutate(env, random, 60);
        var full = Full(env);
        Mutate(env, random, 40);
        var incremental = Incremental(env, full.TransactionId, retain: false);
        var minimal = Incremental(env, full.TransactionId, minimal: true, retain: false);
        Assert.True(full.Progress.Pages > 0 && full.Progress.Records > 0);
        return (full.Stream, incremental.Stream, minimal.Stream);
    }

    /// <summary>The chunks of a stream: (type, where its header starts, where its payload starts, payload length).</summary>
    private static List<(BackupChunkType Type, int Header, int Payload, int Length)> Chunks(byte[] stream)
    {
        var chunks = new List<(BackupChunkType, int, int, int)>();
        var pos = BackupStreamHeader.Size;
        while (pos < stream.Length)
        {
            var h = MemoryMarshal.Read<BackupChunkHeader>(stream.AsSpan(pos));
            chunks.Add((h.Type, pos, pos + BackupChunkHeader.Size, (int)h.PayloadLength));
            pos += BackupChunkHeader.Size + (int)h.PayloadLength + 8;
        }

        return chunks;
    }

    private void RestoreDamaged(string kind, byte[] full, byte[] incremental, byte[] minimal, string expected)
    {
        using var restore = EnvironmentRestore.Create(Path.Combine(Folder, "restored"));
        var e = Assert.Throws<BackupStreamException>(() =>
        {
            restore.ApplyFull(new MemoryStream(full), CancellationToken.None);
            restore.ApplyIncremental(new MemoryStream(kind == "minimal" ? minimal : incremental), CancellationToken.None);
        });
        Assert.Contains(expected, e.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Throws<InvalidOperationException>(restore.Complete);
    }

    [Theory]
    [InlineData("full", "stream header")]
    [InlineData("full", "chunk header")]
    [InlineData("full", "pages chunk")]
    [InlineData("full", "journal record chunk")]
    [InlineData("full", "payload checksum")]
    [InlineData("full", "end chunk")]
    [InlineData("incremental", "stream header")]
    [InlineData("incremental", "chunk header")]
    [InlineData("incremental", "journal record chunk")]
    [InlineData("incremental", "end chunk")]
    [InlineData("minimal", "stream header")]
    [InlineData("minimal", "chunk header")]
    [InlineData("minimal", "merged pages chunk")]
    [InlineData("minimal", "end chunk")]
    public void AFlippedByteIsRefusedNamingThePart(string kind, string part)
    {
        var (full, incremental, minimal) = Chain();
        var stream = kind switch { "full" => full, "incremental" => incremental, _ => minimal };
        var chunks = Chunks(stream);
        var (offset, expected) = part switch
        {
            "stream header" => (30, "stream header is damaged"),
            "chunk header" => (chunks[1].Header + 20, "header of chunk 1"),
            "pages chunk" => Middle(chunks.First(c => c.Type == BackupChunkType.Pages), "pages chunk 0"),
            "journal record chunk" => Middle(chunks.First(c => c.Type == BackupChunkType.JournalRecord), "journal record chunk"),
            "merged pages chunk" => Middle(chunks.First(c => c.Type == BackupChunkType.MergedPages), "merged pages chunk"),
            "payload checksum" => (chunks[0].Payload + chunks[0].Length + 3, "pages chunk 0"),
            _ => Middle(chunks[^1], "end chunk"),
        };

        stream[offset] ^= 0x10;
        RestoreDamaged(kind, full, incremental, minimal, expected);
    }

    private static (int Offset, string Expected) Middle((BackupChunkType Type, int Header, int Payload, int Length) chunk, string expected) =>
        (chunk.Payload + (chunk.Length / 2), expected);

    [Theory]
    [InlineData("full")]
    [InlineData("incremental")]
    [InlineData("minimal")]
    public void ATruncatedStreamIsRefused(string kind)
    {
        var (full, incremental, minimal) = Chain();
        byte[] Cut(byte[] s) => s[..(s.Length - 20)];
        RestoreDamaged(kind, kind == "full" ? Cut(full) : full, Cut(incremental), Cut(minimal), kind == "full" ? "truncated" : "truncated");
    }

    [Fact]
    public void AChunkLeftOutIsRefused()
    {
        var (full, incremental, minimal) = Chain();
        var chunks = Chunks(incremental);
        var second = chunks[1];
        var third = chunks[2];
        var without = incremental[..second.Header].Concat(incremental[third.Header..]).ToArray();
        RestoreDamaged("incremental", full, without, minimal, "chunk 1 is missing");
    }

    [Fact]
    public void AStreamOfANewerFormatIsRefused()
    {
        var (full, _, _) = Chain();
        ref var h = ref MemoryMarshal.AsRef<BackupStreamHeader>(full.AsSpan());
        h.FormatVersion = 2;
        h.HeaderHash = BackupStreamHeader.ComputeHash(full);
        using var restore = EnvironmentRestore.Create(Path.Combine(Folder, "restored"));
        var e = Assert.Throws<BackupStreamException>(() => restore.ApplyFull(new MemoryStream(full), CancellationToken.None));
        Assert.Contains("version 2", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ABrokenChainIsRefusedSayingWhere()
    {
        var env = Open(SourceOptions());
        var random = new Random(32);
        Mutate(env, random, 20);
        var full = Full(env);
        Mutate(env, random, 20);
        var first = Incremental(env, full.TransactionId);
        Mutate(env, random, 20);
        var second = Incremental(env, first.TransactionId, minimal: true);

        using var restore = EnvironmentRestore.Create(Path.Combine(Folder, "restored"));
        Assert.Throws<InvalidOperationException>(() => restore.ApplyIncremental(new MemoryStream(first.Stream), CancellationToken.None));
        var notFull = Assert.Throws<BackupStreamException>(() => restore.ApplyFull(new MemoryStream(first.Stream), CancellationToken.None));
        Assert.Contains("starts with a full", notFull.Message, StringComparison.Ordinal);

        using var again = EnvironmentRestore.Create(Path.Combine(Folder, "again"));
        again.ApplyFull(new MemoryStream(full.Stream), CancellationToken.None);
        var broken = Assert.Throws<BackupStreamException>(() => again.ApplyIncremental(new MemoryStream(second.Stream), CancellationToken.None));
        Assert.Contains("chain is broken", broken.Message, StringComparison.Ordinal);
        Assert.Contains($"after transaction {first.TransactionId}", broken.Message, StringComparison.Ordinal);
        Assert.Contains($"restore is at transaction {full.TransactionId}", broken.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ARestoreIntoAFolderThatIsNotEmptyIsRefused()
    {
        var folder = Path.Combine(Folder, "taken");
        Directory.CreateDirectory(folder);
        File.WriteAllText(Path.Combine(folder, "something"), "x");
        var e = Assert.Throws<StorageException>(() => EnvironmentRestore.Create(folder));
        Assert.Contains(folder, e.Message, StringComparison.Ordinal);
        Assert.Equal(["something"], Directory.EnumerateFileSystemEntries(folder).Select(Path.GetFileName));
    }

    [Fact]
    public void AnAbandonedRestoreLeavesNothingBehind()
    {
        var env = Open(SourceOptions());
        Mutate(env, new Random(33), 20);
        var full = Full(env);
        var folder = Path.Combine(Folder, "abandoned");
        using (var restore = EnvironmentRestore.Create(folder))
        {
            restore.ApplyFull(new MemoryStream(full.Stream), CancellationToken.None);
            Assert.False(File.Exists(Path.Combine(folder, "data.jdb")));
        }

        Assert.False(Directory.Exists(folder));
    }
}
