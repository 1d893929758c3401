using System.Runtime.CompilerServices;

namespace Jackdaw.Server.Routing;

/// <summary>
/// The result of a match: the endpoint and up to <see cref="MaxCaptures"/> captures, each a
/// (start, length) range into the matched path string. A plain struct with inline storage, so a
/// match allocates nothing.
/// </summary>
public struct RouteMatch<THandler>
    where THandler : class
{
    public const int MaxCaptures = 4;

    private CaptureRanges _ranges;
    private int _count;

    public RouteEndpoint<THandler>? Endpoint { get; internal set; }

    public readonly int CaptureCount => _count;

    public readonly Range GetCapture(int index)
    {
        if ((uint)index >= (uint)_count)
        {
            ThrowCaptureOutOfRange(index, _count);
        }
        var start = _ranges[index * 2];
        return new Range(start, start + _ranges[(index * 2) + 1]);
    }

    public readonly (int Start, int Length) GetCaptureBounds(int index)
    {
        if ((uint)index >= (uint)_count)
        {
            ThrowCaptureOutOfRange(index, _count);
        }
        return (_ranges[index * 2], _ranges[(index * 2) + 1]);
    }

    internal void Push(int start, int length)
    {
        _ranges[_count * 2] = start;
        _ranges[(_count * 2) + 1] = length;
        _count++;
    }

    internal void Truncate(int count) => _count = count;

    internal void Clear()
    {
        _count = 0;
        Endpoint = null;
    }

    private static void ThrowCaptureOutOfRange(int index, int count) =>
        throw new ArgumentOutOfRangeException(nameof(index), index, $"The route captured {count} segment(s).");

    [InlineArray(MaxCaptures * 2)]
    private struct CaptureRanges
    {
        private int _element0;
    }
}
