using System.Text;

namespace Jackdaw.Server.Rql;

/// <summary>
/// Masks the literals of a query's text for places that keep or show it beyond its answer (the
/// slow-query log and its log line): every string (<c>'...'</c>, <c>"..."</c>, <c>`...`</c>, with
/// backslash escapes) becomes <c>'?'</c> and every number outside a name becomes <c>?</c>, while
/// names, keywords, operators and <c>$parameters</c> are kept, so the shape of the query stays
/// readable and no value a client typed into it is kept.
/// </summary>
/// <remarks>
/// A scanner rather than <see cref="RqlTokenizer"/>: it must also read what the tokenizer refuses
/// (the JavaScript of <c>select { ... }</c> and <c>update { ... }</c> bodies, a text longer than
/// the tokenizer's bound) and never fail. It errs towards masking: a string with no closing quote
/// is masked to the end, and a quote inside a JavaScript comment starts a string. The one string
/// kept is the name after <c>index</c> (<c>from index 'Orders/Totals'</c>), which is not a value.
/// </remarks>
public static class RqlRedaction
{
    public const string MaskedString = "'?'";
    public const string MaskedNumber = "?";

    /// <summary><paramref name="query"/> with its string and number literals masked.</summary>
    public static string MaskLiterals(string query)
    {
        var masked = new StringBuilder(query.Length);
        var afterIndexKeyword = false;
        var i = 0;
        while (i < query.Length)
        {
            var c = query[i];
            if (char.IsWhiteSpace(c))
            {
                masked.Append(c);
                i++;
                continue;
            }
            var start = i;
            if (c is '\'' or '"' or '`')
            {
                i = EndOfString(query, i);
                if (afterIndexKeyword)
                {
                    masked.Append(query, start, i - start);
                }
                else
                {
                    masked.Append(MaskedString);
                }
                afterIndexKeyword = false;
                continue;
            }
            afterIndexKeyword = false;
            if (c == '$')
            {
                // A parameter: its name is kept, digits and all ($p1).
                i++;
                while (i < query.Length && RqlTokenizer.IsWordChar(query[i]))
                {
                    i++;
                }
                masked.Append(query, start, i - start);
                continue;
            }
            if (char.IsAsciiDigit(c) || (c == '.' && i + 1 < query.Length && char.IsAsciiDigit(query[i + 1])))
            {
                i = EndOfNumber(query, i);
                masked.Append(MaskedNumber);
                continue;
            }
            if (RqlTokenizer.IsWordChar(c))
            {
                // A name or keyword: the digits inside it are part of it (Orders2, Address.Line1).
                while (i < query.Length && (RqlTokenizer.IsWordChar(query[i]) || (query[i] == '-' && i + 1 < query.Length && RqlTokenizer.IsWordChar(query[i + 1]) && query[start] == '@')))
                {
                    i++;
                }
                masked.Append(query, start, i - start);
                afterIndexKeyword = i - start == 5 && query.AsSpan(start, 5).Equals("index", StringComparison.OrdinalIgnoreCase);
                continue;
            }
            masked.Append(c);
            i++;
        }
        return masked.ToString();
    }

    /// <summary>Where the string starting at <paramref name="start"/> ends (after its closing quote, or the text's end).</summary>
    private static int EndOfString(string query, int start)
    {
        var quote = query[start];
        var i = start + 1;
        while (i < query.Length)
        {
            var c = query[i++];
            if (c == '\\')
            {
                i++;
            }
            else if (c == quote)
            {
                return i;
            }
        }
        return query.Length;
    }

    /// <summary>Where the number starting at <paramref name="start"/> ends: digits, a point, an exponent (<c>1.5e-3</c>), hex (<c>0x1F</c>).</summary>
    private static int EndOfNumber(string query, int start)
    {
        var i = start;
        while (i < query.Length)
        {
            var c = query[i];
            if (char.IsAsciiLetterOrDigit(c) || c is '.' or '_' || (c is '+' or '-' && query[i - 1] is 'e' or 'E'))
            {
                i++;
            }
            else
            {
                break;
            }
        }
        return Math.Min(i, query.Length);
    }
}
