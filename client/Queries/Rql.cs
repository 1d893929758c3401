using System.Text;

namespace Jackdaw.Client.Queries;

/// <summary>
/// Names and strings written into RQL text so the server's tokenizer reads them back unchanged: a
/// plain identifier (letters, digits, <c>_</c>, <c>@</c>, not starting with a digit, not a keyword)
/// as it is, anything else in single quotes with <c>\</c> and <c>'</c> escaped.
/// </summary>
internal static class Rql
{
    // Words the parser gives a meaning to somewhere in a query; a field named like one is quoted.
    private static readonly HashSet<string> Keywords = new(StringComparer.OrdinalIgnoreCase)
    {
        "from", "index", "as", "where", "and", "or", "not", "in", "all", "between", "order", "by", "asc", "ascending",
        "desc", "descending", "select", "include", "limit", "offset", "true", "false", "null", "id", "search",
        "startsWith", "endsWith", "exists", "exact", "score", "long", "double", "alphaNumeric", "string",
    };

    public static string Quote(string text)
    {
        var builder = new StringBuilder(text.Length + 2);
        AppendQuoted(builder, text);
        return builder.ToString();
    }

    public static void AppendQuoted(StringBuilder builder, string text)
    {
        builder.Append('\'');
        foreach (var c in text)
        {
            if (c is '\\' or '\'')
            {
                builder.Append('\\');
            }

            builder.Append(c);
        }

        builder.Append('\'');
    }

    /// <summary>A field name or alias: bare when the tokenizer reads it as one identifier, else quoted.</summary>
    public static void AppendName(StringBuilder builder, string name)
    {
        if (IsPlainIdentifier(name))
        {
            builder.Append(name);
        }
        else
        {
            AppendQuoted(builder, name);
        }
    }

    public static bool IsPlainIdentifier(string name)
    {
        if (name.Length == 0 || char.IsDigit(name[0]) || Keywords.Contains(name))
        {
            return false;
        }

        foreach (var c in name)
        {
            if (!char.IsLetterOrDigit(c) && c is not ('_' or '@'))
            {
                return false;
            }
        }

        return true;
    }
}
