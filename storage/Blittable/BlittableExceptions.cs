namespace Jackdaw.Storage.Blittable;

/// <summary>Base of every exception thrown by the blittable format.</summary>
public class BlittableException : Exception
{
    public BlittableException(string message)
        : base(message)
    {
    }

    public BlittableException(string message, Exception? inner)
        : base(message, inner)
    {
    }
}

/// <summary>Why a JSON text was rejected.</summary>
public enum BlittableParseError
{
    InvalidJson,
    InvalidUtf8,
    Truncated,
    TrailingData,
    NotAnObject,
    TooDeep,
    DuplicateProperty,
    NumberOutOfRange,
    TooLarge,
}

/// <summary>The JSON input could not be turned into a document; <see cref="Position"/> is a byte offset in the input.</summary>
public sealed class BlittableParseException : BlittableException
{
    public BlittableParseException(BlittableParseError error, long position, string message, Exception? inner = null)
        : base($"{message} (error {error} at byte {position} of the input)", inner)
    {
        Error = error;
        Position = position;
    }

    public BlittableParseError Error { get; }

    public long Position { get; }
}

/// <summary>A stored document is corrupt: an offset, length or type byte does not hold.</summary>
public sealed class BlittableFormatException : BlittableException
{
    public BlittableFormatException(string message)
        : base(message)
    {
    }

    public BlittableFormatException(string message, Exception? inner)
        : base(message, inner)
    {
    }
}
