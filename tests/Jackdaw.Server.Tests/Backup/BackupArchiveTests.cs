using Jackdaw.Server.Backup;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>The backup file's container: entries come back as written, and a flipped byte anywhere is named.</summary>
public sealed class BackupArchiveTests
{
    private static byte[] Content(int length, int seed, bool compressible)
    {
        var bytes = new byte[length];
        if (compressible)
        {
            for (var i = 0; i < length; i++)
            {
                bytes[i] = (byte)("jackdaw backup "[i % 15] + (i / 4096 % 3));
            }
        }
        else
        {
            new Random(seed).NextBytes(bytes);
        }
        return bytes;
    }

    private static (string Path, Dictionary<string, byte[]> Entries) Write(TempFolder folder)
    {
        var entries = new Dictionary<string, byte[]>
        {
            ["storage"] = Content(3 * BackupArchive.BlockSize + 12345, 1, compressible: true),
            ["indexes/a/_0.cfs"] = Content(BackupArchive.BlockSize + 7, 2, compressible: false),
            ["indexes/a/segments_2"] = Content(300, 3, compressible: false),
            ["empty"] = [],
        };
        var path = Path.Combine(folder.Path, "test.jackdaw-snapshot");
        using var file = File.Create(path);
        var writer = new BackupArchiveWriter(file);
        foreach (var (name, content) in entries)
        {
            using var entry = writer.BeginEntry(name);
            // In uneven pieces, across block boundaries.
            for (var at = 0; at < content.Length; at += 100_003)
            {
                entry.Write(content, at, Math.Min(100_003, content.Length - at));
            }
        }
        writer.Finish(new BackupManifest { Database = "Db", Kind = BackupKind.Full, Etag = 42, TransactionId = 7 });
        return (path, entries);
    }

    [Fact]
    public void EntriesComeBackAsWritten()
    {
        using var folder = new TempFolder();
        var (path, entries) = Write(folder);
        using var reader = BackupArchiveReader.Open(path);
        Assert.Equal(BackupArchive.FormatVersion, reader.Manifest.FormatVersion);
        Assert.Equal(42, reader.Manifest.Etag);
        Assert.Equal(entries.Keys, reader.Manifest.Entries.Select(e => e.Name));
        foreach (var (name, content) in entries)
        {
            using var stream = reader.OpenEntry(name);
            using var copy = new MemoryStream();
            stream.CopyTo(copy);
            Assert.Equal(content, copy.ToArray());
        }
        reader.VerifyAll(null, CancellationToken.None);
        // The compressible entry was stored smaller, the random one not much larger.
        var storage = reader.Manifest.Entries.Single(e => e.Name == "storage");
        Assert.True(storage.StoredLength < storage.Length / 4, $"{storage.StoredLength} of {storage.Length}");
        var random = reader.Manifest.Entries.Single(e => e.Name == "indexes/a/_0.cfs");
        Assert.True(random.StoredLength < random.Length + 64, $"{random.StoredLength} of {random.Length}");
    }

    [Fact]
    public void AFlippedByteAnywhereIsFoundAndNamed()
    {
        using var folder = new TempFolder();
        var (path, _) = Write(folder);
        var original = File.ReadAllBytes(path);
        using (var reader = BackupArchiveReader.Open(path))
        {
            var entries = reader.Manifest.Entries;
            var manifestOffset = entries.Max(e => e.Offset + e.StoredLength);
            var places = new List<(long Offset, string Expected)>
            {
                (3, "not a Jackdaw backup"),
                (original.Length - 3, "no valid end"),
                (original.Length - 20, "manifest"),
                (manifestOffset + 10, "manifest"),
            };
            foreach (var entry in entries)
            {
                places.Add((entry.Offset + 2, entry.Name));                               // a block header
                places.Add((entry.Offset + entry.StoredLength - 1, entry.Name));          // the end block's hash
                if (entry.Length > 0)
                {
                    places.Add((entry.Offset + BackupArchive.BlockHeaderSize + 5, entry.Name)); // block content
                }
            }
            reader.Dispose();
            foreach (var (offset, expected) in places)
            {
                var damaged = (byte[])original.Clone();
                damaged[offset] ^= 0x40;
                File.WriteAllBytes(path, damaged);
                var error = Assert.Throws<BackupException>(() =>
                {
                    using var opened = BackupArchiveReader.Open(path);
                    opened.VerifyAll(null, CancellationToken.None);
                });
                Assert.Contains("test.jackdaw-snapshot", error.Message);
                Assert.Contains(expected, error.Message);
            }
        }
    }

    [Fact]
    public void ACutShortFileAndANewerFormatAreRefused()
    {
        using var folder = new TempFolder();
        var (path, _) = Write(folder);
        var original = File.ReadAllBytes(path);
        File.WriteAllBytes(path, original.AsSpan(0, original.Length / 2).ToArray());
        Assert.Contains("no valid end", Assert.Throws<BackupException>(() => BackupArchiveReader.Open(path)).Message);

        var newer = (byte[])original.Clone();
        newer[8] = BackupArchive.FormatVersion + 1;
        File.WriteAllBytes(path, newer);
        var error = Assert.Throws<BackupException>(() => BackupArchiveReader.Open(path));
        Assert.Contains("newer build", error.Message);
    }
}
