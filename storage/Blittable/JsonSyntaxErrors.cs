using System.Text.Json;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// What <see cref="Utf8JsonReader"/> found wrong, said for the person who sent the JSON: its message
/// without the 0-based "LineNumber | BytePositionInLine" it appends and without advice about reader
/// options the sender cannot change, and the place as a 1-based line and column.
/// </summary>
public static class JsonSyntaxErrors
{
    // The reader's phrasings that speak of its own API, and what they mean for JSON text.
    private static readonly (string Reader, string Said)[] Rewrites =
    [
        (" which is not supported in this mode. Change the reader options.", ", which JSON does not allow."),
        ("Expected the input to start with a valid JSON token, while isFinalBlock is true.", "Expected a JSON value."),
        ("The input does not contain any JSON tokens.", "The input is empty or only whitespace."),
        ("Expected depth to be zero at the end of the JSON payload. There is an open JSON object or array that should be closed.", "The input ends before every object and array in it is closed."),
        ("is an invalid token type for the end of the JSON payload. Expected either 'EndArray' or 'EndObject'.", "cannot end the input: an object or array is still open."),
        ("Cannot skip comments.", "Comments are not allowed in JSON."),
    ];

    /// <summary>What is wrong, without where (one sentence or two, ending in a full stop).</summary>
    public static string WhatIsWrong(JsonException exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        var message = exception.Message;
        var cut = message.IndexOf(" LineNumber:", StringComparison.Ordinal);
        if (cut >= 0)
        {
            message = message[..cut];
        }

        foreach (var (reader, said) in Rewrites)
        {
            message = message.Replace(reader, said, StringComparison.Ordinal);
        }

        message = message.Trim();
        return message.EndsWith('.') ? message : message + ".";
    }

    /// <summary>What is wrong and where, e.g. "'}' is an invalid start of a value (line 1, column 15)."</summary>
    public static string Describe(JsonException exception)
    {
        var what = WhatIsWrong(exception);
        return exception.LineNumber is { } line && exception.BytePositionInLine is { } column
            ? Located(what, line + 1, column + 1)
            : what;
    }

    /// <summary>
    /// "<paramref name="what"/> (line L, column C).", its first letter lowercased when it starts a
    /// plain sentence, so that it reads on after a colon.
    /// </summary>
    public static string Located(string what, long line, long column)
    {
        if (what.Length > 1 && char.IsUpper(what[0]) && char.IsLower(what[1]))
        {
            what = char.ToLowerInvariant(what[0]) + what[1..];
        }

        return $"{what.TrimEnd('.')} (line {line}, column {column}).";
    }
}
