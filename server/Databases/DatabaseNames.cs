using System.Buffers;

namespace Jackdaw.Server.Databases;

/// <summary>Database names: 1 to 64 of <c>A-Z a-z 0-9 _ . -</c>, not <c>.</c> or <c>..</c>; compared case-insensitively.</summary>
public static class DatabaseNames
{
    public const int MaxLength = 64;

    private static readonly SearchValues<char> Allowed = SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");

    /// <summary>Null when <paramref name="name"/> is valid, else a message naming the problem.</summary>
    public static string? Validate(ReadOnlySpan<char> name)
    {
        if (name.IsEmpty)
        {
            return "The database name is empty.";
        }
        if (name.Length > MaxLength)
        {
            return $"The database name is {name.Length} characters long; the maximum is {MaxLength}.";
        }
        var bad = name.IndexOfAnyExcept(Allowed);
        if (bad >= 0)
        {
            return $"The database name '{name}' has '{name[bad]}' at position {bad}; use only letters, digits, '_', '.' and '-'.";
        }
        if (name is "." or "..")
        {
            return $"'{name}' is not a database name.";
        }
        return null;
    }
}
