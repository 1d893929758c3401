using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Rql;

/// <summary>
/// The regular expressions of <c>regex(Field, pattern)</c>: .NET's syntax, a match anywhere in the
/// value (anchor with <c>^</c> and <c>$</c> for the whole value), case-insensitive except inside
/// <c>exact()</c> (an index keeps lowercased terms for fields that are not exact). Every match is
/// bounded by <see cref="MatchTimeout"/>, so a pattern that backtracks without end fails the query
/// instead of holding a thread.
/// </summary>
public static class RqlRegex
{
    public static readonly TimeSpan MatchTimeout = TimeSpan.FromMilliseconds(100);

    /// <exception cref="InvalidQueryException">The value is not a string, or not a valid pattern.</exception>
    public static Regex Create(string query, RqlValue value, JsonElement resolved, bool exact) =>
        resolved.ValueKind == JsonValueKind.String
            ? Create(query, value, resolved.GetString()!, exact)
            : throw new InvalidQueryException(query, value.Position, "regex() takes the pattern as a string.");

    /// <exception cref="InvalidQueryException">Not a valid pattern.</exception>
    public static Regex Create(string query, RqlValue value, string pattern, bool exact)
    {
        var options = RegexOptions.CultureInvariant | (exact ? RegexOptions.None : RegexOptions.IgnoreCase);
        try
        {
            return new Regex(pattern, options, MatchTimeout);
        }
        catch (ArgumentException e)
        {
            throw new InvalidQueryException(query, value.Position, $"'{pattern}' is not a valid regular expression: {e.Message}");
        }
    }

    /// <exception cref="InvalidQueryException">The match took longer than <see cref="MatchTimeout"/>.</exception>
    public static bool IsMatch(string query, RqlValue value, Regex regex, string text)
    {
        try
        {
            return regex.IsMatch(text);
        }
        catch (RegexMatchTimeoutException)
        {
            throw new InvalidQueryException(query, value.Position, $"the regular expression '{regex}' took longer than {MatchTimeout.TotalMilliseconds} ms on one value; simplify it (avoid nested repetition such as (a+)+).");
        }
    }
}
