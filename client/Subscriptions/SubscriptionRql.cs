using System.Linq.Expressions;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Queries;
using Jackdaw.Client.Queries.Linq;

namespace Jackdaw.Client.Subscriptions;

/// <summary>
/// The RQL of <c>CreateAsync&lt;T&gt;(predicate)</c>: the predicate goes through the queries' own
/// <see cref="WhereTranslator"/>, which names every value <c>$p0</c>, <c>$p1</c>...; a subscription has
/// no parameters, so each is then written into the text as a literal, serialized as the documents'
/// serializer writes it (enums as strings, ISO dates) and quoted as the server's tokenizer reads it back.
/// </summary>
internal static class SubscriptionRql
{
    public static string For<T>(Expression<Func<T, bool>>? predicate, DocumentConventions conventions)
    {
        var from = "from " + Rql.Quote(conventions.GetEntityTypeInfo(typeof(T)).Collection);
        if (predicate is null)
        {
            return from;
        }

        var fields = new FieldPathResolver(conventions);
        var parameters = new QueryParameterList();
        fields.Bind(predicate.Parameters[0], FieldPath.Root);
        var condition = new WhereTranslator(fields, parameters).Translate(predicate.Body);
        return condition.Kind switch
        {
            ConditionKind.Always => from,
            ConditionKind.Never => throw new NotSupportedException($"The predicate '{predicate}' is false whatever the document; such a subscription would never deliver anything."),
            _ => from + " where " + InlineParameters(condition.Text, parameters.Values, conventions.SerializerOptions),
        };
    }

    /// <summary>
    /// Replaces each <c>$name</c> outside quoted text by its value's literal. The translator quotes
    /// field names that are not plain identifiers, so a <c>$</c> inside quotes is part of a name.
    /// </summary>
    internal static string InlineParameters(string rql, IReadOnlyList<KeyValuePair<string, object?>> parameters, JsonSerializerOptions options)
    {
        var values = parameters.ToDictionary(p => p.Key, p => p.Value, StringComparer.Ordinal);
        var builder = new StringBuilder(rql.Length + 16);
        var i = 0;
        while (i < rql.Length)
        {
            var c = rql[i];
            if (c is '\'' or '"')
            {
                var start = i++;
                while (i < rql.Length && rql[i] != c)
                {
                    i += rql[i] == '\\' ? 2 : 1;
                }

                i = Math.Min(i + 1, rql.Length);
                builder.Append(rql, start, i - start);
                continue;
            }

            if (c == '$')
            {
                var start = ++i;
                while (i < rql.Length && (char.IsLetterOrDigit(rql[i]) || rql[i] == '_'))
                {
                    i++;
                }

                var name = rql[start..i];
                if (!values.TryGetValue(name, out var value))
                {
                    throw new InvalidOperationException($"The translated condition '{rql}' names a parameter ${name} it has no value for.");
                }

                var inList = builder.Length > 0 && builder[^1] == '(' && i < rql.Length && rql[i] == ')';
                AppendLiteral(builder, value is null ? default : JsonSerializer.SerializeToElement(value, value.GetType(), options), inList, rql);
                continue;
            }

            builder.Append(c);
            i++;
        }

        return builder.ToString();
    }

    private static void AppendLiteral(StringBuilder builder, JsonElement value, bool inList, string rql)
    {
        switch (value.ValueKind)
        {
            case JsonValueKind.Undefined or JsonValueKind.Null:
                builder.Append("null");
                return;
            case JsonValueKind.String:
                Rql.AppendQuoted(builder, value.GetString()!);
                return;
            case JsonValueKind.Number:
                // JSON's number text (-12, 3.5, 1E+20) is also RQL's.
                builder.Append(value.GetRawText());
                return;
            case JsonValueKind.True:
                builder.Append("true");
                return;
            case JsonValueKind.False:
                builder.Append("false");
                return;
            case JsonValueKind.Array when inList:
                if (value.GetArrayLength() == 0)
                {
                    throw new NotSupportedException($"'{rql}': the list is empty, so nothing would ever match; RQL has no empty 'in ()'.");
                }

                var first = true;
                foreach (var item in value.EnumerateArray())
                {
                    if (!first)
                    {
                        builder.Append(", ");
                    }

                    first = false;
                    AppendLiteral(builder, item, inList: false, rql);
                }

                return;
            default:
                throw new NotSupportedException($"'{rql}': a value that serializes to a JSON {value.ValueKind} cannot be written into a subscription's RQL (a subscription has no parameters); compare fields with strings, numbers, booleans, dates or lists of them.");
        }
    }
}
