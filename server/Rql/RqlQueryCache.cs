namespace Jackdaw.Server.Rql;

/// <summary>
/// Parsed queries by their text: a client sends the same text again and again with other
/// parameters (<c>from 'Orders' where Company = $p0</c>), and a parsed <see cref="RqlQuery"/> is
/// immutable, so it is parsed once. Only texts up to <see cref="MaxTextLength"/> characters are
/// kept, at most <see cref="Capacity"/> of them (the cache starts over when full: queries written
/// with their values inline, each text new, do not grow it without bound). A text that does not
/// parse is not kept: it throws each time, with its position.
/// </summary>
public static class RqlQueryCache
{
    public const int Capacity = 1024;

    public const int MaxTextLength = 4096;

    private static readonly NonBlocking.ConcurrentDictionary<string, RqlQuery> Parsed = new(StringComparer.Ordinal);

    /// <exception cref="Errors.InvalidQueryException">The text is not valid RQL of this subset.</exception>
    public static RqlQuery Parse(string text)
    {
        if (Parsed.TryGetValue(text, out var query))
        {
            return query;
        }

        query = RqlParser.Parse(text);
        if (text.Length <= MaxTextLength)
        {
            if (Parsed.Count >= Capacity)
            {
                Parsed.Clear();
            }

            Parsed[text] = query;
        }

        return query;
    }
}
