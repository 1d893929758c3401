using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Rql;

/// <summary>
/// RavenDB's <c>update { ... }</c> clause, which ends a query to patch by
/// (<c>from Orders where Company = $c update { this.Freight += 1 }</c>). Its body is JavaScript,
/// not RQL, so it is cut off the text before the tokenizer sees it: the clause is the word
/// <c>update</c> outside any string, followed by <c>{</c>, and its body runs to the last <c>}</c>,
/// which must end the query.
/// </summary>
public static class RqlUpdateClause
{
    /// <summary>The query without its update clause, and the clause (null when there is none).</summary>
    /// <exception cref="InvalidQueryException">An <c>update {</c> whose body does not end the query with <c>}</c>.</exception>
    public static (string Query, RqlUpdate? Update) Split(string query)
    {
        char quote = '\0';
        for (var i = 0; i < query.Length; i++)
        {
            var c = query[i];
            if (quote != '\0')
            {
                if (c == '\\')
                {
                    i++;
                }
                else if (c == quote)
                {
                    quote = '\0';
                }
                continue;
            }
            if (c is '\'' or '"')
            {
                quote = c;
                continue;
            }
            if (!IsUpdateKeyword(query, i))
            {
                continue;
            }
            var open = i + "update".Length;
            while (open < query.Length && char.IsWhiteSpace(query[open]))
            {
                open++;
            }
            if (open == query.Length || query[open] != '{')
            {
                continue;
            }
            var close = query.TrimEnd().Length - 1;
            if (close <= open || query[close] != '}')
            {
                throw new InvalidQueryException(query, open, "the body of 'update { ... }' must end the query with '}'.");
            }
            return (query[..i], new RqlUpdate(query[(open + 1)..close], i));
        }
        return (query, null);
    }

    private static bool IsUpdateKeyword(string query, int i) =>
        string.Compare(query, i, "update", 0, "update".Length, StringComparison.OrdinalIgnoreCase) == 0
        && (i == 0 || char.IsWhiteSpace(query[i - 1]) || query[i - 1] == ')')
        && (i + "update".Length == query.Length || !IsNamePart(query[i + "update".Length]));

    private static bool IsNamePart(char c) => char.IsLetterOrDigit(c) || c is '_' or '$' or '.';
}

/// <summary>The JavaScript body of an <c>update { ... }</c> clause and where the clause starts in the query.</summary>
public sealed record RqlUpdate(string Script, int Position);
