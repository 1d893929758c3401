using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Text.Json;
using K4os.Compression.LZ4;

namespace Jackdaw.Server.Backup;

/// <summary>Writes a backup file's entries, then its manifest (<see cref="BackupArchive"/>).</summary>
public sealed class BackupArchiveWriter
{
    private readonly Stream _file;
    private readonly BackupRun? _progress;
    private readonly List<BackupEntry> _entries = [];
    /// <summary>How much a backup file is written between two syncs (see <see cref="WriteBlock"/>).</summary>
    public const long SyncEvery = 4L << 20;

    private long _position;
    private long _synced;
    private bool _inEntry;

    public BackupArchiveWriter(Stream file, BackupRun? progress = null)
    {
        _file = file;
        _progress = progress;
        Span<byte> header = stackalloc byte[BackupArchive.HeaderSize];
        BackupArchive.Magic.CopyTo(header);
        BinaryPrimitives.WriteInt32LittleEndian(header[8..], BackupArchive.FormatVersion);
        _file.Write(header);
        _position = BackupArchive.HeaderSize;
    }

    /// <summary>The bytes written so far.</summary>
    public long Position => _position;

    /// <summary>A stream the entry's content is written to; disposing it ends the entry.</summary>
    public Stream BeginEntry(string name)
    {
        if (_inEntry)
        {
            throw new InvalidOperationException("The previous entry is still open.");
        }
        _inEntry = true;
        return new EntryStream(this, name);
    }

    /// <summary>Writes a whole entry from <paramref name="source"/>.</summary>
    public void WriteEntry(string name, Stream source, CancellationToken cancel)
    {
        using var entry = BeginEntry(name);
        var buffer = ArrayPool<byte>.Shared.Rent(BackupArchive.BlockSize);
        try
        {
            int read;
            while ((read = source.Read(buffer, 0, BackupArchive.BlockSize)) > 0)
            {
                cancel.ThrowIfCancellationRequested();
                entry.Write(buffer, 0, read);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Writes the manifest (its entries filled in) and the tail, and flushes.</summary>
    public void Finish(BackupManifest manifest)
    {
        if (_inEntry)
        {
            throw new InvalidOperationException("An entry is still open.");
        }
        manifest.FormatVersion = BackupArchive.FormatVersion;
        manifest.Entries = _entries;
        var json = JsonSerializer.SerializeToUtf8Bytes(manifest, BackupManifest.Json);
        var offset = _position;
        _file.Write(json);
        Span<byte> tail = stackalloc byte[BackupArchive.TailSize];
        BinaryPrimitives.WriteInt64LittleEndian(tail, offset);
        BinaryPrimitives.WriteInt64LittleEndian(tail[8..], json.Length);
        BinaryPrimitives.WriteUInt64LittleEndian(tail[16..], XxHash64.HashToUInt64(json));
        BackupArchive.TailMagic.CopyTo(tail[24..]);
        _file.Write(tail);
        _position += json.Length + BackupArchive.TailSize;
        _file.Flush();
    }

    private void WriteBlock(ReadOnlySpan<byte> raw, byte[] scratch)
    {
        var stored = raw;
        if (raw.Length > 0)
        {
            var encoded = LZ4Codec.Encode(raw, scratch, LZ4Level.L00_FAST);
            if (encoded > 0 && encoded < raw.Length)
            {
                stored = scratch.AsSpan(0, encoded);
            }
        }
        Span<byte> header = stackalloc byte[BackupArchive.BlockHeaderSize];
        BinaryPrimitives.WriteInt32LittleEndian(header, raw.Length);
        BinaryPrimitives.WriteInt32LittleEndian(header[4..], stored.Length);
        BinaryPrimitives.WriteUInt64LittleEndian(header[8..], XxHash64.HashToUInt64(stored));
        _file.Write(header);
        _file.Write(stored);
        _position += BackupArchive.BlockHeaderSize + stored.Length;
        _progress?.AddBytes(BackupArchive.BlockHeaderSize + stored.Length);
        if (_file is FileStream durable && _position - _synced >= SyncEvery)
        {
            // A backup's dirty pages must not pile up for one sync at the end: on ext4 (ordered
            // data) a writer's fdatasync of the journal waits for the file system's commit, which
            // writes them out first. Synced as it goes, a commit waits for at most this much.
            durable.Flush(flushToDisk: true);
            _synced = _position;
        }
    }

    /// <summary>Cuts what is written into blocks; its hash and lengths go to the manifest when it is disposed.</summary>
    private sealed class EntryStream : Stream
    {
        private readonly BackupArchiveWriter _writer;
        private readonly string _name;
        private readonly long _offset;
        private readonly XxHash64 _hash = new();
        private byte[] _block = ArrayPool<byte>.Shared.Rent(BackupArchive.BlockSize);
        private byte[] _scratch = ArrayPool<byte>.Shared.Rent(LZ4Codec.MaximumOutputSize(BackupArchive.BlockSize));
        private int _filled;
        private long _length;

        public EntryStream(BackupArchiveWriter writer, string name)
        {
            _writer = writer;
            _name = name;
            _offset = writer._position;
        }

        public override bool CanRead => false;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => _length;

        public override long Position
        {
            get => _length;
            set => throw new NotSupportedException();
        }

        public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            while (buffer.Length > 0)
            {
                var take = Math.Min(buffer.Length, BackupArchive.BlockSize - _filled);
                buffer[..take].CopyTo(_block.AsSpan(_filled));
                _filled += take;
                buffer = buffer[take..];
                if (_filled == BackupArchive.BlockSize)
                {
                    FlushBlock();
                }
            }
        }

        public override void WriteByte(byte value) => Write([value]);

        private void FlushBlock()
        {
            if (_filled == 0)
            {
                return;
            }
            var raw = _block.AsSpan(0, _filled);
            _hash.Append(raw);
            _length += _filled;
            _writer.WriteBlock(raw, _scratch);
            _filled = 0;
        }

        public override void Flush()
        {
        }

        protected override void Dispose(bool disposing)
        {
            if (disposing && _block.Length > 0)
            {
                try
                {
                    FlushBlock();
                    _writer.WriteBlock([], _scratch);
                    _writer._entries.Add(new BackupEntry
                    {
                        Name = _name,
                        Offset = _offset,
                        Length = _length,
                        StoredLength = _writer._position - _offset,
                        Hash = _hash.GetCurrentHashAsUInt64().ToString("x16"),
                    });
                }
                finally
                {
                    _writer._inEntry = false;
                    ArrayPool<byte>.Shared.Return(_block);
                    ArrayPool<byte>.Shared.Return(_scratch);
                    _block = [];
                    _scratch = [];
                }
            }
            base.Dispose(disposing);
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
