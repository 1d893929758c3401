using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Text.Json;
using Jackdaw.Server.Errors;
using K4os.Compression.LZ4;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Reads a backup file (<see cref="BackupArchive"/>): the header, tail and manifest are checked when
/// it opens; an entry's blocks as they are read, and its whole content against the manifest's hash
/// at its end. Every failure is a <see cref="BackupException"/> naming the file and, where it lies
/// in one, the entry.
/// </summary>
public sealed class BackupArchiveReader : IDisposable
{
    private readonly FileStream _file;

    private BackupArchiveReader(string path, FileStream file, BackupManifest manifest)
    {
        Path = path;
        _file = file;
        Manifest = manifest;
    }

    public string Path { get; }

    public string FileName => System.IO.Path.GetFileName(Path);

    public BackupManifest Manifest { get; }

    public long Length => _file.Length;

    /// <summary>Opens a backup file and checks its header, tail and manifest.</summary>
    public static BackupArchiveReader Open(string path)
    {
        FileStream file;
        try
        {
            file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.None);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new BackupException($"The backup file '{path}' cannot be read: {e.Message}", e);
        }
        try
        {
            return new BackupArchiveReader(path, file, ReadManifest(path, file));
        }
        catch
        {
            file.Dispose();
            throw;
        }
    }

    private static BackupManifest ReadManifest(string path, FileStream file)
    {
        var name = System.IO.Path.GetFileName(path);
        var length = file.Length;
        if (length < BackupArchive.HeaderSize + BackupArchive.TailSize)
        {
            throw new BackupException($"The backup file '{name}' is too short ({length} bytes) to be a backup: it was cut short.");
        }
        Span<byte> header = stackalloc byte[BackupArchive.HeaderSize];
        RandomAccess.Read(file.SafeFileHandle, header, 0);
        if (!header[..8].SequenceEqual(BackupArchive.Magic))
        {
            throw new BackupException($"The backup file '{name}' is not a Jackdaw backup (its header is damaged or it is another kind of file).");
        }
        var version = BinaryPrimitives.ReadInt32LittleEndian(header[8..]);
        if (version > BackupArchive.FormatVersion)
        {
            throw new BackupException($"The backup file '{name}' was written in backup format {version} by a newer build; this build reads format {BackupArchive.FormatVersion} and older. Restore it with a newer build.");
        }
        if (version < 1)
        {
            throw new BackupException($"The backup file '{name}' has a damaged header (format version {version}).");
        }
        if (BinaryPrimitives.ReadInt32LittleEndian(header[12..]) != 0)
        {
            throw new BackupException($"The backup file '{name}' has a damaged header (its reserved bytes are not zero).");
        }
        Span<byte> tail = stackalloc byte[BackupArchive.TailSize];
        RandomAccess.Read(file.SafeFileHandle, tail, length - BackupArchive.TailSize);
        if (!tail[24..].SequenceEqual(BackupArchive.TailMagic))
        {
            throw new BackupException($"The backup file '{name}' has no valid end: it was cut short or damaged.");
        }
        var offset = BinaryPrimitives.ReadInt64LittleEndian(tail);
        var size = BinaryPrimitives.ReadInt64LittleEndian(tail[8..]);
        if (offset < BackupArchive.HeaderSize || size <= 0 || size > 256L << 20 || offset + size != length - BackupArchive.TailSize)
        {
            throw new BackupException($"The backup file '{name}' has a damaged end (its manifest's place does not hold).");
        }
        var json = new byte[size];
        RandomAccess.Read(file.SafeFileHandle, json, offset);
        if (XxHash64.HashToUInt64(json) != BinaryPrimitives.ReadUInt64LittleEndian(tail[16..]))
        {
            throw new BackupException($"The backup file '{name}': the checksum of its manifest does not match: the file is damaged.");
        }
        BackupManifest? manifest;
        try
        {
            manifest = JsonSerializer.Deserialize<BackupManifest>(json, BackupManifest.Json);
        }
        catch (JsonException e)
        {
            throw new BackupException($"The backup file '{name}': its manifest cannot be read ({e.Message}).", e);
        }
        if (manifest is null || manifest.FormatVersion != version)
        {
            throw new BackupException($"The backup file '{name}': its manifest does not match its header.");
        }
        foreach (var entry in manifest.Entries)
        {
            if (entry.Offset < BackupArchive.HeaderSize || entry.StoredLength < BackupArchive.BlockHeaderSize || entry.Offset + entry.StoredLength > offset)
            {
                throw new BackupException($"The backup file '{name}': entry '{entry.Name}' lies outside the file.");
            }
        }
        return manifest;
    }

    public bool HasEntry(string name) => Manifest.Entries.Exists(e => e.Name == name);

    /// <summary>A stream of an entry's content; it throws <see cref="BackupException"/> at the first block, or the end, that fails its checksum.</summary>
    public Stream OpenEntry(string name, BackupRun? progress = null)
    {
        var entry = Manifest.Entries.Find(e => e.Name == name)
            ?? throw new BackupException($"The backup file '{FileName}' has no entry '{name}'.");
        return new EntryStream(this, entry, progress);
    }

    /// <summary>Reads every entry (or those <paramref name="which"/> picks by name) through, checking every block and every entry's checksum.</summary>
    public void VerifyAll(BackupRun? progress, CancellationToken cancel, Func<string, bool>? which = null)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(BackupArchive.BlockSize);
        try
        {
            foreach (var entry in Manifest.Entries)
            {
                if (which is not null && !which(entry.Name))
                {
                    continue;
                }
                using var stream = new EntryStream(this, entry, progress);
                while (stream.Read(buffer, 0, buffer.Length) > 0)
                {
                    cancel.ThrowIfCancellationRequested();
                }
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    public void Dispose() => _file.Dispose();

    private sealed class EntryStream : Stream
    {
        private readonly BackupArchiveReader _reader;
        private readonly BackupEntry _entry;
        private readonly BackupRun? _progress;
        private readonly XxHash64 _hash = new();
        private readonly ulong _expected;
        private byte[] _stored = ArrayPool<byte>.Shared.Rent(LZ4Codec.MaximumOutputSize(BackupArchive.BlockSize));
        private byte[] _raw = ArrayPool<byte>.Shared.Rent(BackupArchive.BlockSize);
        private long _position;
        private long _read;
        private int _rawLength;
        private int _rawOffset;
        private bool _ended;

        public EntryStream(BackupArchiveReader reader, BackupEntry entry, BackupRun? progress)
        {
            _reader = reader;
            _entry = entry;
            _progress = progress;
            _position = entry.Offset;
            if (!ulong.TryParse(entry.Hash, System.Globalization.NumberStyles.HexNumber, null, out _expected))
            {
                throw Damaged("its checksum in the manifest is not a number");
            }
        }

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => _entry.Length;

        public override long Position
        {
            get => _read;
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer)
        {
            while (_rawOffset == _rawLength)
            {
                if (_ended || !NextBlock())
                {
                    return 0;
                }
            }
            var take = Math.Min(buffer.Length, _rawLength - _rawOffset);
            _raw.AsSpan(_rawOffset, take).CopyTo(buffer);
            _rawOffset += take;
            _read += take;
            return take;
        }

        private bool NextBlock()
        {
            var end = _entry.Offset + _entry.StoredLength;
            Span<byte> header = stackalloc byte[BackupArchive.BlockHeaderSize];
            if (_position + BackupArchive.BlockHeaderSize > end)
            {
                throw Damaged("its blocks run past its end");
            }
            RandomAccess.Read(_reader._file.SafeFileHandle, header, _position);
            var rawLength = BinaryPrimitives.ReadInt32LittleEndian(header);
            var storedLength = BinaryPrimitives.ReadInt32LittleEndian(header[4..]);
            var hash = BinaryPrimitives.ReadUInt64LittleEndian(header[8..]);
            if (rawLength < 0 || rawLength > BackupArchive.BlockSize || storedLength < 0 || storedLength > rawLength ||
                _position + BackupArchive.BlockHeaderSize + storedLength > end)
            {
                throw Damaged($"the block at offset {_position} has a damaged header");
            }
            var stored = _stored.AsSpan(0, storedLength);
            if (RandomAccess.Read(_reader._file.SafeFileHandle, stored, _position + BackupArchive.BlockHeaderSize) != storedLength)
            {
                throw Damaged($"the block at offset {_position} is cut short");
            }
            if (XxHash64.HashToUInt64(stored) != hash)
            {
                throw Damaged($"the checksum of the block at offset {_position} does not match");
            }
            _position += BackupArchive.BlockHeaderSize + storedLength;
            _progress?.AddBytes(BackupArchive.BlockHeaderSize + storedLength);
            if (rawLength == 0)
            {
                _ended = true;
                if (_position != end || _read != _entry.Length)
                {
                    throw Damaged("its length does not match the manifest");
                }
                if (_hash.GetCurrentHashAsUInt64() != _expected)
                {
                    throw Damaged("the checksum of its content does not match the manifest");
                }
                return false;
            }
            if (storedLength == rawLength)
            {
                stored.CopyTo(_raw);
            }
            else if (LZ4Codec.Decode(stored, _raw.AsSpan(0, rawLength)) != rawLength)
            {
                throw Damaged($"the block at offset {_position} does not decompress");
            }
            _hash.Append(_raw.AsSpan(0, rawLength));
            _rawLength = rawLength;
            _rawOffset = 0;
            return true;
        }

        private BackupException Damaged(string what) =>
            new($"The backup file '{_reader.FileName}' is damaged: entry '{_entry.Name}': {what}.");

        protected override void Dispose(bool disposing)
        {
            if (disposing && _raw.Length > 0)
            {
                ArrayPool<byte>.Shared.Return(_raw);
                ArrayPool<byte>.Shared.Return(_stored);
                _raw = [];
                _stored = [];
            }
            base.Dispose(disposing);
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
