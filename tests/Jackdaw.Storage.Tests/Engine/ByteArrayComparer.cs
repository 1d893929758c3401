namespace Jackdaw.Storage.Tests.Engine;

/// <summary>The engine's key order: <c>SequenceCompareTo</c>.</summary>
internal sealed class ByteArrayComparer : IComparer<byte[]>
{
    public static readonly ByteArrayComparer Instance = new();

    public int Compare(byte[]? x, byte[]? y) => x.AsSpan().SequenceCompareTo(y);
}
