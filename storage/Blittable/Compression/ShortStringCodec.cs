namespace Jackdaw.Storage.Blittable;

/// <summary>Shared-dictionary coder for short text (placeholder until the dictionary is trained).</summary>
internal static class ShortStringCodec
{
    public static int TryEncode(ReadOnlySpan<byte> value, Span<byte> destination)
    {
        _ = value;
        _ = destination;
        return -1;
    }

    public static int Decode(ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        _ = payload;
        _ = destination;
        return -1;
    }
}
