namespace Jackdaw.Server.Documents;

/// <summary>
/// RavenDB's id patterns (<c>matches</c> and <c>exclude</c> of a stream or page by prefix): one or
/// more alternatives separated by <c>|</c>, in which <c>*</c> stands for any run of characters and
/// <c>?</c> for one character, compared case-insensitively with the whole of the part of the id
/// after the prefix. <c>matches=1*|2?</c> keeps <c>users/10</c> and <c>users/21</c> under
/// <c>users/</c>; an empty pattern matches everything as <c>matches</c> and nothing as <c>exclude</c>.
/// </summary>
public sealed class IdPattern
{
    private readonly string[] _alternatives;

    private IdPattern(string[] alternatives) => _alternatives = alternatives;

    /// <summary>The pattern, or null for a missing or empty one.</summary>
    public static IdPattern? Parse(string? pattern) =>
        string.IsNullOrEmpty(pattern) || pattern.Split('|', StringSplitOptions.RemoveEmptyEntries) is not { Length: > 0 } alternatives
            ? null
            : new IdPattern(alternatives);

    public bool Matches(ReadOnlySpan<char> text)
    {
        foreach (var alternative in _alternatives)
        {
            if (Glob(alternative, text))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Iterative wildcard match: on a mismatch after a <c>*</c>, the star takes one more character
    /// and the match resumes there (linear in practice, no recursion on hostile patterns).
    /// </summary>
    private static bool Glob(ReadOnlySpan<char> pattern, ReadOnlySpan<char> text)
    {
        int p = 0, t = 0, star = -1, resume = 0;
        while (t < text.Length)
        {
            if (p < pattern.Length && (pattern[p] == '?' || SameLetter(pattern[p], text[t])))
            {
                p++;
                t++;
            }
            else if (p < pattern.Length && pattern[p] == '*')
            {
                star = p++;
                resume = t;
            }
            else if (star >= 0)
            {
                p = star + 1;
                t = ++resume;
            }
            else
            {
                return false;
            }
        }
        while (p < pattern.Length && pattern[p] == '*')
        {
            p++;
        }
        return p == pattern.Length;
    }

    private static bool SameLetter(char a, char b) => a == b || char.ToLowerInvariant(a) == char.ToLowerInvariant(b);
}
