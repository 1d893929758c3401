using System.Globalization;
using System.Text;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Rql;

/// <summary>
/// Splits RQL text into tokens: identifiers (letters, digits, <c>_</c>, <c>@</c>), strings in single
/// or double quotes with backslash escapes, numbers, <c>$parameters</c>, and punctuation. Bounded:
/// a query longer than <see cref="MaxQueryLength"/> or a string longer than <see cref="MaxStringLength"/>
/// is refused with its position.
/// </summary>
public static class RqlTokenizer
{
    public const int MaxQueryLength = 256 * 1024;
    public const int MaxStringLength = 32 * 1024;

    public static List<RqlToken> Tokenize(string query)
    {
        if (query.Length > MaxQueryLength)
        {
            throw new InvalidQueryException(query, MaxQueryLength, $"the query is {query.Length:N0} characters long; the most is {MaxQueryLength:N0}.");
        }
        var tokens = new List<RqlToken>();
        var i = 0;
        while (true)
        {
            while (i < query.Length && char.IsWhiteSpace(query[i]))
            {
                i++;
            }
            if (i == query.Length)
            {
                tokens.Add(new RqlToken(RqlTokenKind.End, "", i));
                return tokens;
            }

            var start = i;
            var c = query[i];
            switch (c)
            {
                case '(':
                    tokens.Add(new RqlToken(RqlTokenKind.OpenParen, "(", i++));
                    continue;
                case ')':
                    tokens.Add(new RqlToken(RqlTokenKind.CloseParen, ")", i++));
                    continue;
                case '[':
                    tokens.Add(new RqlToken(RqlTokenKind.OpenBracket, "[", i++));
                    continue;
                case ']':
                    tokens.Add(new RqlToken(RqlTokenKind.CloseBracket, "]", i++));
                    continue;
                case ',':
                    tokens.Add(new RqlToken(RqlTokenKind.Comma, ",", i++));
                    continue;
                case '.' when i + 1 >= query.Length || !char.IsAsciiDigit(query[i + 1]):
                    tokens.Add(new RqlToken(RqlTokenKind.Dot, ".", i++));
                    continue;
                case '=':
                    i += i + 1 < query.Length && query[i + 1] == '=' ? 2 : 1;
                    tokens.Add(new RqlToken(RqlTokenKind.Equal, "=", start));
                    continue;
                case '!' when i + 1 < query.Length && query[i + 1] == '=':
                    i += 2;
                    tokens.Add(new RqlToken(RqlTokenKind.NotEqual, "!=", start));
                    continue;
                case '<':
                    if (i + 1 < query.Length && query[i + 1] == '=')
                    {
                        i += 2;
                        tokens.Add(new RqlToken(RqlTokenKind.LessOrEqual, "<=", start));
                    }
                    else if (i + 1 < query.Length && query[i + 1] == '>')
                    {
                        i += 2;
                        tokens.Add(new RqlToken(RqlTokenKind.NotEqual, "<>", start));
                    }
                    else
                    {
                        i++;
                        tokens.Add(new RqlToken(RqlTokenKind.Less, "<", start));
                    }
                    continue;
                case '>':
                    if (i + 1 < query.Length && query[i + 1] == '=')
                    {
                        i += 2;
                        tokens.Add(new RqlToken(RqlTokenKind.GreaterOrEqual, ">=", start));
                    }
                    else
                    {
                        i++;
                        tokens.Add(new RqlToken(RqlTokenKind.Greater, ">", start));
                    }
                    continue;
                case '\'' or '"':
                    tokens.Add(new RqlToken(RqlTokenKind.String, ReadString(query, ref i), start));
                    continue;
                case '$':
                    i++;
                    var name = ReadWord(query, ref i);
                    if (name.Length == 0)
                    {
                        throw new InvalidQueryException(query, start, "'$' must be followed by a parameter name, e.g. $company.");
                    }
                    tokens.Add(new RqlToken(RqlTokenKind.Parameter, name, start));
                    continue;
            }

            if (char.IsAsciiDigit(c) || c == '.' || (c == '-' && i + 1 < query.Length && (char.IsAsciiDigit(query[i + 1]) || query[i + 1] == '.')))
            {
                tokens.Add(new RqlToken(RqlTokenKind.Number, ReadNumber(query, ref i), start));
                continue;
            }

            if (IsWordChar(c))
            {
                tokens.Add(new RqlToken(RqlTokenKind.Identifier, ReadWord(query, ref i), start));
                continue;
            }

            throw new InvalidQueryException(query, i, $"unexpected character '{c}'.");
        }
    }

    /// <summary>Whether <paramref name="c"/> belongs in an identifier or a parameter's name (also <see cref="RqlRedaction"/>'s rule).</summary>
    internal static bool IsWordChar(char c) => char.IsLetterOrDigit(c) || c is '_' or '@';

    private static string ReadWord(string query, ref int i)
    {
        var start = i;
        // Metadata names have dashes inside: @metadata.@last-modified, @nested-object-types.
        var metadata = i < query.Length && query[i] == '@';
        while (i < query.Length && (IsWordChar(query[i]) || (metadata && query[i] == '-' && i + 1 < query.Length && IsWordChar(query[i + 1]))))
        {
            i++;
        }
        return query[start..i];
    }

    private static string ReadNumber(string query, ref int i)
    {
        var start = i;
        if (query[i] == '-')
        {
            i++;
        }
        while (i < query.Length && (char.IsAsciiDigit(query[i]) || query[i] is '.' or 'e' or 'E' || ((query[i] is '+' or '-') && query[i - 1] is 'e' or 'E')))
        {
            i++;
        }
        var text = query[start..i];
        if (!double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) || !double.IsFinite(value))
        {
            throw new InvalidQueryException(query, start, $"'{text}' is not a number.");
        }
        return text;
    }

    private static string ReadString(string query, ref int i)
    {
        var quote = query[i];
        var start = i++;
        var value = new StringBuilder();
        while (true)
        {
            if (i >= query.Length)
            {
                throw new InvalidQueryException(query, start, $"the string starting here has no closing {quote}.");
            }
            var c = query[i++];
            if (c == quote)
            {
                return value.ToString();
            }
            if (c == '\\')
            {
                if (i >= query.Length)
                {
                    throw new InvalidQueryException(query, start, $"the string starting here has no closing {quote}.");
                }
                var escaped = query[i++];
                switch (escaped)
                {
                    case 'n':
                        value.Append('\n');
                        break;
                    case 't':
                        value.Append('\t');
                        break;
                    case 'r':
                        value.Append('\r');
                        break;
                    case 'u' when i + 4 <= query.Length && ushort.TryParse(query.AsSpan(i, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out var code):
                        value.Append((char)code);
                        i += 4;
                        break;
                    case 'u':
                        throw new InvalidQueryException(query, i - 2, "'\\u' must be followed by four hex digits.");
                    default:
                        value.Append(escaped);
                        break;
                }
            }
            else
            {
                value.Append(c);
            }
            if (value.Length > MaxStringLength)
            {
                throw new InvalidQueryException(query, start, $"the string starting here is longer than {MaxStringLength:N0} characters.");
            }
        }
    }
}
