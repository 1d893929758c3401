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

/// <summary>
/// The JSON input could not be turned into a document. <see cref="Position"/> is a byte offset in the
/// input; <see cref="Line"/> and <see cref="Column"/> (1-based, the column counted in bytes of UTF-8)
/// say the same for a person, where the parser saw the input up to that point (0 when it did not).
/// </summary>
public sealed class BlittableParseException : BlittableException
{
    public BlittableParseException(BlittableParseError error, long position, string message, Exception? inner = null)
        : this(error, position, line: 0, column: 0, message, inner)
    {
    }

    private BlittableParseException(BlittableParseError error, long position, long line, long column, string description, Exception? inner)
        : base(line > 0 ? $"{description.TrimEnd('.')} (line {line}, column {column}; byte {position} of the input, {error})." : $"{description.TrimEnd('.')} (byte {position} of the input, {error}).", inner)
    {
        Error = error;
        Position = position;
        Line = line;
        Column = column;
        Description = description;
    }

    public BlittableParseError Error { get; }

    public long Position { get; }

    /// <summary>The 1-based line of <see cref="Position"/>; 0 when unknown.</summary>
    public long Line { get; }

    /// <summary>The 1-based column of <see cref="Position"/> in its line, in bytes; 0 when unknown.</summary>
    public long Column { get; }

    /// <summary>What is wrong, without where.</summary>
    public string Description { get; }

    /// <summary>The same error, located at <paramref name="line"/> and <paramref name="column"/> (1-based).</summary>
    public BlittableParseException At(long line, long column) =>
        new(Error, Position, line, column, Description, InnerException);
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
