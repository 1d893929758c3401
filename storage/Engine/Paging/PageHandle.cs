using System.Runtime.CompilerServices;

namespace Jackdaw.Storage.Engine.Paging;

/// <summary>
/// A page (or an overflow run) in scratch memory (an array) or in the data file's map (a pointer).
/// Pointers stay valid until the environment closes (mappings are never unmapped earlier) and
/// point at read-only memory: only arrays (a write transaction's own dirty pages) are written.
/// </summary>
internal readonly unsafe struct PageHandle
{
    private readonly byte[]? _array;
    private readonly byte* _pointer;
    private readonly int _length;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public PageHandle(byte[] array)
    {
        _array = array;
        _pointer = null;
        _length = array.Length;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public PageHandle(byte* pointer, int length)
    {
        _array = null;
        _pointer = pointer;
        _length = length;
    }

    public int Length => _length;

    public bool IsNull => _array is null && _pointer is null;

    public Span<byte> Span
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _array is not null ? new Span<byte>(_array) : new Span<byte>(_pointer, _length);
    }
}
