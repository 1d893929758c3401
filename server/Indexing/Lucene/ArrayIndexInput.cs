using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using Lucene.Net.Store;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// An index file, or a slice of a compound file, read from an array that holds the whole file
/// (<see cref="PreadDirectory"/> reads small files once, as they never change once written): every
/// read is a copy from the array, with no system call and no buffer of its own, so a clone (Lucene
/// clones an input for every term lookup) costs one small object. Clones share the array; only the
/// input the directory handed out gives its bytes back to the directory's budget when disposed.
/// </summary>
internal sealed class ArrayIndexInput : IndexInput
{
    private readonly byte[] _bytes;
    private readonly int _start;
    private readonly int _length;
    private readonly long _heldBytes;
    private int _position;
    private bool _owner;

    /// <param name="heldBytes">What disposing this input (not its clones) gives back to the directory's budget: 0 for a slice, whose slicer owns the array.</param>
    public ArrayIndexInput(string description, byte[] bytes, int start, int length, long heldBytes)
        : base(description)
    {
        _bytes = bytes;
        _start = start;
        _length = length;
        _heldBytes = heldBytes;
        _owner = heldBytes > 0;
    }

    public override long Length => _length;

    public override long Position => _position;

    public override void Seek(long pos)
    {
        if ((ulong)pos > (ulong)_length)
        {
            ThrowPastEnd(pos);
        }

        _position = (int)pos;
    }

    public override byte ReadByte()
    {
        if (_position >= _length)
        {
            ThrowPastEnd(_position + 1L);
        }

        return _bytes[_start + _position++];
    }

    public override void ReadBytes(byte[] b, int offset, int len)
    {
        _bytes.AsSpan(Take(len), len).CopyTo(b.AsSpan(offset, len));
    }

    public override short ReadInt16() => BinaryPrimitives.ReadInt16BigEndian(_bytes.AsSpan(Take(2), 2));

    public override int ReadInt32() => BinaryPrimitives.ReadInt32BigEndian(_bytes.AsSpan(Take(4), 4));

    public override long ReadInt64() => BinaryPrimitives.ReadInt64BigEndian(_bytes.AsSpan(Take(8), 8));

    public override int ReadVInt32()
    {
        // Lucene's variable-length int: 7 bits a byte, low bits first, at most 5 bytes.
        var result = 0;
        for (var shift = 0; shift < 35; shift += 7)
        {
            var b = ReadByte();
            result |= (b & 0x7F) << shift;
            if (b < 0x80)
            {
                return result;
            }
        }

        throw new IOException($"Invalid vInt detected (too many bits) in {this} before {_position}");
    }

    public override long ReadVInt64()
    {
        // At most 9 bytes: Lucene writes no negative vLong.
        var result = 0L;
        for (var shift = 0; shift < 63; shift += 7)
        {
            var b = ReadByte();
            result |= (long)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                return result;
            }
        }

        throw new IOException($"Invalid vLong detected (negative values disallowed) in {this} before {_position}");
    }

    public override void SkipBytes(long numBytes)
    {
        if (numBytes < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(numBytes), numBytes, "numBytes must be >= 0");
        }

        Seek(_position + numBytes);
    }

    public override object Clone()
    {
        var clone = (ArrayIndexInput)base.Clone();
        clone._owner = false;
        return clone;
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing && _owner)
        {
            _owner = false;
            PreadDirectory.Release(_heldBytes);
        }
    }

    /// <summary>Moves past the next <paramref name="count"/> bytes and returns where they start in the array.</summary>
    private int Take(int count)
    {
        if (count < 0 || count > _length - _position)
        {
            ThrowPastEnd(_position + (long)count);
        }

        var at = _start + _position;
        _position += count;
        return at;
    }

    [DoesNotReturn]
    private void ThrowPastEnd(long end) =>
        throw new EndOfStreamException($"read past EOF: {this} (to {end}, length {_length})");
}
