using System.Buffers;

namespace Jackdaw.Storage.Blittable;

/// <summary>A built document; its memory belongs to the <see cref="JsonOperationContext"/> (valid until Reset).</summary>
public readonly struct BlittableDocument
{
    private readonly byte[]? _buffer;
    private readonly int _offset;
    private readonly int _length;

    internal BlittableDocument(byte[] buffer, int offset, int length)
    {
        _buffer = buffer;
        _offset = offset;
        _length = length;
    }

    public ReadOnlySpan<byte> Span => new(_buffer, _offset, _length);

    public ReadOnlyMemory<byte> Memory => new(_buffer, _offset, _length);

    public int Length => _length;

    public BlittableObject Root => BlittableReader.Open(Span);

    public void WriteJsonTo(IBufferWriter<byte> output) => BlittableJsonWriter.WriteTo(Span, output);

    public byte[] ToArray() => Span.ToArray();
}
